"""Boolean-mask indexing: reads (SYNC301) and writes of tensor values (SYNC401)."""

from __future__ import annotations

import libcst as cst

from syncllint.analysis.values import DType, Place, Value
from syncllint.checks.base import Rule, RuleContext
from syncllint.diagnostics import Confidence


def _index_values(node: cst.Subscript) -> list[cst.BaseExpression]:
    return [el.slice.value for el in node.slice if isinstance(el.slice, cst.Index)]


def _looks_like_mask_name(expr: cst.BaseExpression) -> bool:
    name = expr.attr.value if isinstance(expr, cst.Attribute) else expr.value if isinstance(expr, cst.Name) else ""
    return "mask" in name.lower()


def mask_confidence(node: cst.Subscript, ctx: RuleContext) -> Confidence | None:
    """How sure we are that ``node`` indexes a device tensor with a device boolean mask."""
    target = ctx.inference.infer(node.value)
    if target.place in (Place.HOST_TENSOR, Place.NUMPY, Place.PYTHON):
        return None
    best: Confidence | None = None
    for index in _index_values(node):
        mask = ctx.inference.infer(index)
        if mask.place in (Place.HOST_TENSOR, Place.NUMPY, Place.PYTHON):
            continue  # a host mask on a device tensor does not sync (measured)
        if mask.is_tensor and mask.dtype is DType.BOOL:
            high = target.place is Place.DEVICE or mask.place is Place.DEVICE
            confidence = Confidence.HIGH if high and target.place is not Place.UNKNOWN else Confidence.MEDIUM
        elif mask.dtype is DType.UNKNOWN and _looks_like_mask_name(index):
            confidence = Confidence.MEDIUM if target.place is Place.DEVICE else Confidence.LOW
        else:
            continue
        best = confidence if best is None else max(best, confidence)
    return best


class BooleanMaskIndex(Rule):
    code = "SYNC301"
    name = "boolean-mask-index"
    family = "data-dependent shapes"
    summary = "`x[mask]` has a data-dependent shape: the host waits to learn how many elements are true"

    def visit_Subscript(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if not isinstance(node, cst.Subscript) or ctx.is_store(node):
            return
        confidence = mask_confidence(node, ctx)
        if confidence is None:
            return
        ctx.report(
            self,
            node,
            "`x[mask]` with a boolean device mask sizes its result by the number of true elements, which the "
            "host must read back (a sync); use `torch.where(mask, x, fill)`, multiply by the mask, or "
            "`nonzero_static` with a bound",
            confidence,
        )


class MaskedWriteTensorValue(Rule):
    code = "SYNC401"
    name = "masked-write-tensor-value"
    family = "writes"
    summary = "`x[mask] = tensor` syncs (a Python scalar value does not)"

    def visit_Assign(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if not isinstance(node, cst.Assign):
            return
        value = ctx.inference.infer(node.value)
        if value.place is Place.PYTHON or value.place is Place.NUMPY and value.zero_dim:
            return  # ``x[mask] = 0.0`` takes the masked_fill path: no sync (measured)
        for target in node.targets:
            subscript = target.target
            if not isinstance(subscript, cst.Subscript):
                continue
            confidence = mask_confidence(subscript, ctx)
            if confidence is None:
                continue
            confidence = min(confidence, _value_confidence(value))
            ctx.report(
                self,
                subscript,
                "`x[mask] = <tensor>` synchronizes (only a Python scalar value takes the sync-free "
                "masked_fill path); write `x.copy_(torch.where(mask, value, x))` instead",
                confidence,
            )


def _value_confidence(value: Value) -> Confidence:
    if value.is_tensor:
        return Confidence.HIGH
    return Confidence.LOW  # could be a Python number the code does not show


RULES = (BooleanMaskIndex, MaskedWriteTensorValue)
