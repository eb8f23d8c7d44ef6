"""Host data handed on: to helpers, through None defaults, into empty placeholders, from callers' locals."""

from __future__ import annotations

from tests.conftest import codes

HEADER = "import torch\n"


def _codes(body: str) -> list[str]:
    return codes(HEADER + body)


def test_a_function_given_only_host_tensors_computes_on_the_host() -> None:
    body = (
        "from somewhere import softplus_inv, helper\n"
        "def normalize(fn, sigma, x):\n"
        "    gen = torch.Generator(device='cpu').manual_seed(0)\n"
        "    z = torch.randn(1000, generator=gen, dtype=torch.float64)\n"
        "    a = fn(z).pow(2).mean().pow(-0.5).item()\n"
        "    b = softplus_inv(torch.tensor(sigma) ** 2).item()\n"
        "    c = helper(z, 3, scale=0.5).item()\n"
        "    return a, b, c\n"
    )
    assert _codes(body) == []


def test_a_function_given_anything_else_or_named_for_a_move_stays_unknown() -> None:
    body = (
        "from somewhere import helper, to_device, pin_and_copy\n"
        "def step(x, device):\n"
        "    z = torch.zeros(4)\n"
        "    a = helper(z, x).item()\n"  # ``x`` may be device data
        "    b = helper(z, device).item()\n"  # a device the helper may move ``z`` to
        "    c = to_device(z).item()\n"
        "    d = pin_and_copy(z).item()\n"
        "    e = helper(*[z]).item()\n"
        "    return a, b, c, d, e\n"
    )
    assert _codes(body) == ["SYNC101"] * 5


def test_a_none_default_coalesced_with_or_is_a_none_test() -> None:
    body = (
        "from typing import Optional\n"
        "def curve(preds: torch.Tensor, threshold: Optional[torch.Tensor] = None, w: torch.Tensor = None):\n"
        "    threshold = threshold or torch.linspace(0.0, 1.0, 51, device=preds.device)\n"
        "    w = preds.sum()\n"
        "    scale = w or preds.max()\n"  # rebound: ``w`` is a tensor now
        "    return threshold, scale\n"
    )
    assert _codes(body) == ["SYNC502"]


def test_a_none_default_tested_by_and_or_in_a_condition_is_still_a_truth_test() -> None:
    body = (
        "from typing import Optional\n"
        "def gate(mask: Optional[torch.Tensor] = None):\n"
        "    keep = mask and mask.any()\n"
        "    return keep\n"
    )
    assert _codes(body) == ["SYNC502"]


def test_an_empty_placeholder_moves_nothing() -> None:
    body = (
        "class Embed(torch.nn.Module):\n"
        "    def forward(self, x: torch.Tensor):\n"
        "        a = torch.Tensor().to(x.device)\n"
        "        b = torch.FloatTensor().to(x.device)\n"
        "        c = torch.Tensor(x.shape[0]).to(x.device)\n"  # sized: a real copy
        "        return a, b, c\n"
    )
    assert _codes(body) == ["SYNC202"]


def test_a_cpu_device_object_handed_to_a_helper_places_its_data_on_the_host() -> None:
    body = (
        "def _build_batch(device, dtype):\n"
        "    return torch.tensor([0, 3], dtype=torch.long, device=device)\n"
        "def _build_other(device, dtype):\n"
        "    return torch.tensor([0, 3], dtype=torch.long, device=device)\n"
        "def test_energy():\n"
        "    device = torch.device('cpu')\n"
        "    _build_batch(device, torch.float32)\n"
        "def test_other():\n"
        "    device = torch.device('cuda')\n"
        "    _build_other(device, torch.float32)\n"
    )
    assert _codes(body) == ["SYNC201"]  # only the builder a test hands a CUDA device


def test_a_cpu_default_set_only_when_the_caller_gave_none_leaves_the_callers_device() -> None:
    body = (
        "class Generator:\n"
        "    def set_device(self, device=None):\n"
        "        if device is None:\n"
        "            device = torch.device('cpu')\n"
        "        self.make_samplers(device)\n"
        "    def make_samplers(self, device):\n"
        "        self.ratio = torch.as_tensor([0.3, 3.3], device=device)\n"
        "def build(device):\n"
        "    device = torch.device('cpu')\n"
        "    return make(device)\n"
        "def make(device):\n"
        "    return torch.tensor([1, 2], device=device)\n"
    )
    assert _codes(body) == ["SYNC201"]  # the samplers' device is the caller's; ``make``'s is the CPU


def test_nested_empty_data_holds_no_elements() -> None:
    body = (
        "def pack(device):\n"
        "    a = torch.tensor([[]], device=device)\n"
        "    b = torch.tensor(((),), device=device)\n"
        "    c = torch.tensor([[], [1]], device=device)\n"  # one element: a real copy
        "    return a, b, c\n"
    )
    assert _codes(body) == ["SYNC201"]


def test_a_helper_annotated_to_return_a_number_gives_a_python_number() -> None:
    body = (
        "EBITS, MBITS = 8, 23\n"
        "def _n_ones(n: int) -> int:\n"
        "    return (1 << n) - 1\n"
        "def _scale(t) -> torch.Tensor:\n"
        "    return t * 2\n"
        "EXP_BIAS = _n_ones(EBITS - 1)\n"
        "def unpack(x: torch.Tensor, ebits: int, mbits: int) -> torch.Tensor:\n"
        "    result = x.to(torch.int32)\n"
        "    denormal = x == 0\n"
        "    biased = 1 - _n_ones(ebits - 1) + EXP_BIAS\n"
        "    result[denormal] = (biased - mbits) << MBITS\n"
        "    result[denormal] = _scale(x)\n"
        "    return result\n"
    )
    assert _codes(body) == ["SYNC401"]  # only the tensor the other helper returns


def test_returns_that_show_a_tensor_outweigh_a_number_annotation() -> None:
    body = (
        "def max_allocations() -> int:\n"
        "    return torch.tensor([torch.cuda.max_memory_allocated(i) for i in range(2)])\n"
        "def has_kernel() -> bool:\n"
        "    return hasattr(torch.ops, 'fused')\n"
        "def pick(qkv, fused):\n"
        "    least = torch.argmin(max_allocations()).item()\n"
        "    use = (fused and has_kernel()) and qkv.dtype == torch.bfloat16\n"
        "    if use:\n"
        "        return least\n"
    )
    assert _codes(body) == []
