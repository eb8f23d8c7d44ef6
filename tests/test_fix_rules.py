"""What the new rules flag (per the H200 measurements) and which fix each finding carries."""

from __future__ import annotations

import textwrap

import pytest

from syncllint.config import Settings, settings_from_mapping
from syncllint.diagnostics import Applicability, Confidence, Diagnostic
from syncllint.fixer import fix_source
from tests.conftest import codes, lint

HEAD = "import torch\nimport numpy as np\n\nx = torch.randn(64, device='cuda')\ncpu = torch.ones(64)\n"


def _one(source: str, code: str) -> Diagnostic:
    found = [d for d in lint(HEAD + textwrap.dedent(source)) if d.code == code]
    assert len(found) == 1, found
    return found[0]


def _fixed(source: str, *, unsafe: bool = True, settings: Settings | None = None) -> str:
    text = HEAD + textwrap.dedent(source)
    out = fix_source(text, "f.py", settings or Settings(select=("ALL",)), unsafe=unsafe).fixed
    return out.removeprefix(HEAD)


@pytest.mark.parametrize(
    "source",
    [
        "y = torch.tensor([1, 2]).to('cuda')",  # tensor_to_cuda
        "y = torch.tensor([1, 2]).cuda()",  # tensor_cuda()
        "y = cpu.to('cuda')",  # cpu_tensor_to_cuda
        "y = torch.from_numpy(cpu.numpy()).to('cuda')",  # from_numpy_cuda
        "torch.empty(64, device='cuda').copy_(cpu[:64])",  # copy_into_cuda_from_pageable
        "y = cpu.to('cuda', non_blocking=False)",
        "y = cpu.to(x)",  # to a CUDA tensor: 101.1 ms (docs/measurements/where_cpu_operands.h200.torch2.11.json)
    ],
)
def test_sync202_flags_measured_blocking_copies(source: str) -> None:
    assert "SYNC202" in codes(HEAD + source)


@pytest.mark.parametrize(
    "source",
    [
        "p = torch.ones(64, pin_memory=True)\ny = p.to('cuda', non_blocking=True)",  # pinned nb
        "y = x.to('cuda')",  # to_same_device
        "y = x.to(torch.float16)",  # to_dtype
        "y = cpu.to(torch.float16)",
        "y = cpu.to('cuda', non_blocking=True)",  # pageable nb: no debug-mode sync for small copies
        "y = cpu.to('cpu')",
        "y = cpu.to(cpu)",
        "p = torch.ones(64, pin_memory=True)\nx.copy_(p, non_blocking=True)",
    ],
)
def test_sync202_leaves_measured_non_syncs(source: str) -> None:
    assert "SYNC202" not in codes(HEAD + source)


def test_sync202_fix_is_safe_for_a_fresh_tensor_only() -> None:
    assert _one("y = torch.tensor([1]).to('cuda')", "SYNC202").fix.applicability is Applicability.SAFE  # type: ignore[union-attr]
    assert _one("y = cpu.cuda()", "SYNC202").fix.applicability is Applicability.UNSAFE  # type: ignore[union-attr]
    assert _fixed("p = torch.ones(4, pin_memory=True)\ny = p.to('cuda')\n") == (
        "p = torch.ones(4, pin_memory=True)\ny = p.to('cuda', non_blocking=True)\n"
    )


M2D = "m = torch.zeros(4, 4, device='cuda')\n"


@pytest.mark.parametrize(
    "source",
    ["x[3] = 0.0", "x[-1] = 2", "x[1, 2] = True", "i = 4\nx[i] = 0.0", M2D + "m[0, 1] = 5", M2D + "r = m[0]\nr[2] = 5.0"],
)
def test_sync402_flags_writes_of_one_element(source: str) -> None:
    assert "SYNC402" in codes(HEAD + source)


@pytest.mark.parametrize(
    "source",
    [
        "x[0:8] = 0.0", "cpu[3] = 0.0", "x[3] = x.sum()", "d = {}\nd[3] = 0.0", "x[...] = 1.0",
        # Not one element: a row or a strip takes the fill path (measured, benchmarks/probes).
        "x[0, 1:3] = 1.5", M2D + "m[3] = 0.0", M2D + "m[:, 0] = 5", M2D + "m[..., 0] = 1.0",
    ],
)
def test_sync402_leaves_slices_rows_host_tensors_and_tensor_values(source: str) -> None:
    assert "SYNC402" not in codes(HEAD + source)


def test_sync402_single_index_of_unknown_rank_is_low_confidence() -> None:
    """``t[i] = 0`` writes one element of a 1-D tensor (a sync) or a row (none): the code does not say."""
    found = [d for d in lint(HEAD + "def f(t: torch.Tensor):\n    t[3] = 0.0\n") if d.code == "SYNC402"]
    assert [d.confidence for d in found] == [Confidence.LOW]


def test_sync402_fix() -> None:
    assert _fixed("x[-1] = 2  # last\nx[1] = 1.5\n", unsafe=False) == "x[-1].fill_(2)  # last\nx[1].fill_(1.5)\n"


def test_sync403_flags_integer_index_tensor_with_scalar() -> None:
    assert "SYNC403" in codes(HEAD + "idx = x.argsort()\nx[idx] = 0.0")


@pytest.mark.parametrize(
    "source",
    ["idx = x.argsort()\nx[idx] = x.sum()", "mask = x > 0\nx[mask] = 0.0", "idx = x.argsort()\nx[idx] = torch.zeros(64, device='cuda')"],
)
def test_sync403_leaves_tensor_values_and_masks(source: str) -> None:
    assert "SYNC403" not in codes(HEAD + source)


def test_sync403_fix_is_unsafe_unless_the_index_is_visibly_int64() -> None:
    named = _one("idx = x.argsort()\nx[idx] = 0.0", "SYNC403")
    assert named.fix is not None and named.fix.applicability is Applicability.UNSAFE
    visible = _one("x[x.argsort().long()] = 0.0", "SYNC403")
    assert visible.fix is not None and visible.fix.applicability is Applicability.SAFE
    assert _fixed("idx = x.argsort()\nx[idx] = 0.0\n") == "idx = x.argsort()\nx.index_fill_(0, idx.flatten(), 0.0)\n"


def test_sync101_fix_only_where_a_tensor_fits() -> None:
    source = "s = x.sum()\nx.fill_(s.item())\nx.clamp_(max=s.item())\nn = s.item()\nz = torch.clamp(x, s.item())\n"
    assert _fixed(source, unsafe=False) == "s = x.sum()\nx.fill_(s)\nx.clamp_(max=s)\nn = s.item()\nz = torch.clamp(x, s)\n"


def test_sync101_fix_reshapes_a_tensor_not_known_to_be_0d() -> None:
    assert _fixed("t = x[:1]\nx.fill_(t.item())\n", unsafe=False) == "t = x[:1]\nx.fill_(t.reshape(()))\n"


def test_sync101_no_clamp_fix_for_numpy_clip() -> None:
    assert _fixed("a = np.ones(4)\nb = a.clip(min=x.sum().item())\n") == "a = np.ones(4)\nb = a.clip(min=x.sum().item())\n"


def test_sync201_helper_form_with_the_vllm_preset() -> None:
    settings = settings_from_mapping({"preset": "vllm", "select": ["ALL"]}, "test")
    out = _fixed("t = torch.tensor([1, 2], device='cuda', dtype=torch.int32)\n", settings=settings)
    assert out.endswith("\nt = async_tensor_h2d([1, 2], 'cuda', dtype=torch.int32)\n")
    full = fix_source(HEAD + "t = torch.tensor([1], device='cuda')\n", "f.py", settings).fixed
    assert "import numpy as np\nfrom vllm.utils.torch_utils import async_tensor_h2d\n" in full


def test_sync201_no_fix_for_extra_arguments_or_default_device() -> None:
    assert _one("t = torch.tensor([1.0], device='cuda', requires_grad=True)", "SYNC201").fix is None
    with_default = "with torch.device('cuda'):\n    t = torch.tensor([1.0], device='cuda')\n"
    assert _one(with_default, "SYNC201").fix is None


def test_sync401_fix_is_unsafe_and_uses_where() -> None:
    finding = _one("mask = x > 0\nx[mask] = x.min()", "SYNC401")
    assert finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE
    assert _fixed("mask = x > 0\nx[mask] = x.min()\n") == "mask = x > 0\nx.copy_(torch.where(mask, x.min(), x))\n"


def test_sync201_helper_keeps_a_multi_line_layout_and_skips_tensor_data() -> None:
    settings = settings_from_mapping({"preset": "vllm", "select": ["ALL"]}, "test")
    source = "t = torch.tensor(\n    [1, 2],\n    dtype=torch.int32,\n    device='cuda',\n)\n"
    assert _fixed(source, settings=settings).endswith(
        "t = async_tensor_h2d(\n    [1, 2],\n    'cuda',\n    dtype=torch.int32,\n)\n"
    )
    # A host tensor may already be pinned: the helper would copy from it without staging.
    out = _fixed("u = torch.tensor(cpu, device='cuda')\n", settings=settings)
    assert out.endswith("u = torch.tensor(cpu, pin_memory=True).to('cuda', non_blocking=True)\n")


def test_staging_fixes_are_unsafe_when_the_device_may_be_the_cpu() -> None:
    hidden = "def f(device: torch.device, ids: list[int]):\n    return torch.tensor(ids, device=device)\n"
    finding = _one(hidden, "SYNC201")
    assert finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE
    with_helper = settings_from_mapping({"preset": "vllm", "select": ["ALL"]}, "test")
    assert "async_tensor_h2d(ids, device)" in _fixed(hidden, unsafe=False, settings=with_helper)
    moved = _one("def g(device: torch.device):\n    return torch.tensor([1]).to(device)\n", "SYNC202")
    assert moved.fix is not None and moved.fix.applicability is Applicability.UNSAFE


def test_sync202_leaves_a_dtype_variable() -> None:
    assert "SYNC202" not in codes(HEAD + "def g(dtype: torch.dtype):\n    return cpu.to(dtype)\n")


def test_index_write_with_a_host_index_gets_no_index_fill_rewrite() -> None:
    from syncllint.config import Settings
    from syncllint.diagnostics import Confidence
    from syncllint.engine import lint_source

    source = (
        "import torch\n"
        "x = torch.zeros(8, device='cuda')\n"
        "cpu_idx = torch.tensor([1, 2])\n"
        "x[cpu_idx] = 0.0\n"
        "idx = torch.randint(0, 8, (3,), device='cuda')\n"
        "x[idx] = 0.0\n"
    )
    found = lint_source(source, "w.py", Settings(select=("ALL",), min_confidence=Confidence.LOW)).diagnostics
    fixes = {d.start.row: d.fix for d in found if d.code == "SYNC403"}
    assert fixes[4] is None
    assert fixes[6] is not None and "index_fill_" in fixes[6].edits[0].content
