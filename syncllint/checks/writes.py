"""SYNC402/SYNC403: writing a Python scalar through an integer index (``x[3] = 0.0``, ``x[idx] = 0.0``).

Measured on an H200 (torch 2.11): both sync when the write lands on one element (a 0-d destination:
``x[3] = 0.0`` on a 1-D tensor, ``x[0, 1] = 5`` on a 2-D one); a row (``x2d[3] = 0.0``), ``x[:, 0] = 5``,
``x[0:8] = 0.0`` (a slice), ``x[mask] = 0.0`` (a boolean
mask) and ``x[idx] = tensor_value`` do not. Sync-free rewrites with the same result (measured):
``x[3].fill_(0.0)`` and ``x.index_fill_(0, idx, 0.0)``.
"""

from __future__ import annotations

import libcst as cst

from syncllint.analysis.values import DType, Place, Value
from syncllint.checks.base import FixProposal, Rule, RuleContext
from syncllint.checks.masks import _looks_like_mask_name
from syncllint.diagnostics import Applicability, Confidence
from syncllint.fixbuild import arg, as_statement, method
from syncllint.prefilter import DEVICE_TENSOR_EVIDENCE

_INT64_NAMES = ("torch.long", "torch.int64")


def _single_subscript_write(node: cst.CSTNode) -> tuple[cst.Subscript, cst.BaseExpression] | None:
    if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Subscript):
        return node.targets[0].target, node.value
    return None


def _is_python_scalar(expr: cst.BaseExpression, ctx: RuleContext) -> bool:
    """A number or bool the code shows (not a string, not a tensor)."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        expr = expr.expression
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.Name):
        if expr.value in ("True", "False"):
            return True
        if expr.value == "None":
            return False
        value = ctx.inference.infer(expr)
        return value.place is Place.PYTHON and value.zero_dim
    return False


def _is_int_index(expr: cst.BaseExpression, ctx: RuleContext) -> bool:
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr = expr.expression
    if isinstance(expr, cst.Integer):
        return True
    if isinstance(expr, cst.Name) and expr.value not in ("True", "False", "None"):
        value = ctx.inference.infer(expr)
        return value.place is Place.PYTHON and value.zero_dim
    return False


def _target_confidence(target: Value, ctx: RuleContext) -> Confidence | None:
    if target.place is Place.DEVICE:
        return Confidence.HIGH
    if target.place is Place.TENSOR:
        return Confidence.MEDIUM
    if target.place is Place.UNKNOWN and ctx.module_imports_torch:
        return Confidence.LOW  # a list or a dict just as well
    return None


class IntIndexWrite(Rule):
    code = "SYNC402"
    fix_applicability = Applicability.SAFE
    triggers = DEVICE_TENSOR_EVIDENCE
    name = "int-index-write"
    family = "writes"
    summary = "`x[i] = 0.0` with an integer index syncs; `x[i].fill_(0.0)` does not"

    def visit_Assign(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        found = _single_subscript_write(node)
        if found is None:
            return
        subscript, value = found
        indices = [el.slice for el in subscript.slice]
        ints = [i for i in indices if isinstance(i, cst.Index) and _is_int_index(i.value, ctx)]
        # Only a write to one element (a 0-d destination) syncs; ``x[:, 0] = 5`` and a row of a
        # 2-D tensor (``x2d[3] = 0.0``) take the fill path (measured, benchmarks/probes).
        if not ints or len(ints) != len(indices) or not _is_python_scalar(value, ctx):
            return
        target = ctx.inference.infer(subscript.value)
        confidence = _target_confidence(target, ctx)
        if confidence is None or target.rank is not None and len(ints) < target.rank:
            return
        if target.rank is None and len(ints) == 1:
            confidence = Confidence.LOW  # an element of a 1-D tensor, or a row: the code does not say
        # ``x[i]`` (basic indexing) is a view, so the fill lands in x; any int, negative too, any rank.
        replacement = as_statement(method(subscript, "fill_", [arg(value)]))
        applicability = Applicability.SAFE if target.is_tensor else Applicability.UNSAFE
        ctx.report(
            self,
            subscript,
            "`x[i] = <scalar>` with an integer index copies the value from a host tensor with a blocking copy "
            "(a sync); write `x[i].fill_(value)` instead",
            confidence,
            fix=FixProposal(node, replacement, applicability, "Write with `x[i].fill_(value)`"),
        )


def _visibly_int64(expr: cst.BaseExpression, ctx: RuleContext) -> bool:
    """``idx.long()`` or a factory with ``dtype=torch.long``: index_fill_ rejects other index dtypes (measured)."""
    if not isinstance(expr, cst.Call):
        return False
    if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "long" and not expr.args:
        return True
    dtype = next((a.value for a in expr.args if a.keyword is not None and a.keyword.value == "dtype"), None)
    return dtype is not None and ctx.qualify(dtype) in _INT64_NAMES


class IndexTensorWrite(Rule):
    code = "SYNC403"
    fix_applicability = Applicability.SAFE
    triggers = DEVICE_TENSOR_EVIDENCE
    name = "index-tensor-write"
    family = "writes"
    summary = "`x[idx] = 0.0` with an integer index tensor syncs; `x.index_fill_(0, idx, 0.0)` does not"

    def visit_Assign(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        found = _single_subscript_write(node)
        if found is None:
            return
        elements = _advanced_index(found[0])
        if elements is not None:
            self._check_advanced_index(found[0], found[1], elements, ctx)
            return
        if len(found[0].slice) != 1 or not isinstance(found[0].slice[0].slice, cst.Index):
            return
        subscript, value = found
        index_expr = found[0].slice[0].slice.value
        if not _is_python_scalar(value, ctx):
            return  # ``x[idx] = tensor_value`` does not sync (measured)
        target = ctx.inference.infer(subscript.value)
        index = ctx.inference.infer(index_expr)
        if not index.is_tensor or target.place in (Place.HOST_TENSOR, Place.NUMPY, Place.PYTHON):
            return
        if index.dtype in (DType.INT, DType.NUMBER):  # an index that is no mask holds integers
            high = Place.DEVICE in (target.place, index.place) and target.is_tensor
            confidence = Confidence.HIGH if high else Confidence.MEDIUM
        elif index.dtype is DType.UNKNOWN and not _looks_like_mask_name(index_expr):
            confidence = Confidence.LOW  # may be a boolean mask, which does not sync
        else:
            return
        flat = method(index_expr, "flatten")
        replacement = as_statement(
            method(subscript.value, "index_fill_", [arg(cst.Integer("0")), arg(flat), arg(value)])
        )
        safe = target.is_tensor and index.dtype is DType.INT and _visibly_int64(index_expr, ctx)
        # ``index_fill_`` raises for a host index on a device tensor (measured), where ``x[idx] = c``
        # works: no rewrite that can only turn a sync into an error.
        fix = None
        if index.place is not Place.HOST_TENSOR:
            applicability = Applicability.SAFE if safe else Applicability.UNSAFE
            fix = FixProposal(node, replacement, applicability, "Write with `x.index_fill_(0, idx.flatten(), value)`")
        ctx.report(
            self,
            subscript,
            "`x[idx] = <scalar>` with an integer index tensor syncs; write `x.index_fill_(0, idx, value)` "
            "(it needs an int64 index on the tensor's device)",
            confidence,
            fix=fix,
        )

    def _check_advanced_index(
        self, subscript: cst.Subscript, value: cst.BaseExpression, elements: list[cst.BaseExpression], ctx: RuleContext
    ) -> None:
        """``x[:, idx] = 0.0``, ``x[rows, cols] = 1``: any integer index tensor makes it an ``index_put_``.

        Measured: ``x2d[:, idx] = 0.0`` syncs like ``x[idx] = 0.0``. No rewrite: ``index_fill_`` takes
        one dimension, and a pair of index tensors picks points, not rows.
        """
        if not _is_python_scalar(value, ctx):
            return
        target = ctx.inference.infer(subscript.value)
        if target.place in (Place.HOST_TENSOR, Place.NUMPY, Place.PYTHON):
            return
        indices = [ctx.inference.infer(e) for e in elements]
        int_tensors = [i for i in indices if i.is_tensor and i.dtype is DType.INT]
        if not int_tensors or any(i.place is Place.HOST_TENSOR for i in int_tensors):
            return
        high = target.is_tensor and Place.DEVICE in (target.place, *(i.place for i in int_tensors))
        ctx.report(
            self,
            subscript,
            "`x[..., idx] = <scalar>` with an integer index tensor goes through `index_put_`, which syncs; "
            "write a tensor value instead (`x[..., idx] = torch.full_like(...)`) or use `index_fill_` on one dimension",
            Confidence.HIGH if high else Confidence.MEDIUM,
        )


def _advanced_index(subscript: cst.Subscript) -> list[cst.BaseExpression] | None:
    """The index expressions of ``x[a, :, b]`` or ``x[(a, b)]`` (slices left out); None for one index."""
    if len(subscript.slice) == 1:
        only = subscript.slice[0].slice
        if isinstance(only, cst.Index) and isinstance(only.value, cst.Tuple):
            return [e.value for e in only.value.elements]
        return None
    return [e.slice.value for e in subscript.slice if isinstance(e.slice, cst.Index)]


RULES = (IntIndexWrite, IndexTensorWrite)
