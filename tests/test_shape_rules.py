"""SYNC302-SYNC309: data-dependent shapes and tensors used as sizes, on realistic snippets."""

from __future__ import annotations

import pytest

from syncllint.diagnostics import Applicability, Confidence
from tests.conftest import lint

PRELUDE = """\
import numpy as np
import torch
import torch.nn.functional as F

dev = torch.device("cuda")
x = torch.randn(1024, device=dev)
mask = x > 0
cls = torch.randint(0, 10, (64,), device=dev)
rep = torch.randint(0, 3, (64,), device=dev)
n = cls.max()
cpu = torch.randn(1024)
cpu_n = torch.tensor(16)
arr = np.arange(16)
"""


def found(body: str, min_confidence: Confidence = Confidence.MEDIUM) -> list[str]:
    return [d.code for d in lint(PRELUDE + body, min_confidence=min_confidence)]


FLAGGED = [
    ("SYNC302", "torch.nonzero(mask)"),
    ("SYNC302", "mask.nonzero()"),
    ("SYNC302", "mask.nonzero(as_tuple=True)"),
    ("SYNC302", "torch.argwhere(mask)"),
    ("SYNC302", "mask.argwhere()"),
    ("SYNC302", "torch.where(mask)"),
    ("SYNC302", "(rows,) = torch.where(x > 1.0)"),
    ("SYNC302", "torch.nonzero(mask, as_tuple=True)"),
    ("SYNC303", "torch.masked_select(x, mask)"),
    ("SYNC303", "x.masked_select(mask)"),
    ("SYNC304", "torch.unique(cls)"),
    ("SYNC304", "cls.unique(return_counts=True)"),
    ("SYNC304", "torch.unique(cls, sorted=False, return_inverse=True)"),
    ("SYNC304", "torch.unique_consecutive(cls)"),
    ("SYNC304", "cls.unique_consecutive()"),
    ("SYNC305", "torch.repeat_interleave(x[:64], rep)"),
    ("SYNC305", "x[:64].repeat_interleave(rep, dim=0)"),
    ("SYNC305", "torch.repeat_interleave(rep)"),
    ("SYNC306", "torch.bincount(cls)"),
    ("SYNC306", "torch.bincount(cls, minlength=10)"),
    ("SYNC306", "cls.bincount(weights=x[:64])"),
    ("SYNC307", "F.one_hot(cls)"),
    ("SYNC307", "F.one_hot(cls, -1)"),
    ("SYNC307", "torch.nn.functional.one_hot(cls, num_classes=-1)"),
    ("SYNC308", "torch.histc(x, bins=10)"),
    ("SYNC308", "x.histc(10)"),
    ("SYNC308", "torch.histc(x, 10, 0, 0)"),
    ("SYNC308", "x.histc(bins=10, min=0.0, max=0.0)"),
    ("SYNC309", "torch.arange(n, device=dev)"),
    ("SYNC309", "torch.arange(0, n, device=dev)"),
    ("SYNC309", "torch.arange(start=0, end=n)"),
    ("SYNC309", "torch.zeros(n, device=dev)"),
    ("SYNC309", "torch.zeros((n, 4), device=dev)"),
    ("SYNC309", "torch.empty(n, 4, device=dev)"),
    ("SYNC309", "torch.ones(size=(n,), device=dev)"),
    ("SYNC309", "torch.randn(n, device=dev)"),
    ("SYNC309", "x.new_zeros(n)"),
    ("SYNC309", "x.new_empty((n, 2))"),
    ("SYNC309", "x.view(n, -1)"),
    ("SYNC309", "x.reshape((n, -1))"),
    ("SYNC309", "torch.reshape(x, (n, -1))"),
    ("SYNC309", "x[:1].expand(n)"),
    ("SYNC309", "x[:4].repeat(n)"),
    ("SYNC309", "x.narrow(0, 0, n)"),
    ("SYNC309", "x.narrow(0, n, 4)"),
    ("SYNC309", "torch.narrow(x, 0, 0, n)"),
    ("SYNC309", "torch.full((4,), n, device=dev)"),
    ("SYNC309", "torch.full((4,), fill_value=x.max())"),
    ("SYNC309", "torch.full_like(x, x.max())"),
    ("SYNC309", "x.new_full((4,), n)"),
    ("SYNC309", "torch.topk(x, n)"),
    ("SYNC309", "x.topk(k=n)"),
    ("SYNC309", "x.kthvalue(n)"),
    ("SYNC309", "x.split(n)"),
    ("SYNC309", "x.roll(n)"),
    ("SYNC309", "torch.randint(0, n, (4,), device=dev)"),
    ("SYNC309", "torch.linspace(0, 1, n, device=dev)"),
    ("SYNC309", "torch.randperm(n, device=dev)"),
    ("SYNC309", "torch.eye(n, device=dev)"),
    ("SYNC309", "x.add(x, alpha=x.max())"),
]


@pytest.mark.parametrize(("code", "body"), FLAGGED, ids=[b for _, b in FLAGGED])
def test_flagged(code: str, body: str) -> None:
    assert code in found(body + "\n")


NOT_FLAGGED = [
    "torch.nonzero_static(mask, size=16)",
    "mask.nonzero_static(size=16)",
    "torch.where(mask, x, 0.0)",
    "torch.where(condition=mask, input=x, other=0.0)",
    "torch.where(*(mask, x, x))",
    "torch.count_nonzero(mask)",
    "np.nonzero(arr > 3)",
    "arr.nonzero()",
    "cpu.nonzero()",
    "(cpu > 0).nonzero(as_tuple=True)",
    "torch.argwhere(cpu > 0)",
    "torch.masked_select(cpu, cpu > 0)",
    "np.unique(arr)",
    "torch.unique(torch.tensor([1, 2, 2]))",
    "torch.repeat_interleave(x[:64], rep, output_size=128)",
    "x.repeat_interleave(2)",
    "x.repeat_interleave(2, dim=0)",
    "x.repeat_interleave(len(cpu))",
    "torch.repeat_interleave(cpu, cpu_n)",
    "np.bincount(arr)",
    "torch.bincount(torch.tensor([0, 1, 1]))",
    "F.one_hot(cls, num_classes=10)",
    "F.one_hot(cls, 10)",
    "F.one_hot(torch.tensor([0, 2]))",
    "torch.histc(x, bins=10, min=-4.0, max=4.0)",
    "torch.histc(x, 10, -4.0, 4.0)",
    "x.histc(10, -1, 1)",
    "torch.histc(cpu, bins=10)",
    "torch.searchsorted(x.sort().values, x)",
    "torch.topk(x, 4)",
    "x.topk(x.shape[0] // 2)",
    "torch.arange(16, device=dev)",
    "torch.arange(x.shape[0], device=dev)",
    "torch.arange(cpu_n, device=dev)",
    "torch.zeros(x.size(0), device=dev)",
    "torch.ones(cpu_n, device=dev)",
    "x.view(cpu_n, -1)",
    "x.view(32, 32)",
    "x.view(torch.int32)",
    "x.narrow(0, 0, cpu_n)",
    "x.narrow(0, 0, 16)",
    "torch.full((4,), 7, device=dev)",
    "torch.full((4,), cpu_n, device=dev)",
    "x.clone().fill_(n)",
    "x.clamp(max=n)",
    "x * n",
    "x.pow(n)",
    "torch.tensor_split(x, cpu_n)",
    "torch.tensor_split(x, torch.tensor([100, 500]))",
    "x.split([512, 512])",
    "torch.split(x, 256)",
    "x.view(n.item(), -1)",  # SYNC101's finding, not a second one here
]


@pytest.mark.parametrize("body", NOT_FLAGGED)
def test_not_flagged(body: str) -> None:
    codes = [c for c in found(body + "\n") if c.startswith("SYNC3")]
    assert codes == [], f"{body!r} flagged: {codes}"


def test_item_size_is_sync101_only() -> None:
    codes = found("x.view(n.item(), -1)\n")
    assert "SYNC101" in codes and "SYNC309" not in codes


def test_unknown_receiver_nonzero_in_numpy_module_is_low_confidence() -> None:
    source = "import numpy as np\nimport torch\n\ndef f(a):\n    return a.nonzero()\n"
    assert [d.confidence for d in lint(source) if d.code == "SYNC302"] == [Confidence.LOW]
    assert [d.confidence for d in lint(source.replace("import numpy as np\n", "")) if d.code == "SYNC302"] == [
        Confidence.MEDIUM
    ]


def test_module_function_of_another_library_is_not_a_tensor_method() -> None:
    source = "import torch\nimport pandas as pd\n\npd.unique([1, 2])\nnp_like = pd.Series([1]).unique()\n"
    assert [d.code for d in lint(source, min_confidence=Confidence.MEDIUM) if d.code == "SYNC304"] == []


def test_tensor_annotated_parameter_is_medium_confidence() -> None:
    source = "import torch\n\ndef step(m: torch.Tensor) -> torch.Tensor:\n    return torch.nonzero(m)\n"
    [diagnostic] = [d for d in lint(source) if d.code == "SYNC302"]
    assert diagnostic.confidence is Confidence.MEDIUM
    assert diagnostic.hot_path  # ``*step*`` is a hot path


def test_size_rule_points_at_the_tensor_argument() -> None:
    [diagnostic] = [d for d in lint(PRELUDE + "y = x.view(4, n)\n") if d.code == "SYNC309"]
    line = (PRELUDE + "y = x.view(4, n)\n").splitlines()[diagnostic.start.row - 1]
    assert line[diagnostic.start.column - 1 : diagnostic.end.column - 1] == "n"


@pytest.mark.parametrize(
    ("body", "code", "replacement"),
    [
        ("torch.nonzero(mask)", "SYNC302", "torch.nonzero_static(mask, size=MAX_NONZERO)"),
        ("mask.nonzero()", "SYNC302", "mask.nonzero_static(size=MAX_NONZERO)"),
        ("mask.nonzero(as_tuple=True)", "SYNC302", "mask.nonzero_static(size=MAX_NONZERO).unbind(1)"),
        ("torch.where(mask)", "SYNC302", "torch.nonzero_static(mask, size=MAX_NONZERO).unbind(1)"),
        ("torch.repeat_interleave(x[:64], rep)", "SYNC305", "torch.repeat_interleave(x[:64], rep, output_size=OUTPUT_SIZE)"),
        ("F.one_hot(cls)", "SYNC307", "F.one_hot(cls, num_classes=NUM_CLASSES)"),
        ("F.one_hot(cls, -1)", "SYNC307", "F.one_hot(cls, num_classes=NUM_CLASSES)"),
        ("torch.histc(x, 10)", "SYNC308", "torch.histc(x, 10, min=MIN_VALUE, max=MAX_VALUE)"),
    ],
)
def test_display_only_fixes_name_the_no_sync_form(body: str, code: str, replacement: str) -> None:
    [diagnostic] = [d for d in lint(PRELUDE + body + "\n") if d.code == code]
    assert diagnostic.fix is not None
    assert diagnostic.fix.applicability is Applicability.DISPLAY_ONLY
    assert [e.content for e in diagnostic.fix.edits] == [replacement]


def test_allowed_region_silences_shape_rules() -> None:
    source = PRELUDE + (
        "from vllm.utils.gpu_sync_debug import gpu_sync_allowed\n"
        "with gpu_sync_allowed():\n"
        "    rows = torch.nonzero(mask)\n"
        "    u = torch.unique(cls)\n"
    )
    assert [d.code for d in lint(source) if d.code.startswith("SYNC3")] == []


def test_size_confidence_follows_what_the_code_shows() -> None:
    source = (
        "import torch\n\n"
        "def rot_pos_emb(grid_thw: torch.Tensor, k: torch.Tensor, logits: torch.Tensor) -> None:\n"
        "    for t, h, w in grid_thw:\n"
        "        torch.arange(h)\n"  # an element of a tensor of unknown device: low
        "    logits.topk(k.max())\n"  # a 0-d tensor of unknown device: medium
        "    logits.topk(torch.max(k))\n"
    )
    found_confidences = [d.confidence for d in lint(source) if d.code == "SYNC309"]
    assert found_confidences == [Confidence.LOW, Confidence.MEDIUM, Confidence.MEDIUM]
