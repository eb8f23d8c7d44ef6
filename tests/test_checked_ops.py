"""SYNC601-SYNC604 (checked and comparing ops) and SYNC105/SYNC203 (host and device data mixed)."""

from __future__ import annotations

import pytest

from syncllint.diagnostics import Applicability, Confidence
from tests.conftest import lint

PRELUDE = """\
import numpy as np
import torch

dev = torch.device("cuda")
a = torch.randn(8, 8, device=dev)
spd = a @ a.T + 8 * torch.eye(8, device=dev)
b = torch.randn(8, 2, device=dev)
x = torch.randn(1024, device=dev)
s = x.sum()
g0 = torch.randint(0, 4, (), device=dev)
cpu = torch.randn(1024)
cpu_idx = torch.tensor([1, 2])
cpu_mask = cpu > 0
idx = torch.randint(0, 1024, (4,), device=dev)
"""


def found(body: str, min_confidence: Confidence = Confidence.MEDIUM) -> list[str]:
    return [d.code for d in lint(PRELUDE + body + "\n", min_confidence=min_confidence)]


FLAGGED = [
    ("SYNC601", "torch.linalg.cholesky(spd)"),
    ("SYNC601", "torch.linalg.cholesky(spd, upper=True)"),
    ("SYNC601", "torch.linalg.inv(a)"),
    ("SYNC601", "torch.linalg.solve(spd, b)"),
    ("SYNC601", "torch.linalg.lu_factor(a)"),
    ("SYNC601", "torch.linalg.ldl_factor(spd)"),
    ("SYNC601", "torch.linalg.ldl_factor_ex(spd)"),
    ("SYNC601", "torch.linalg.eigh(spd)"),
    ("SYNC601", "torch.linalg.svd(a)"),
    ("SYNC601", "torch.linalg.pinv(a)"),
    ("SYNC601", "torch.linalg.matrix_rank(a)"),
    ("SYNC601", "torch.linalg.lstsq(a, b)"),
    ("SYNC601", "torch.inverse(a)"),
    ("SYNC601", "a.inverse()"),
    ("SYNC601", "torch.cholesky(spd)"),
    ("SYNC601", "spd.cholesky()"),
    ("SYNC602", "torch.equal(x, x.clone())"),
    ("SYNC602", "torch.equal(x, x + 0)"),
    ("SYNC602", "x.equal(x.clone())"),
    ("SYNC603", "torch.allclose(x, x)"),
    ("SYNC603", "torch.allclose(x, x + 1e-9, atol=1e-5)"),
    ("SYNC603", "x.allclose(x + 1e-9)"),
    ("SYNC604", "g0.is_nonzero()"),
    ("SYNC604", "torch.is_nonzero(g0)"),
    ("SYNC105", "torch.tensor([g0, g0])"),
    ("SYNC105", "torch.as_tensor([s, s])"),
    ("SYNC105", "torch.tensor((g0, s), device='cpu')"),
    ("SYNC105", "cpu[0] = x[0]"),
    ("SYNC105", "cpu[0:4] = x[0:4]"),
    ("SYNC105", "cpu.copy_(x)"),
    ("SYNC105", "cpu.copy_(x, non_blocking=False)"),
    ("SYNC203", "x[cpu_idx]"),
    ("SYNC203", "x[[1, 2]]"),
    ("SYNC203", "y = x.view(32, 32)[:, cpu_idx]"),
    ("SYNC203", "x[cpu_idx] = torch.zeros(2, device=dev)"),
    ("SYNC203", "x[[1, 2]] = 0.0"),
    ("SYNC203", "x[cpu_mask] = 0.0"),
    ("SYNC203", "x.index_put_((idx,), torch.tensor(0.0))"),
    ("SYNC203", "x.index_put_((cpu_idx,), torch.zeros(2, device=dev))"),
    ("SYNC203", "torch.where(x > 0, x, torch.tensor(0.0))"),
]


@pytest.mark.parametrize(("code", "body"), FLAGGED, ids=[b for _, b in FLAGGED])
def test_flagged(code: str, body: str) -> None:
    assert code in found(body)


NOT_FLAGGED = [
    "torch.linalg.cholesky_ex(spd)",
    "torch.linalg.cholesky_ex(spd).L",
    "torch.linalg.inv_ex(a).inverse",
    "torch.linalg.solve_ex(spd, b)",
    "torch.linalg.lu_factor_ex(a)",
    "torch.linalg.lu(a)",
    "torch.linalg.det(a)",
    "torch.linalg.qr(a)",
    "torch.linalg.solve_triangular(spd, b, upper=False)",
    "torch.linalg.cholesky(torch.eye(3))",
    "np.linalg.inv(np.eye(3))",
    "np.linalg.cholesky(np.eye(3))",
    "torch.equal(x, x)",
    "x.equal(x)",
    "torch.equal(cpu, cpu.clone())",
    "torch.isclose(x, x)",
    "torch.isclose(x, x).all()",
    "np.allclose(np.ones(3), np.ones(3))",
    "torch.allclose(cpu, cpu)",
    "torch.tensor(1).is_nonzero()",
    "torch.stack([g0, g0])",
    "torch.tensor([1, 2, 3])",
    "torch.tensor([cpu[0], cpu[1]])",
    "cpu[0] = 1.0",
    "cpu[0] = cpu[1]",
    "cpu.copy_(x, non_blocking=True)",
    "x[cpu_mask]",
    "x[cpu_mask] = x.max()",
    "x[cpu_idx[0]]",
    "x[idx]",
    "x[0:2] = 0.0",
    "x * torch.tensor(2.0)",
    "x.add_(torch.tensor(1.0))",
    "x.masked_fill_(x > 3, torch.tensor(0.0))",
    "torch.where(x > 0, x, 0.0)",
    "x.index_put_((idx,), torch.zeros(4, device=dev))",
    "cpu[[1, 2]]",
    "np.arange(4)[[1, 2]]",
]


@pytest.mark.parametrize("body", NOT_FLAGGED)
def test_not_flagged(body: str) -> None:
    mine = ("SYNC105", "SYNC203", "SYNC6")
    codes = [c for c in found(body) if c.startswith(mine)]
    assert codes == [], f"{body!r} flagged: {codes}"


def test_unknown_receiver_inverse_is_only_a_low_guess() -> None:
    source = "import torch\n\ndef undo(transform):\n    return transform.inverse()\n"
    assert [d.confidence for d in lint(source) if d.code == "SYNC601"] == [Confidence.LOW]


@pytest.mark.parametrize(
    ("body", "replacement"),
    [
        ("torch.linalg.cholesky(spd)", "torch.linalg.cholesky_ex(spd).L"),
        ("torch.linalg.cholesky(spd, upper=True)", "torch.linalg.cholesky_ex(spd, upper=True).L"),
        ("torch.linalg.inv(a)", "torch.linalg.inv_ex(a).inverse"),
        ("torch.linalg.solve(spd, b)", "torch.linalg.solve_ex(spd, b).result"),
        ("torch.inverse(a)", "torch.linalg.inv_ex(a).inverse"),
        ("a.inverse()", "torch.linalg.inv_ex(a).inverse"),
        ("spd.cholesky()", "torch.linalg.cholesky_ex(spd).L"),
    ],
)
def test_linalg_fix_is_unsafe_and_uses_the_ex_form(body: str, replacement: str) -> None:
    [diagnostic] = [d for d in lint(PRELUDE + body + "\n") if d.code == "SYNC601"]
    assert diagnostic.fix is not None and diagnostic.fix.applicability is Applicability.UNSAFE
    assert [e.content for e in diagnostic.fix.edits] == [replacement]


@pytest.mark.parametrize(
    "body",
    ["torch.linalg.lu_factor(a)", "torch.linalg.eigh(spd)", "torch.linalg.inv(a, out=b)", "torch.cholesky(spd, True)"],
)
def test_linalg_without_a_vouched_rewrite_has_no_fix(body: str) -> None:
    [diagnostic] = [d for d in lint(PRELUDE + body + "\n") if d.code == "SYNC601"]
    assert diagnostic.fix is None


def test_linalg_alias_keeps_the_callers_spelling() -> None:
    source = "import torch\nfrom torch import linalg as la\n\nm = torch.eye(4, device='cuda')\nr = la.inv(m)\n"
    [diagnostic] = [d for d in lint(source) if d.code == "SYNC601"]
    assert diagnostic.fix is not None and diagnostic.fix.edits[0].content == "la.inv_ex(m).inverse"
