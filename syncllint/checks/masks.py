"""Boolean-mask indexing: reads (SYNC301) and writes of tensor values (SYNC401)."""

from __future__ import annotations

import libcst as cst

from syncllint.analysis.arguments import string_key
from syncllint.analysis.values import DType, Place, Value
from syncllint.checks.base import FixProposal, Rule, RuleContext
from syncllint.diagnostics import Applicability, Confidence
from syncllint.fixbuild import as_statement, is_pure_reference, torch_module, where_copy
from syncllint.prefilter import DEVICE_TENSOR_EVIDENCE


def _index_values(node: cst.Subscript) -> list[cst.BaseExpression]:
    return [el.slice.value for el in node.slice if isinstance(el.slice, cst.Index)]


def _looks_like_mask_name(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.BitInvert):
        expr = expr.expression  # ``x[~mask]``
    if isinstance(expr, cst.Attribute):
        name = expr.attr.value
    elif isinstance(expr, cst.Name):
        name = expr.value
    elif isinstance(expr, cst.Subscript):
        name = string_key(expr) or ""  # ``grad[state["mask"]]``: an optimizer's state entry, named by its key
    else:
        name = ""
    lowered = name.lower()
    # ``mask_indices`` / ``mask_idx`` are positions (a gather), not a boolean mask.
    return "mask" in lowered and not any(word in lowered for word in ("idx", "indices", "index", "ids"))


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
            # ``x[attn_mask]`` on a tensor: the name is the only dtype evidence, good enough for medium.
            confidence = Confidence.MEDIUM if target.is_tensor else Confidence.LOW
        else:
            continue
        best = confidence if best is None else max(best, confidence)
    return best


class BooleanMaskIndex(Rule):
    code = "SYNC301"
    name = "boolean-mask-index"
    family = "data-dependent shapes"
    summary = "`x[mask]` has a data-dependent shape: the host waits to learn how many elements are true"
    triggers = DEVICE_TENSOR_EVIDENCE

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

    def visit_AugAssign(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        # ``x[mask] -= 1`` reads ``x[mask]`` first (then writes the result back as a tensor).
        if not isinstance(node, cst.AugAssign) or not isinstance(node.target, cst.Subscript):
            return
        confidence = mask_confidence(node.target, ctx)
        if confidence is None:
            return
        ctx.report(
            self,
            node.target,
            "`x[mask] op= v` reads `x[mask]`, whose size is the number of true elements: the host must read "
            "it back (a sync); write `x.copy_(torch.where(mask, x op v, x))` instead",
            confidence,
        )


class MaskedWriteTensorValue(Rule):
    code = "SYNC401"
    fix_applicability = Applicability.UNSAFE
    name = "masked-write-tensor-value"
    family = "writes"
    summary = "`x[mask] = tensor` syncs (a Python scalar value does not)"
    triggers = DEVICE_TENSOR_EVIDENCE

    def visit_Assign(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if not isinstance(node, cst.Assign):
            return
        for subscript, written in _written_pairs(node):
            value = ctx.inference.infer(written)
            if value.place is Place.PYTHON or value.place in (Place.NUMPY, Place.HOST_TENSOR) and value.zero_dim:
                # ``x[mask] = 0.0`` takes the masked_fill path, and so does a 0-d host tensor
                # (``torch.tensor(float("nan"))``): no wait behind a 100 ms kernel (measured).
                continue
            confidence = mask_confidence(subscript, ctx)
            if confidence is None:
                continue
            confidence = min(confidence, _value_confidence(value, written))
            whole = len(node.targets) == 1 and node.targets[0].target is subscript
            ctx.report(
                self,
                subscript,
                "`x[mask] = <tensor>` synchronizes (only a Python scalar value takes the sync-free "
                "masked_fill path); write `x.copy_(torch.where(mask, value, x))` instead",
                confidence,
                fix=_where_fix(node, subscript, ctx) if whole else None,
            )


def _written_pairs(node: cst.Assign) -> list[tuple[cst.Subscript, cst.BaseExpression]]:
    """(subscript target, the value written through it): ``x[m] = v``, and each element of
    ``(a[m], b[n]) = (v, w)``; elements of a tuple from elsewhere (``a[m], b[n] = f()``) get the
    whole value, whose parts are as much tensors as it is."""
    pairs: list[tuple[cst.Subscript, cst.BaseExpression]] = []
    for target in node.targets:
        if isinstance(target.target, cst.Subscript):
            pairs.append((target.target, node.value))
        elif isinstance(target.target, (cst.Tuple, cst.List)):
            elements = [el.value for el in target.target.elements]
            values = node.value.elements if isinstance(node.value, (cst.Tuple, cst.List)) else None
            for index, element in enumerate(elements):
                if not isinstance(element, cst.Subscript):
                    continue
                if values is not None and len(values) == len(elements):
                    pairs.append((element, values[index].value))
                elif values is None:
                    pairs.append((element, node.value))
    return pairs


def _where_fix(node: cst.Assign, subscript: cst.Subscript, ctx: RuleContext) -> FixProposal | None:
    """``x[mask] = v`` -> ``x.copy_(torch.where(mask, v, x))``; ``x[mask] = z[mask]`` -> ``torch.where(mask, z, x)``.

    Unsafe: the original only needs ``v`` to match the selected elements, ``where`` needs it to broadcast to x.
    """
    indices = _index_values(subscript)
    spelled = torch_module(ctx.imports)
    if len(subscript.slice) != 1 or len(indices) != 1 or spelled is None or not is_pure_reference(subscript.value):
        return None
    mask, value = indices[0], node.value
    picked = _index_values(value) if isinstance(value, cst.Subscript) and len(value.slice) == 1 else []
    if isinstance(value, cst.Subscript) and picked and picked[0].deep_equals(mask):
        value = value.value  # z[mask] keeps only the selected elements, which where() picks anyway
    torch_name, imports = spelled
    replacement = as_statement(where_copy(subscript.value, mask, value, torch_name))
    message = "Write with `x.copy_(torch.where(mask, value, x))`"
    return FixProposal(node, replacement, Applicability.UNSAFE, message, imports)


def _value_confidence(value: Value, expr: cst.BaseExpression) -> Confidence:
    if value.is_tensor:
        return Confidence.HIGH
    if isinstance(expr, (cst.Call, cst.Subscript, cst.BinaryOperation)):
        return Confidence.MEDIUM  # ``x[m] = self.experts(h)``: computed values are tensors here
    return Confidence.LOW  # a bare name could be a Python number the code does not show


RULES = (BooleanMaskIndex, MaskedWriteTensorValue)
