"""SYNC601-SYNC604: ops that answer on the host (error checks, comparisons, truth of a tensor)."""

from __future__ import annotations

import libcst as cst

from syncllint.analysis.values import Place
from syncllint.checks.base import FixProposal, Rule, RuleContext
from syncllint.checks.torch_calls import (
    TorchCall,
    TorchCallRule,
    match_torch_call,
    operand_confidence,
)
from syncllint.diagnostics import Applicability, Confidence

# torch.linalg ops measured as syncing on an H200 (torch 2.11), with their sync-free ``_ex`` form
# and the field of its result that holds the non-ex result. ``None``: no sync-free form
# (``ldl_factor_ex`` still blocks the host; the others have no ``_ex`` variant).
_LINALG: dict[str, tuple[str, str] | None] = {
    "cholesky": ("cholesky_ex", "L"),
    "inv": ("inv_ex", "inverse"),
    "solve": ("solve_ex", "result"),
    "lu_factor": None,  # lu_factor_ex exists (no sync) but returns a plain (LU, pivots, info) triple
    "ldl_factor": None,
    "ldl_factor_ex": None,
    "eigh": None,
    "eigvalsh": None,
    "eig": None,
    "svd": None,
    "svdvals": None,
    "pinv": None,
    "matrix_rank": None,
    "lstsq": None,
}
# Old spellings in the ``torch`` namespace and as tensor methods: ``torch.inverse(m)``, ``m.cholesky()``.
_LEGACY = {"inverse": ("inv_ex", "inverse"), "cholesky": ("cholesky_ex", "L")}


class LinalgErrorCheck(Rule):
    code = "SYNC601"
    triggers = ("linalg", "inverse", "cholesky")
    name = "linalg-error-check"
    family = "checked and comparing ops"
    summary = "`torch.linalg.cholesky` / `inv` / `solve` / ... check for errors on the host (use the `_ex` form)"
    fix_applicability = Applicability.UNSAFE

    def visit_Call(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        call = match_torch_call(node, ctx, _LINALG, namespaces=("torch.linalg",), methods=False)
        legacy = False
        if call is None:
            call = match_torch_call(node, ctx, _LEGACY)
            legacy = True
        if call is None:
            return
        confidence = operand_confidence(call, ctx)
        if confidence is None:
            return
        if call.is_method and ctx.inference.infer(call.operand or cst.Name("None")).place is Place.UNKNOWN:
            confidence = Confidence.LOW  # ``transform.inverse()`` is as likely not a tensor
        spelled = f"torch.linalg.{call.name}" if not legacy else (f".{call.name}()" if call.is_method else f"torch.{call.name}")
        pair = _LEGACY[call.name] if legacy else _LINALG[call.name]
        if pair is not None:
            advice = f"use `torch.linalg.{pair[0]}(...).{pair[1]}` and check `.info` where a sync is already paid"
        elif call.name == "lu_factor":
            advice = "use `torch.linalg.lu_factor_ex` and check `.info` where a sync is already paid"
        else:
            advice = "it has no sync-free form: call it where a sync is already paid, or accept it explicitly"
        ctx.report(
            self,
            call.node,
            f"`{spelled}` checks the solver's status on the host, so the host waits for the GPU; {advice}",
            confidence,
            self._fix(call, pair, legacy),
        )

    def _fix(self, call: TorchCall, pair: tuple[str, str] | None, legacy: bool) -> FixProposal | None:
        if pair is None or call.operand is None:
            return None
        extra = [a for a in call.node.args if a.keyword is not None and a.keyword.value == "out"]
        if extra or (legacy and len(call.node.args) != (0 if call.is_method else 1)):
            return None  # ``out=`` or the old ``upper`` positional: no rewrite we can vouch for
        ex_name, field = pair
        imports: tuple[tuple[str, str | None], ...] = ()
        if not legacy and isinstance(call.node.func, cst.Attribute):
            func: cst.BaseExpression = call.node.func.with_changes(attr=cst.Name(ex_name))
            args = list(call.node.args)
        else:
            func = cst.Attribute(cst.Attribute(cst.Name("torch"), cst.Name("linalg")), cst.Name(ex_name))
            imports = (("torch", None),)
            args = list(call.node.args) if not call.is_method else [cst.Arg(call.operand)]
        return FixProposal(
            target=call.node,
            replacement=cst.Attribute(cst.Call(func, args), cst.Name(field)),
            applicability=Applicability.UNSAFE,
            message=f"Use `torch.linalg.{ex_name}(...).{field}` (drops the error check: a singular or "
            "non-positive-definite input gives NaNs or garbage instead of an exception)",
            imports=imports,
        )


class EqualDistinct(Rule):
    code = "SYNC602"
    triggers = ("equal",)
    name = "torch-equal"
    family = "checked and comparing ops"
    summary = "`torch.equal(a, b)` answers with a Python bool: the host waits for the GPU"

    def visit_Call(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        call = match_torch_call(node, ctx, ("equal",))
        if call is None:
            return
        other = call.arg(0, "other")
        if other is None or call.operand is None or call.operand.deep_equals(other):
            return  # ``torch.equal(x, x)`` short-circuits on identity (measured no sync)
        confidence = operand_confidence(call, ctx, [other])
        if confidence is None or ctx.inference.infer(other).is_host:
            return
        ctx.report(
            self,
            call.node,
            "`torch.equal` returns a Python bool, so the host waits for the GPU to compare; keep the answer on "
            "the device with `(a == b).all()` (same shapes) or compare where a sync is already paid",
            confidence,
        )


class Allclose(TorchCallRule):
    code = "SYNC603"
    triggers = ("allclose",)
    name = "allclose"
    family = "checked and comparing ops"
    summary = "`torch.allclose` answers with a Python bool: the host waits for the GPU (`isclose` does not)"
    functions = ("allclose",)
    other_inputs = ((0, "other"),)
    message = (
        "`torch.allclose` returns a Python bool, so the host waits for the GPU; keep the answer on the "
        "device with `torch.isclose(a, b).all()` (measured no sync)"
    )


class IsNonzero(TorchCallRule):
    code = "SYNC604"
    triggers = ("is_nonzero",)
    name = "is-nonzero"
    family = "checked and comparing ops"
    summary = "`Tensor.is_nonzero()` reads the value on the host"
    functions = ("is_nonzero",)
    message = (
        "`is_nonzero()` returns a Python bool read from the tensor, so the host waits for the GPU; keep the "
        "test on the device (`t != 0` as a tensor, combined with `torch.where`)"
    )


RULES = (LinalgErrorCheck, EqualDistinct, Allclose, IsNonzero)
