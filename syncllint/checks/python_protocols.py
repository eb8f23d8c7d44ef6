"""SYNC504-505: Python protocols that read a device tensor's value: ``__index__`` and comparisons.

Measured (H200, torch 2.11): ``range(t)``, ``x[t0]`` with a 0-d tensor, ``x[:t]``, ``[0] * t``
and ``lst[t]`` sync once (``Tensor.__index__``); ``max``/``min``/``sorted``/``any``/``all`` over a
tensor sync once per comparison. ``sum(t)``, ``len(t)``, ``list(t)``, ``tuple(t)``, ``zip`` and
iterating rows do not sync, so they are never reported.
"""

from __future__ import annotations

import libcst as cst

from syncllint.analysis.conditions import value_confidence
from syncllint.checks.base import Rule, RuleContext
from syncllint.checks.conversions import builtin_name
from syncllint.diagnostics import Confidence
from syncllint.prefilter import DEVICE_TENSOR_EVIDENCE

_SEQUENCE_LITERALS = (cst.List, cst.Tuple, cst.ListComp, cst.SimpleString, cst.ConcatenatedString)
_INDEX_MESSAGE = (
    "uses a device tensor as a Python index or size (`Tensor.__index__`): the host waits for the GPU "
    "to read the value; keep sizes on the host (a `*_cpu` mirror), or stay on the device with "
    "`index_select` / `narrow` and host bounds"
)


class TensorAsIndex(Rule):
    code = "SYNC504"
    triggers = DEVICE_TENSOR_EVIDENCE
    name = "tensor-as-python-index"
    family = "implicit conversions"
    summary = "`range(t)`, `x[t0]` (0-d index), `x[:t]`, `[0] * t` convert a device tensor with `__index__`"

    def _report(self, expr: cst.BaseExpression, ctx: RuleContext, what: str, zero_dim_only: bool = False) -> None:
        value = ctx.inference.infer(expr)
        confidence = value_confidence(value)
        if confidence is None or (zero_dim_only and not value.zero_dim):
            return
        ctx.report(self, expr, f"{what} {_INDEX_MESSAGE}", confidence)

    def visit_Call(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if isinstance(node, cst.Call) and builtin_name(node, ctx) == "range":
            for arg in node.args:
                if arg.keyword is None and not arg.star:
                    self._report(arg.value, ctx, "`range(t)`")

    def visit_Subscript(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if not isinstance(node, cst.Subscript):
            return
        for element in node.slice:
            part = element.slice
            if isinstance(part, cst.Slice):
                for bound in (part.lower, part.upper, part.step):
                    if bound is not None:
                        self._report(bound, ctx, "`x[a:b]` with a tensor bound")
            elif isinstance(part, cst.Index) and not ctx.is_store(node):
                # A 1-d integer index tensor gathers on the device (no sync, measured); only a
                # known 0-d one is turned into a Python int.
                self._report(part.value, ctx, "`x[t]` with a 0-d tensor", zero_dim_only=True)

    def visit_BinaryOperation(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if not isinstance(node, cst.BinaryOperation) or not isinstance(node.operator, cst.Multiply):
            return
        for sequence, count in ((node.left, node.right), (node.right, node.left)):
            if isinstance(sequence, _SEQUENCE_LITERALS):
                self._report(count, ctx, "repeating a Python sequence by a tensor")


class BuiltinOverTensor(Rule):
    code = "SYNC505"
    triggers = DEVICE_TENSOR_EVIDENCE
    name = "python-builtin-over-tensor"
    family = "implicit conversions"
    summary = "`max`/`min`/`sorted`/`any`/`all` over a device tensor compare element by element on the host"

    def visit_Call(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if not isinstance(node, cst.Call):
            return
        builtin = builtin_name(node, ctx)
        if builtin not in ("max", "min", "sorted", "any", "all"):
            return
        best: Confidence | None = None
        for arg in node.args:
            if arg.keyword is None:
                found = value_confidence(ctx.inference.infer(arg.value))
                if found is not None:
                    best = found if best is None else max(best, found)
        if best is None:
            return
        ctx.report(
            self,
            node,
            f"Python's `{builtin}()` over a device tensor takes the truth value of tensor elements or "
            "comparisons on the host, one sync each (measured: `max(t[:4])` 3 syncs, `sorted` 5); use "
            f"the tensor method (`t.max()`, `t.sort()`, `t.any()`) and keep the result on the device",
            best,
        )


RULES = (TensorAsIndex, BuiltinOverTensor)
