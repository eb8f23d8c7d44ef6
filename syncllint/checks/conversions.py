"""SYNC501-502: Python asking a device tensor for a number or a truth value."""

from __future__ import annotations

import libcst as cst

from syncllint.analysis.arguments import positional
from syncllint.analysis.conditions import (
    truth_confidence,
    truth_tested,
    value_confidence,
)
from syncllint.analysis.narrowing import Narrowing
from syncllint.checks.base import Rule, RuleContext
from syncllint.prefilter import DEVICE_TENSOR_EVIDENCE

_CONVERSIONS = {"int": "__int__", "float": "__float__", "bool": "__bool__", "complex": "__complex__"}
# ``math`` functions take floats: a tensor argument goes through ``Tensor.__float__`` (measured:
# ``math.sqrt(t)`` syncs like ``float(t)``).
_MATH_FLOAT_FUNCTIONS = frozenset(
    "math." + n
    for n in (
        "sqrt exp log log2 log10 log1p expm1 floor ceil trunc fabs isnan isinf isfinite isclose "
        "sin cos tan tanh atan erf pow"
    ).split()
)


def builtin_name(call: cst.Call, ctx: RuleContext) -> str | None:
    """The builtin a call invokes (``int``, ``print``, ...), None when shadowed by an import."""
    if not isinstance(call.func, cst.Name) or ctx.imports.is_imported(call.func.value):
        return None
    if ctx.inference.lookup(call.func.value) is not None:
        return None  # a local function or variable of that name
    return call.func.value


class ScalarConversion(Rule):
    code = "SYNC501"
    triggers = DEVICE_TENSOR_EVIDENCE
    name = "scalar-conversion-of-tensor"
    family = "implicit conversions"
    summary = "`int(t)`, `float(t)`, `bool(t)`, `complex(t)`, `math.f(t)` of a device tensor copy it to the host"

    def visit_Call(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if not isinstance(node, cst.Call):
            return
        builtin = builtin_name(node, ctx)
        if builtin in _CONVERSIONS:
            what = f"`{builtin}(t)`"
        elif ctx.qualify(node.func) in _MATH_FLOAT_FUNCTIONS:
            what = f"`{ctx.qualify(node.func)}(t)`"
        else:
            return
        argument = positional(node, 0)
        if argument is None:
            return
        confidence = value_confidence(ctx.inference.infer(argument))
        if confidence is None and builtin == "bool":
            # ``bool(x.any())`` asks the same question as ``if x.any():``, with the same evidence.
            confidence = truth_confidence(
                argument, ctx.inference, imports_torch=ctx.module_imports_torch, imports_numpy=ctx.module_imports_numpy
            )
        if confidence is None:
            return
        ctx.report(
            self,
            node,
            f"{what} copies a device tensor's value to the host, so the host waits for all queued GPU work; "
            "keep the value as a 0-d tensor on the device, or read a host mirror",
            confidence,
        )


class TensorAsCondition(Rule):
    code = "SYNC502"
    triggers = DEVICE_TENSOR_EVIDENCE
    name = "tensor-as-condition"
    family = "implicit conversions"
    summary = "`if t:`, `while t:`, `assert t`, `not t`, `t and x`, `a if t else b` read a device tensor's truth value"

    def _check(self, condition: cst.BaseExpression, ctx: RuleContext, where: str) -> None:
        for operand in truth_tested(condition, Narrowing(ctx.inference)):
            confidence = truth_confidence(
                operand, ctx.inference, imports_torch=ctx.module_imports_torch, imports_numpy=ctx.module_imports_numpy
            )
            if confidence is None:
                continue
            ctx.report(
                self,
                operand,
                f"{where} takes the truth value of a device tensor (`Tensor.__bool__`): the host waits for the "
                "GPU to compute it; decide on the device with `torch.where`, or test a host-side value",
                confidence,
            )

    def visit_If(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if isinstance(node, cst.If):
            self._check(node.test, ctx, "`if`")

    def visit_While(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if isinstance(node, cst.While):
            self._check(node.test, ctx, "`while`")

    def visit_Assert(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if isinstance(node, cst.Assert):
            self._check(node.test, ctx, "`assert`")

    def visit_IfExp(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if isinstance(node, cst.IfExp):
            self._check(node.test, ctx, "a conditional expression")

    def visit_CompIf(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if isinstance(node, cst.CompIf):
            self._check(node.test, ctx, "a comprehension's `if`")

    def visit_UnaryOperation(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            self._check(node.expression, ctx, "`not`")

    def visit_BooleanOperation(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        # Only the left operand is always truth-tested; the right one is returned as a value
        # (``0 or t`` does not sync, measured), unless the whole is a condition (seen above).
        if isinstance(node, cst.BooleanOperation):
            if isinstance(node.operator, cst.Or) and ctx.inference.holds_its_none_default(node.left):
                # ``threshold = threshold or torch.linspace(...)`` with ``threshold=None``: a None
                # test written the short way. A tensor argument of more than one element would
                # raise there, so the code is not written to receive one.
                return
            self._check(node.left, ctx, f"`{'and' if isinstance(node.operator, cst.And) else 'or'}`")


RULES = (ScalarConversion, TensorAsCondition)
