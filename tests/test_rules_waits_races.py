"""SYNC104 (numpy views), SYNC701-703 (explicit waits) and SYNC801 (early reads of async copies)."""

from __future__ import annotations

import pytest

from syncllint.diagnostics import Severity
from tests.conftest import codes, lint

HEADER = "import numpy as np\nimport torch\n"


def _codes(body: str, prefix: str, **kwargs: object) -> list[str]:
    return [c for c in codes(HEADER + body, **kwargs) if c.startswith(prefix)]


# -- SYNC104 ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "body",
    [
        "x = torch.randn(8, device='cuda')\na = x.numpy(force=True)\n",
        "def f(x: torch.Tensor):\n    return x.detach().numpy(force=True)\n",
        "x = torch.randn(8, device='cuda')\na = np.asarray(x)\n",
        "x = torch.randn(8, device='cuda')\na = np.array(x * 2)\n",
        "x = torch.randn(8, device='cuda')\na = x.numpy()\n",
        "x = torch.randn(8).cuda()\na = np.ascontiguousarray(x)\n",
    ],
)
def test_numpy_of_device_tensor_is_flagged(body: str) -> None:
    assert _codes(body, "SYNC104") == ["SYNC104"]


@pytest.mark.parametrize(
    "body",
    [
        "x = torch.randn(8, device='cuda')\na = x.cpu().numpy()\n",  # SYNC103 on the .cpu() only
        "x = torch.randn(8, device='cuda')\na = np.asarray(x.cpu())\n",
        "h = torch.zeros(8)\na = h.numpy()\nb = np.asarray(h)\nc = h.numpy(force=True)\n",
        "def f(x: torch.Tensor):\n    return x.numpy()\n",  # runs only if x is on the host
        "def f(x):\n    return np.asarray(x)\n",
        "a = np.asarray([1, 2, 3])\nb = np.array(a)\n",
    ],
)
def test_numpy_of_host_data_is_not_flagged(body: str) -> None:
    assert _codes(body, "SYNC104") == []


def test_cpu_then_numpy_is_reported_once() -> None:
    body = "x = torch.randn(8, device='cuda')\na = x.cpu().numpy()\n"
    assert _codes(body, "SYNC1") == ["SYNC103"]


# -- SYNC7xx ------------------------------------------------------------------------------------
WAITS = (
    "from torch.cuda import synchronize\n"
    "x = torch.randn(8, device='cuda')\n"
    "torch.cuda.synchronize()\n"  # row 5
    "synchronize()\n"  # row 6
    "torch.cuda.current_stream().synchronize()\n"  # row 7
    "side = torch.cuda.Stream()\n"
    "side.synchronize()\n"  # row 9
    "done = torch.cuda.Event()\n"
    "done.record()\n"
    "done.synchronize()\n"  # row 12
    "done.wait()\n"
    "done.query()\n"
    "torch.cuda.current_stream().wait_event(done)\n"
)


def test_explicit_waits_are_off_by_default() -> None:
    assert _codes(WAITS, "SYNC7", select=None) == []


def test_explicit_waits_with_select() -> None:
    found = [(d.code, d.start.row, d.severity) for d in lint(HEADER + WAITS, select=("SYNC7",))]
    assert found == [
        ("SYNC701", 5, Severity.INFO),
        ("SYNC701", 6, Severity.INFO),
        ("SYNC702", 7, Severity.INFO),
        ("SYNC702", 9, Severity.INFO),
        ("SYNC703", 12, Severity.INFO),
    ]


def test_extend_select_turns_them_on_next_to_the_defaults() -> None:
    found = set(_codes(WAITS, "SYNC", select=None, extend_select=("SYNC7",)))
    assert found == {"SYNC701", "SYNC702", "SYNC703"}


def test_waits_found_through_attributes_and_names() -> None:
    body = (
        "class Runner:\n"
        "    def __init__(self):\n"
        "        self.copy_stream = torch.cuda.Stream()\n"
        "        self.ready = torch.cuda.Event()\n"
        "    def step(self, done_event):\n"
        "        self.copy_stream.synchronize()\n"
        "        self.ready.synchronize()\n"
        "        done_event.synchronize()\n"
        "        self.lock.synchronize()\n"  # neither a stream nor an event
    )
    assert _codes(body, "SYNC7", select=("SYNC7",)) == ["SYNC702", "SYNC703", "SYNC703"]


@pytest.mark.parametrize(
    "wait",
    [
        "torch.npu.synchronize()",  # an out-of-tree backend's module (torch_npu)
        "get_torch_device().synchronize()",  # verl's accessor of the running accelerator's module
        "torch.get_device_module().synchronize()",
        "device_module = torch._utils._get_device_module(kind)\n    device_module.synchronize()",
        # A variable named for the accelerator: Ultralytics' ``get_torch_device_backend(device)``,
        # DeepSpeed's profiler entry ``profile["accelerator"]``.
        "accelerator = backend_of(kind)\n    accelerator.synchronize()",
        "profile_accelerator = kind['accelerator']\n    profile_accelerator.synchronize()",
    ],
)
def test_a_wait_on_the_running_accelerators_module_is_a_device_wait(wait: str) -> None:
    body = f"from verl.utils.device import get_torch_device\n\ndef flush(kind):\n    {wait}\n"
    assert _codes(body, "SYNC7", select=("SYNC7",)) == ["SYNC701"]


def test_a_device_module_is_not_a_stream_or_an_event_by_other_names() -> None:
    body = "def flush(self):\n    self.device_manager.synchronize()\n    get_device_name().synchronize()\n"
    assert _codes(body, "SYNC7", select=("SYNC7",)) == []


def test_hot_path_does_not_raise_wait_severity() -> None:
    body = "def decode_step():\n    for _ in range(3):\n        torch.cuda.synchronize()\n"
    (finding,) = lint(HEADER + body, select=("SYNC701",))
    assert finding.severity is Severity.INFO


# -- SYNC801 ------------------------------------------------------------------------------------
RACES = [
    "x = torch.randn(8, device='cuda')\nh = x.to('cpu', non_blocking=True)\nv = h[0]\n",
    "x = torch.randn(8, device='cuda')\nh = x.to('cpu', non_blocking=True)\nv = h.tolist()\n",
    "x = torch.randn(8, device='cuda')\nh = x.to('cpu', non_blocking=True)\nv = h.item()\n",
    "x = torch.randn(8, device='cuda')\nh = x.to('cpu', non_blocking=True)\nv = h.numpy()\nw = v.sum()\n",
    "x = torch.randn(8, device='cuda')\nh = x.to('cpu', non_blocking=True)\nprint(h)\n",
    "x = torch.randn(8, device='cuda')\nh = x.to('cpu', non_blocking=True)\ns = f'{h}'\n",
    "x = torch.randn(8, device='cuda')\nh = x.to('cpu', non_blocking=True)\ny = h + 1\n",
    "x = torch.randn(8, device='cuda')\nh = x.to(device='cpu', non_blocking=True)\nif h.sum() > 0:\n    pass\n",
    "x = torch.randn(8, device='cuda')\nh = x.to(torch.device('cpu'), non_blocking=True)\nn = int(h[0])\n",
    "x = torch.randn(8, device='cuda')\ns = x.to('cpu', non_blocking=True).sum()\n",
    "x = torch.randn(8, device='cuda')\nx = x.to('cpu', non_blocking=True)\nv = x.tolist()\n",
    "x = torch.randn(8, device='cuda')\nh = x.to('cpu', non_blocking=True)\nalias = h\nv = alias.tolist()\n",
    "x = torch.randn(8, device='cuda')\nh = x.to('cpu', non_blocking=True)\nh += 1\n",
    "x = torch.randn(8, device='cuda')\nh = x.to('cpu', non_blocking=True)\nv = np.asarray(h)\n",
    # copy_ into host memory
    "x = torch.randn(8, device='cuda')\nbuf = torch.empty(8, pin_memory=True)\nbuf.copy_(x, non_blocking=True)\nv = buf.tolist()\n",
    "def f(ids: torch.Tensor, ids_cpu):\n    ids_cpu.copy_(ids, non_blocking=True)\n    return ids_cpu[:4].tolist()\n",
    # a GPU-side wait does not make the host read safe
    "x = torch.randn(8, device='cuda')\nh = x.to('cpu', non_blocking=True)\ne = torch.cuda.Event()\ne.record()\ne.wait()\nv = h[0]\n",
    # a second asynchronous copy, or a blocking copy to the device, does not wait for the first
    "x = torch.randn(8, device='cuda')\nh = x.to('cpu', non_blocking=True)\ng = x.to('cpu', non_blocking=True)\nv = h[0]\n",
    "x = torch.randn(8, device='cuda')\nh = x.to('cpu', non_blocking=True)\ny = x.to('cuda:1')\nv = h[0]\n",
    (
        "class Runner:\n"
        "    def __init__(self):\n"
        "        self.out_cpu = torch.empty(8, dtype=torch.long, pin_memory=True)\n"
        "    def sample(self, logits: torch.Tensor):\n"
        "        self.out_cpu.copy_(logits.argmax(dim=-1), non_blocking=True)\n"
        "        return self.out_cpu.tolist()\n"
    ),
]

SAFE = [
    "x = torch.randn(8, device='cuda')\nh = x.to('cpu', non_blocking=True)\ntorch.cuda.synchronize()\nv = h[0]\n",
    (
        "x = torch.randn(8, device='cuda')\nh = x.to('cpu', non_blocking=True)\ne = torch.cuda.Event()\n"
        "e.record()\ne.synchronize()\nv = h.tolist()\n"
    ),
    "x = torch.randn(8, device='cuda')\nh = x.to('cpu', non_blocking=True)\ntorch.cuda.current_stream().synchronize()\nv = h[0]\n",
    # metadata and stream-ordered uses do not read the data
    "x = torch.randn(8, device='cuda')\nh = x.to('cpu', non_blocking=True)\nn = h.shape[0] + h.numel() + len(h)\n",
    "x = torch.randn(8, device='cuda')\nh = x.to('cpu', non_blocking=True)\nback = h.to('cuda', non_blocking=True)\n",
    "x = torch.randn(8, device='cuda')\nh = x.to('cpu', non_blocking=True)\nh = torch.zeros(8)\nv = h[0]\n",  # rebound
    # a blocking read of a device tensor drains the stream first
    "x = torch.randn(8, device='cuda')\nh = x.to('cpu', non_blocking=True)\nn = x.sum().item()\nv = h[0]\n",
    (  # torchtitan's token dispatcher: a blocking copy to the host of other data, then both reads
        "x = torch.randn(8, device='cuda')\nh = x.to(torch.device('cpu'), non_blocking=True)\n"
        "g = x.sum().to(torch.device('cpu'), non_blocking=False)\nv = h.tolist()\n"
    ),
    "x = torch.randn(8, device='cuda')\nh = x.to('cpu', non_blocking=True)\ng = (x + 1).to(device='cpu')\nv = h[0]\n",
    # blocking copies and host->host copies are not asynchronous reads
    "x = torch.randn(8, device='cuda')\nh = x.to('cpu')\nv = h[0]\n",
    "a = torch.zeros(8)\nb = torch.empty(8)\nb.copy_(a, non_blocking=True)\nv = b[0]\n",
    "x = torch.randn(8, device='cuda')\ny = torch.empty(8, device='cuda')\ny.copy_(x, non_blocking=True)\nv = y[0]\n",
    # another function: no flow information, no finding
    (
        "class Runner:\n"
        "    def __init__(self):\n"
        "        self.out_cpu = torch.empty(8, dtype=torch.long, pin_memory=True)\n"
        "    def sample(self, logits: torch.Tensor):\n"
        "        self.out_cpu.copy_(logits.argmax(dim=-1), non_blocking=True)\n"
        "    def read(self):\n"
        "        return self.out_cpu.tolist()\n"
    ),
    "def f(x: torch.Tensor):\n    h = x.to('cpu', non_blocking=True)\n    def g():\n        return h[0]\n    return g\n",
]


@pytest.mark.parametrize("body", RACES)
def test_early_read_is_a_race(body: str) -> None:
    assert "SYNC801" in _codes(body, "SYNC8")


@pytest.mark.parametrize("body", SAFE)
def test_reads_after_a_host_wait_or_of_other_data_are_fine(body: str) -> None:
    assert _codes(body, "SYNC8") == []


def test_race_message_says_it_is_not_a_sync() -> None:
    (finding,) = lint(HEADER + RACES[0], select=("SYNC801",))
    assert "race" in finding.message and "not a sync" in finding.message
    assert (finding.start.row, finding.start.column) == (5, 5)


def test_race_is_suppressed_by_noqa() -> None:
    body = "x = torch.randn(8, device='cuda')\nh = x.to('cpu', non_blocking=True)\nv = h[0]  # noqa: SYNC801\n"
    assert _codes(body, "SYNC8") == []


def test_copy_in_a_returning_branch_does_not_reach_later_code() -> None:
    body = (
        "class Buffer:\n"
        "    def copy_to_cpu(self, n=None):\n"
        "        if n is None:\n"
        "            return self.buf_cpu.copy_(self.buf_gpu, non_blocking=True)\n"
        "        return self.buf_cpu[:n].copy_(self.buf_gpu[:n], non_blocking=True)\n"
    )
    assert _codes(body, "SYNC8") == []


def test_wait_in_a_returning_branch_does_not_cover_later_reads() -> None:
    body = (
        "def f(x: torch.Tensor, early: bool):\n"
        "    h = x.to('cpu', non_blocking=True)\n"
        "    if early:\n"
        "        torch.cuda.synchronize()\n"
        "        return h.tolist()\n"
        "    return h.tolist()\n"
    )
    found = [(d.code, d.start.row) for d in lint(HEADER + body) if d.code == "SYNC801"]
    assert found == [("SYNC801", 8)]


def test_numpy_view_of_a_pending_copy_is_handed_on_not_read() -> None:
    body = (
        "def async_copy_to_np(x: torch.Tensor) -> np.ndarray:\n"
        "    return x.to('cpu', non_blocking=True, copy=True).numpy()\n"
        "def early(x: torch.Tensor) -> float:\n"
        "    a = x.to('cpu', non_blocking=True).numpy()\n"
        "    return a[0]\n"
    )
    found = [(d.code, d.start.row) for d in lint(HEADER + body) if d.code == "SYNC801"]
    assert found == [("SYNC801", 7)]


def test_metadata_and_views_of_a_pending_copy_are_no_reads_but_a_read_of_the_view_is() -> None:
    source = """\
    import torch

    def stage(frames: torch.Tensor):
        frames_cpu = frames.to("cpu", non_blocking=True)
        if frames_cpu.dim() == 4:
            frames_cpu = frames_cpu.squeeze(0)
        first = frames_cpu.unsqueeze(0)
        return first.sum().item()
    """
    assert [(d.code, d.start.row) for d in lint(source, select=("SYNC801",))] == [("SYNC801", 8)]
