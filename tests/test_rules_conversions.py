"""SYNC501-505: implicit conversions of device tensors, and their host look-alikes."""

from __future__ import annotations

import pytest

from tests.conftest import codes, lint

HEADER = "import logging\nimport math\nimport numpy as np\nimport torch\nlogger = logging.getLogger(__name__)\n"


def _codes(body: str, prefix: str) -> list[str]:
    return [c for c in codes(HEADER + body) if c.startswith(prefix)]


MUST_FLAG = [
    # SYNC501: scalar conversions
    ("SYNC501", "x = torch.randn(8, device='cuda')\nn = int(x.sum())\n"),
    ("SYNC501", "x = torch.randn(8, device='cuda')\nv = float(x.mean())\n"),
    ("SYNC501", "x = torch.randn(8, device='cuda')\nb = bool((x > 0).all())\n"),
    ("SYNC501", "x = torch.randn(8, device='cuda')\nc = complex(x[0])\n"),
    ("SYNC501", "x = torch.randn(8, device='cuda')\nr = math.sqrt(x.pow(2).sum())\n"),
    ("SYNC501", "def f(loss: torch.Tensor) -> float:\n    return float(loss)\n"),
    ("SYNC501", "def f(lens_gpu):\n    return int(lens_gpu[0])\n"),
    # SYNC502: conditions
    ("SYNC502", "x = torch.randn(8, device='cuda')\nif x.any():\n    pass\n"),
    ("SYNC502", "x = torch.randn(8, device='cuda')\nif (x > 100).any():\n    pass\n"),
    ("SYNC502", "s = torch.zeros((), device='cuda')\nif s == 3:\n    pass\n"),
    ("SYNC502", "s = torch.zeros((), device='cuda')\nwhile s < 0:\n    s = s + 1\n"),
    ("SYNC502", "x = torch.randn(8, device='cuda')\nassert (x < 100).all()\n"),
    ("SYNC502", "x = torch.randn(8, device='cuda')\ny = not x.all()\n"),
    ("SYNC502", "x = torch.randn(8, device='cuda')\ny = x.any() and 1\n"),
    ("SYNC502", "x = torch.randn(8, device='cuda')\ny = 1 if (x > 100).any() else 0\n"),
    ("SYNC502", "x = torch.randn(8, device='cuda')\nif True and x.isnan().any():\n    pass\nelif x.all():\n    pass\n"),
    ("SYNC502", "def check(mask: torch.Tensor) -> None:\n    if mask:\n        pass\n"),
    ("SYNC502", "def step(hidden):\n    if hidden.isfinite().all():\n        pass\n"),
    ("SYNC502", "x = torch.randn(8, 4, device='cuda')\nkeep = [r for r in x if r.any()]\n"),
    (
        "SYNC502",
        ("class Layer(torch.nn.Module):\n    def forward(self, x, mask=None):\n"
        "        if mask is not None and (mask == 0).all():\n            return x\n        return x\n"),
    ),
    # SYNC503: text
    ("SYNC503", "x = torch.randn(8, device='cuda')\nprint(x)\n"),
    ("SYNC503", "x = torch.randn(8, device='cuda')\ns = str(x[:4])\n"),
    ("SYNC503", "x = torch.randn(8, device='cuda')\ns = repr(x)\n"),
    ("SYNC503", "x = torch.randn(8, device='cuda')\ns = f'loss={x.mean():.3f}'\n"),
    ("SYNC503", "x = torch.randn(8, device='cuda')\ns = format(x.sum())\n"),
    ("SYNC503", "x = torch.randn(8, device='cuda')\ns = '{} tokens'.format(x.sum())\n"),
    ("SYNC503", "x = torch.randn(8, device='cuda')\ns = 'loss %s' % x.mean()\n"),
    ("SYNC503", "x = torch.randn(8, device='cuda')\ns = 'loss %s %d' % (x.mean(), 3)\n"),
    ("SYNC503", "x = torch.randn(8, device='cuda')\nlogger.info('loss %s', x.mean())\n"),
    ("SYNC503", "x = torch.randn(8, device='cuda')\nlogger.info(f'loss {x.mean()}')\n"),
    ("SYNC503", "x = torch.randn(8, device='cuda')\nlogging.warning('bad %s', x)\n"),
    # SYNC504: __index__
    ("SYNC504", "n = torch.ones(4, device='cuda').sum().long()\nfor i in range(n):\n    pass\n"),
    ("SYNC504", "x = torch.randn(8, device='cuda')\ny = x[x.argmax()]\n"),
    ("SYNC504", "x = torch.randn(8, device='cuda')\nlens = torch.ones(4, device='cuda').long()\ny = x[: lens.sum()]\n"),
    ("SYNC504", "x = torch.randn(8, device='cuda')\nn = x.sum().long()\ny = x[1:n]\n"),
    ("SYNC504", "n = torch.ones(4, device='cuda').sum().long()\nslots = [0] * n\n"),
    ("SYNC504", "n = torch.ones(4, device='cuda').sum().long()\nslots = n * [None]\n"),
    ("SYNC504", "lst = [1, 2, 3]\ni = torch.tensor(1).cuda().sum()\nv = lst[i]\n"),
    # SYNC505: builtins that compare
    ("SYNC505", "x = torch.randn(8, device='cuda')\nm = max(x)\n"),
    ("SYNC505", "x = torch.randn(8, device='cuda')\nm = min(x[:4])\n"),
    ("SYNC505", "x = torch.randn(8, device='cuda')\nm = sorted(x)\n"),
    ("SYNC505", "x = torch.randn(8, device='cuda')\nm = any(x > 0)\n"),
    ("SYNC505", "x = torch.randn(8, device='cuda')\nm = all(x > 0)\n"),
    ("SYNC505", "s = torch.zeros((), device='cuda')\nm = max(s, 1)\n"),
]

MUST_NOT_FLAG = [
    # host values in conditions
    "def f(t: torch.Tensor) -> None:\n    if t is None:\n        pass\n",
    "def f(x: torch.Tensor) -> None:\n    if x.shape[0] > 1:\n        pass\n",
    "def f(t: torch.Tensor) -> None:\n    if len(t):\n        pass\n",
    "def f(t: torch.Tensor, mask=None) -> None:\n    if mask is not None and t.dim() == 2:\n        pass\n",
    "def f(tensor: torch.Tensor) -> None:\n    if tensor.numel():\n        pass\n",
    "def f(t: torch.Tensor) -> None:\n    if t.is_cuda:\n        pass\n",
    "def f(some_int: int, flag: bool) -> None:\n    if some_int and flag:\n        pass\n",
    "def f(x):\n    if x:\n        pass\n",  # unknown place: not a finding
    "def f(x):\n    while not x:\n        x = g()\n",
    "def f(t: torch.Tensor) -> None:\n    if t.dtype == torch.bool or t.device.type == 'cpu':\n        pass\n",
    "def f(t: torch.Tensor) -> None:\n    if torch.is_tensor(t) and t.is_contiguous():\n        pass\n",
    "def f(a: torch.Tensor, b: torch.Tensor) -> None:\n    if torch.equal(a, b):\n        pass\n",
    "x = torch.randn(8, device='cuda')\ny = x == 3\n",  # a comparison outside a condition
    "x = torch.randn(8, device='cuda')\nz = (x > 0).any()\n",
    "x = torch.randn(8, device='cuda')\nz = 0 or (x > 0)\n",  # right operand is a value, not tested
    "a = np.zeros(3)\nif a.any():\n    pass\n",
    "a = np.zeros(3)\nif (a > 1).all():\n    pass\n",
    "h = torch.zeros(3)\nif h.any():\n    pass\nn = int(h.sum())\nprint(h)\n",  # host tensor
    "lens_cpu = torch.zeros(3)\nif lens_cpu.max() > 2:\n    pass\n",
    "x = torch.randn(8, device='cuda')\nif x.shape[0] and x.size(0) > 2 and x.ndim:\n    pass\n",
    # a forward parameter is a tensor only by convention: a flag by another name is common
    ("class M(torch.nn.Module):\n    def forward(self, x, use_cache, past_key_values=None, training=False):\n"
    "        if use_cache and past_key_values:\n            pass\n        if training:\n            pass\n"
    "        n = x.size(0)\n        if n > 1:\n            pass\n        return x\n"),
    # conversions of host things
    "n = int('3') + int(2.5) + float(1) + bool(0)\nk = int(np.float32(2))\n",
    "def f(n, m: int) -> int:\n    return int(n) + int(m)\n",
    "x = torch.randn(8, device='cuda')\nk = int(x.shape[0]) + int(x.numel()) + int(len(x))\n",
    "x = torch.randn(8, device='cuda')\nv = float(x.sum().item())\n",  # SYNC101 only
    "x = torch.randn(8, device='cuda')\nb = bool(x.is_cuda)\n",
    # text of host things and metadata
    "x = torch.randn(8, device='cuda')\nprint(x.shape, x.dtype, x.device, len(x))\n",
    "x = torch.randn(8, device='cuda')\nlogger.info('shape %s', tuple(x.shape))\n",
    "n = 3\nprint(f'{n} steps', 'done %d' % n, '{}'.format(n))\n",
    "h = torch.zeros(3)\nprint(h, f'{h}')\n",
    "x = torch.randn(8, device='cuda')\nlogger.info('%d tokens on %s', x.numel(), x.device)\n",
    # indexes and sizes that do not sync
    "x = torch.randn(8, device='cuda')\nidx = torch.arange(4, device='cuda')\ny = x[idx]\n",  # 1-d gather
    "x = torch.randn(8, device='cuda')\ny = x[:4] + x[x.shape[0] - 1]\n",
    "x = torch.randn(8, device='cuda')\nfor i in range(len(x)):\n    pass\n",
    "x = torch.randn(8, device='cuda')\nfor i in range(x.shape[0]):\n    pass\n",
    # ``ndimension()`` is ``dim()`` under another name: a Python int.
    "x = torch.randn(8, 3, device='cuda')\nfor i in range(x.ndimension() - 1):\n    pass\nif x.ndimension() > 1:\n    pass\n",
    "x = torch.randn(8, device='cuda')\nz = x * 2 + [1.0][0]\n",
    "x = torch.randn(8, device='cuda')\nmask = x > 0\nx[mask.sum().item():] = 0\n",  # SYNC101 only
    "x = torch.randn(8, device='cuda')\nz = x * torch.ones(8, device='cuda')\n",
    # builtins measured as not syncing
    "x = torch.randn(8, device='cuda')\na = sum(x)\nb = len(x)\nc = list(x)\nd = tuple(x)\ne = list(zip(x, x))\n",
    "x = torch.randn(8, device='cuda')\nrows = [r * 2 for r in x]\n",
    "lens = [3, 1, 2]\nm = max(lens) + min(lens)\ns = sorted(lens)\na = any(lens)\n",
    "x = torch.randn(8, device='cuda')\nm = max(x.shape[0], 4)\n",
]


@pytest.mark.parametrize(("code", "body"), MUST_FLAG)
def test_must_flag(code: str, body: str) -> None:
    assert code in _codes(body, "SYNC5"), body


@pytest.mark.parametrize("body", MUST_NOT_FLAG)
def test_must_not_flag(body: str) -> None:
    assert _codes(body, "SYNC5") == [], body


def test_one_finding_per_tested_operand() -> None:
    body = "x = torch.randn(8, device='cuda')\nif not x.any() and x.all():\n    pass\n"
    found = [d for d in lint(HEADER + body) if d.code == "SYNC502"]
    assert [(d.start.row, d.start.column) for d in found] == [(7, 8), (7, 20)]


def test_forward_parameter_tested_directly_is_not_a_condition_finding() -> None:
    body = "class M(torch.nn.Module):\n    def forward(self, x):\n        if x:\n            pass\n        return int(x)\n"
    found = [(d.code, d.confidence.label) for d in lint(HEADER + body) if d.code.startswith("SYNC50")]
    assert found == [("SYNC501", "low")]  # a tensor by convention only: hidden by default


def test_device_suffix_alone_is_weak_evidence_for_python_protocols() -> None:
    # ``args.n_gpu`` counts devices: no tensor at all.
    body = (
        "def f(args, x_gpu):\n"
        "    per_device = 8 // max(1, args.scale_gpu)\n"
        "    workers = max(1, args.n_gpu)\n"
        "    return max(x_gpu.sum(), 1)\n"
    )
    found = [(d.code, d.start.row, d.confidence.label) for d in lint(HEADER + body) if d.code.startswith("SYNC5")]
    assert found == [("SYNC505", 7, "low"), ("SYNC505", 9, "high")]


def test_a_flag_beside_a_python_bool_is_not_its_cpu_mirrors_device_half() -> None:
    # ``use_fused`` next to ``use_fused_cpu`` is a mirror pair by name; its value says it is a flag.
    body = (
        "class A(torch.nn.Module):\n"
        "    def __init__(self, cfg, flag_cpu):\n"
        "        self.use_fused = cfg.enable and self.head_dim in (64, 128)\n"
        "        self.use_fused_cpu = flag_cpu\n"
        "    def apply(self, qkv):\n"
        "        use = (self.use_fused and qkv.dtype == torch.bfloat16) or self.use_fused_cpu\n"
        "        if use:\n"
        "            pass\n"
    )
    assert [d.code for d in lint(HEADER + body) if d.code.startswith("SYNC5")] == []


def test_a_starred_unpacking_target_is_a_list() -> None:
    body = (
        "x = torch.randn(8, 4, device='cuda')\n"
        "h, *rest = x.split(2, dim=-1)\n"
        "if rest:\n"
        "    pass\n"
        "if h.sum():\n"
        "    pass\n"
    )
    assert [d.start.row for d in lint(HEADER + body) if d.code == "SYNC502"] == [10]


def test_torch_tensor_of_a_list_name_is_not_zero_dim() -> None:
    body = "ids = [1, 2]\nn = 3\nx = torch.randn(8, device='cuda')\na = x[torch.tensor(ids, device='cuda')]\nb = x[torch.tensor(n, device='cuda')]\n"
    found = [(d.code, d.start.row) for d in lint(HEADER + body) if d.code == "SYNC504"]
    assert found == [("SYNC504", 10)]


def test_debug_logging_is_low_confidence() -> None:
    body = "x = torch.randn(8, device='cuda')\nlogger.debug('%s', x)\nlogger.info('%s', x)\n"
    found = [(d.start.row, d.confidence.label) for d in lint(HEADER + body) if d.code == "SYNC503"]
    assert found == [(7, "low"), (8, "high")]


def test_hot_path_makes_it_an_error() -> None:
    body = "def decode_step(x: torch.Tensor) -> None:\n    if x.any():\n        pass\n"
    (finding,) = [d for d in lint(HEADER + body) if d.code == "SYNC502"]
    assert finding.severity.value == "error"
    assert finding.confidence.label == "medium"


def test_noqa_and_allowed_regions_suppress() -> None:
    body = (
        "from vllm.utils.gpu_sync_debug import gpu_sync_allowed\n"
        "x = torch.randn(8, device='cuda')\n"
        "n = int(x.sum())  # noqa: SYNC501\n"
        "if x.any():  # noqa: SYNC502\n    pass\n"
        "with gpu_sync_allowed():\n    print(x)\n    m = max(x)\n    r = range(x.sum().long())\n"
    )
    assert _codes(body, "SYNC5") == []


def test_noqa_for_another_code_does_not_suppress() -> None:
    body = "x = torch.randn(8, device='cuda')\nn = int(x.sum())  # noqa: SYNC101\n"
    assert _codes(body, "SYNC5") == ["SYNC501"]


def test_error_messages_are_low_confidence() -> None:
    body = (
        "x = torch.randn(8, device='cuda')\n"
        "assert x.dim() == 1, f'bad {x}'\n"
        "if x.dim() != 1:\n"
        "    raise ValueError(f'nan in {x}: ' + str(x))\n"
        "print(f'{x}')\n"
    )
    found = [(d.start.row, d.confidence.label) for d in lint(HEADER + body) if d.code == "SYNC503"]
    assert found == [(7, "low"), (9, "low"), (9, "low"), (10, "high")]
