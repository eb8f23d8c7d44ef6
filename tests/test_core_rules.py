"""The five core patterns: what must be flagged, what must not, and how sure we say we are."""

from __future__ import annotations

import pytest

from syncllint.diagnostics import Confidence, Severity
from tests.conftest import codes, lint


def flagged(source: str, code: str) -> list[Confidence]:
    return [d.confidence for d in lint(source) if d.code == code]


@pytest.mark.parametrize(
    ("source", "code", "confidence"),
    [
        ("import torch\nx = torch.zeros(3, device='cuda')\nx.item()", "SYNC101", Confidence.HIGH),
        ("import torch as th\nx = th.randn(3).cuda()\nx.sum().item()", "SYNC101", Confidence.HIGH),
        ("import torch\nx = torch.ones(3).to('cuda:1')\nx.max().item()", "SYNC101", Confidence.HIGH),
        ("import torch\ndef f(t: torch.Tensor):\n    return t.item()", "SYNC101", Confidence.MEDIUM),
        ("import torch\ndef f(t):\n    return t.item()", "SYNC101", Confidence.MEDIUM),
        ("def f(t):\n    return t.item()", "SYNC101", Confidence.LOW),
        ("import torch\nclass M(torch.nn.Module):\n    def forward(self, h):\n        return h.mean().item()", "SYNC101", Confidence.MEDIUM),
        ("import torch\nclass B:\n    def __init__(self):\n        self.lens = torch.zeros(4, device='cuda')\n    def step(self):\n        return self.lens.tolist()", "SYNC102", Confidence.HIGH),
        ("import torch\nx_gpu = get()\nx_gpu.tolist()", "SYNC102", Confidence.HIGH),
        ("import torch\nwith torch.device('cuda'):\n    x = torch.zeros(3)\nx.item()", "SYNC101", Confidence.HIGH),
        ("import torch\ntorch.set_default_device('cuda')\nx = torch.zeros(3)\nx.item()", "SYNC101", Confidence.HIGH),
        ("import torch\nx = torch.zeros(3, device='cuda')\nx.cpu()", "SYNC103", Confidence.HIGH),
        ("import torch\nx = torch.zeros(3, device='cuda')\nx.to('cpu')", "SYNC103", Confidence.HIGH),
        ("import torch\nx = torch.zeros(3, device='cuda')\nx.to(torch.device('cpu'))", "SYNC103", Confidence.HIGH),
        ("import torch\nx = torch.zeros(3, device='cuda')\nx.to(device='cpu', non_blocking=False)", "SYNC103", Confidence.HIGH),
        ("import torch\ntorch.tensor([1, 2], device='cuda')", "SYNC201", Confidence.HIGH),
        ("import torch\ntorch.tensor(3, device='cuda')", "SYNC201", Confidence.HIGH),
        ("from torch import tensor\ntensor([1, 2], device='cuda')", "SYNC201", Confidence.HIGH),
        ("import torch\nimport numpy as np\ntorch.as_tensor(np.arange(3), device='cuda')", "SYNC201", Confidence.HIGH),
        ("import torch\ndef f(lst, device):\n    return torch.tensor(lst, device=device)", "SYNC201", Confidence.MEDIUM),
        ("import torch\nx = torch.zeros(3, device='cuda')\nx.new_tensor([1, 2])", "SYNC201", Confidence.HIGH),
        ("import torch\nx = torch.zeros(3, device='cuda')\nm = x > 0\nx[m]", "SYNC301", Confidence.HIGH),
        ("import torch\nx = torch.zeros(3, device='cuda')\nx[x > 0]", "SYNC301", Confidence.HIGH),
        ("import torch\nx = torch.zeros(3, 3, device='cuda')\nm = x[0].isnan()\nx[:, m]", "SYNC301", Confidence.HIGH),
        ("import torch\ndef f(grad: torch.Tensor, state):\n    return grad[state['mask']]", "SYNC301", Confidence.MEDIUM),
        ("import torch\ndef f(grad: torch.Tensor, state):\n    return grad[state['mask_idx']]", "SYNC301", None),
        ("import torch\nx = torch.zeros(3, device='cuda')\nm = x > 0\nx[m] = x.max()", "SYNC401", Confidence.HIGH),
        ("import torch\nx = torch.zeros(3, device='cuda')\nm = x > 0\ny = torch.ones(3, device='cuda')\nx[m] = y[m]", "SYNC401", Confidence.HIGH),
    ],
)
def test_flags_with_confidence(source: str, code: str, confidence: Confidence | None) -> None:
    assert flagged(source, code) == ([] if confidence is None else [confidence])


@pytest.mark.parametrize(
    "source",
    [
        # numpy and Python values
        "import numpy as np\na = np.zeros(3)\na.tolist()\na.sum().item()",
        "import numpy as np\ndef f(a: np.ndarray):\n    return a.tolist()",
        "lst = [1, 2]\nlst.copy()",
        "import torch\nd = {'a': 1}\nfor k, v in d.items():\n    pass",
        # host tensors
        "import torch\nx = torch.zeros(3)\nx.item()\nx.tolist()\nx.cpu()",
        "import torch\nx = torch.zeros(3, device='cpu')\nx.item()",
        "import torch\nx = torch.zeros(3, device=torch.device('cpu'))\nx.tolist()",
        "import torch\ny = torch.zeros(3, device='cuda')\nx = y.cpu()  # noqa: SYNC103\nx.item()",
        "import torch\nx = torch.empty(3, pin_memory=True)\nx.tolist()",
        "import torch\nimport numpy as np\nx = torch.from_numpy(np.zeros(3))\nx.item()",
        "import torch\ndef f(seq_lens_cpu, positions_np, block_host):\n    return seq_lens_cpu.tolist(), positions_np.tolist(), block_host.item()",
        "import torch\nclass R:\n    def step(self):\n        return self.input_ids_cpu[:4].tolist()",
        "import torch\ndef f(n: int, xs: list[int]):\n    return n, xs",
        # non-syncing variants of the core idioms (measured)
        "import torch\nx = torch.zeros(3, device='cuda')\ny = x.to('cpu', non_blocking=True)",
        "import torch\nx = torch.zeros(3, device='cuda')\nm = x > 0\nx[m] = 0.0\nx[m] = -1",
        "import torch\nx = torch.zeros(3, device='cuda')\nidx = torch.randint(0, 3, (2,), device='cuda')\nx[idx]",
        "import torch\nx = torch.zeros(3, device='cuda')\nm = torch.tensor([True, False, True])\nx[m]",
        "import torch\ntorch.tensor([1, 2], device='cpu')\ntorch.tensor([1, 2])\ntorch.as_tensor([1, 2])",
        "import torch\nx = torch.zeros(3, device='cuda')\ntorch.as_tensor(x, device='cuda')\ntorch.tensor(x)",
        "import torch\nx = torch.zeros(3, device='cuda')\ntorch.tensor([1, 2], pin_memory=True).to('cuda', non_blocking=True)",
        "import torch\nz = torch.zeros(16, device='cuda')\nf = torch.full((16,), 5, device='cuda')",
        # things that are not tensors at all
        "class A:\n    def item(self):\n        return 1\n    def f(self):\n        return self.item()",
        "import torch\nclass A(Base):\n    def tolist(self):\n        return super().tolist()",
    ],
)
def test_never_flags_host_data(source: str) -> None:
    assert [(d.code, d.start.row) for d in lint(source)] == []


def test_default_min_confidence_hides_low() -> None:
    source = "def f(t):\n    return t.item()\n"
    assert codes(source, min_confidence=Confidence.MEDIUM) == []
    assert codes(source) == ["SYNC101"]


def test_reassignment_changes_inference() -> None:
    source = "import torch\nx = torch.zeros(3)\nx.item()\nx = x.cuda()\nx.item()\nx = x.cpu()\nx.item()\n"
    assert [(d.code, d.start.row) for d in lint(source)] == [("SYNC202", 4), ("SYNC101", 5), ("SYNC103", 6)]


def test_hot_paths_are_errors() -> None:
    source = (
        "import torch\n"
        "x = torch.zeros(3, device='cuda')\n"
        "def setup():\n    return x.item()\n"
        "def decode_step():\n    return x.item()\n"
        "def once():\n    for i in range(3):\n        x.item()\n"
    )
    found = {d.start.row: (d.severity, d.hot_path) for d in lint(source)}
    assert found == {4: (Severity.WARNING, False), 6: (Severity.ERROR, True), 9: (Severity.ERROR, True)}


def test_each_sync_reported_once_per_span() -> None:
    source = "import torch\nx = torch.zeros(3, device='cuda')\nv = x.item() + x.item()\n"
    assert [(d.start.row, d.start.column) for d in lint(source)] == [(3, 5), (3, 16)]


def test_host_suffix_beats_a_tensor_annotation() -> None:
    source = (
        "import torch\n"
        "def f(seq_lens_cpu: torch.Tensor, q: torch.Tensor):\n"
        "    kv_lens_cpu = torch.minimum(seq_lens_cpu, seq_lens_cpu + 1)\n"
        "    mask_cpu: torch.Tensor | None = None\n"
        "    a = int(kv_lens_cpu[0].item())\n"
        "    b = seq_lens_cpu.tolist()\n"
        "    return q.item()\n"
    )
    assert [(d.code, d.start.row) for d in lint(source)] == [("SYNC101", 7)]


def test_paired_buffer_attributes() -> None:
    source = (
        "import torch\n"
        "class Runner:\n"
        "    def step(self, i):\n"
        "        a = self.query_start_loc.np[i].item()\n"
        "        b = self.input_ids.cpu[:4].tolist()\n"
        "        return self.input_ids.gpu[:4].tolist()\n"
    )
    assert [(d.code, d.start.row, d.confidence) for d in lint(source)] == [("SYNC102", 6, Confidence.HIGH)]


def test_cpu_backend_modules_downgrade_unknown_tensors() -> None:
    from syncllint.config import Settings
    from syncllint.engine import lint_source

    source = "import torch\ndef f(block_nums):\n    return block_nums.max().item()\n"
    default = Settings()
    assert [d.code for d in lint_source(source, "vllm/v1/attention/backends/gpu_attn.py", default).diagnostics] == ["SYNC101"]
    for path in ("vllm/v1/attention/backends/cpu_attn.py", "vllm/ops/cpu/conv.py", "worker_cpu.py"):
        assert lint_source(source, path, default).diagnostics == ()
    explicit = "import torch\nx = torch.zeros(3, device='cuda')\nx.item()\n"
    assert [d.code for d in lint_source(explicit, "cpu_attn.py", default).diagnostics] == ["SYNC101"]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # Annotations are types, not tensor indexing.
        ("import torch\nfrom typing import Optional\ndef f(m: dict[str, torch.Tensor], o: Optional[torch.Tensor] = None):\n    pass", []),
        # A negative default is a Python scalar: the masked write takes the masked_fill path.
        ("import torch\ndef f(x: torch.Tensor, sentinel=-1):\n    m = x > 0\n    x[~m] = sentinel", []),
        # Legacy typed-tensor annotations are tensors; torch.cuda.* ones live on the device.
        ("import numpy as np\nimport torch\ndef f(ids: torch.LongTensor):\n    return ids.item()", [("SYNC101", Confidence.MEDIUM)]),
        ("import torch\ndef f(ids: torch.cuda.LongTensor):\n    return ids.item()", [("SYNC101", Confidence.HIGH)]),
        # transformers: torch imported under a guard still makes the module a torch module.
        ("from x import is_torch_available\nif is_torch_available():\n    import torch\ndef f(t):\n    return t.item()", [("SYNC101", Confidence.MEDIUM)]),
        # A buffer built without device= moves with the module: not a host tensor.
        ("import torch\nclass Q(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.register_buffer('x_max', torch.zeros(1))\n    def step(self):\n        return self.x_max.item()", [("SYNC101", Confidence.MEDIUM)]),
        # A plain field does not (measured: still on the CPU after .cuda()), unless the class
        # rebinds it to data of another place (an observer's running max).
        ("import torch\nclass Q(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.x_max = torch.zeros(1)\n    def step(self):\n        return self.x_max.item()", []),
        ("import torch\nclass Q(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.x_max = torch.zeros(1)\n    def forward(self, x):\n        self.x_max = torch.maximum(self.x_max, x.max())\n        return x\n    def step(self):\n        return self.x_max.item()", [("SYNC101", Confidence.MEDIUM)]),
        # ... unless it is pinned or says device="cpu".
        ("import torch\nclass R:\n    def __init__(self):\n        self.buf = torch.zeros(4, device='cpu')\n    def step(self):\n        return self.buf.item()", []),
        # An unknown .tolist() receiver is hidden by default (low).
        ("import torch\ndef f(grid_thw):\n    return grid_thw.tolist()", [("SYNC102", Confidence.LOW)]),
    ],
)
def test_precision_patterns_from_labelled_code(source: str, expected: list[tuple[str, Confidence]]) -> None:
    assert [(d.code, d.confidence) for d in lint(source)] == expected


def test_mask_named_integer_indices_are_not_masks() -> None:
    source = "import torch\ndef f(x: torch.Tensor, mask_indices, token_mask):\n    return x[:, mask_indices], x[token_mask]\n"
    assert [(d.code, d.start.column) for d in lint(source)] == [("SYNC301", 32)]


def test_a_tuple_of_masked_writes_reads_no_mask_and_is_judged_element_by_element() -> None:
    source = (
        "import torch\n"
        "def f(a: torch.Tensor, b: torch.Tensor, t: torch.Tensor):\n"
        "    a, b = a.cuda(), b.cuda()\n"
        "    (a[a <= 0], b[b <= 0]) = (0.0, 0.0)\n"
        "    (a[a > 1], b[b > 1]) = (t * 2, 0.0)\n"
    )
    found = [(d.code, d.start.row, d.start.column) for d in lint(source) if d.code in ("SYNC301", "SYNC401")]
    # Both targets are writes (no mask read); only the tensor value written through a mask syncs.
    assert found == [("SYNC401", 5, 6)]


def test_moving_a_tensor_of_no_elements_copies_nothing() -> None:
    source = (
        "import torch\n"
        "def summaries(x: torch.Tensor, n: int):\n"
        "    a = torch.empty(0).to(dtype=x.dtype, device=x.device)\n"
        "    b = torch.zeros(0, 4).to(x.device)\n"
        "    c = torch.empty((0,)).cuda()\n"
        "    d = torch.empty(n).to(x.device)\n"
        "    return a, b, c, d\n"
    )
    # A copy of no elements moves nothing (measured: no wait); a size from a variable may not be 0.
    assert [d.start.row for d in lint(source) if d.code == "SYNC202"] == [6]


def test_the_fill_value_of_torch_full_is_no_size() -> None:
    source = (
        "import torch\n"
        "def filled(x: torch.Tensor, shape: tuple[int, ...]):\n"
        "    return torch.full(shape, 0).to(x.device), torch.full((0,), 1.0).to(x.device)\n"
    )
    # ``torch.full(shape, 0)`` holds zeros, not zero elements: its move is a copy.
    assert [(d.start.row, d.start.column) for d in lint(source) if d.code == "SYNC202"] == [(3, 12)]
