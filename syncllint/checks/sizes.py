"""SYNC309: a device tensor passed where torch reads a Python number (a size, a length, ``k``, a fill).

torch converts such an argument with ``.item()`` behind the scenes. Measured on an H200 (torch
2.11): ``torch.arange(n)``, ``torch.zeros(n)``, ``x.view(n, -1)``, ``x.narrow(0, 0, n)``,
``torch.full(size, t)``, ``x.topk(n)`` ... all sync with a CUDA 0-d ``n``/``t`` and none does with a
CPU one. Tensor-accepting slots (``clamp(max=t)``, ``fill_(t)``, ``x * t``, ``pow(t)``) do not
sync and are not listed here.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from syncllint.analysis.arguments import keyword
from syncllint.checks.base import Rule, RuleContext
from syncllint.checks.torch_calls import match_torch_call, tensor_argument_confidence
from syncllint.diagnostics import Confidence
from syncllint.prefilter import DEVICE_TENSOR_EVIDENCE


@dataclass(frozen=True)
class _Slots:
    """Where an op reads Python numbers. Positions count after the operand for tensor ops."""

    numbers: tuple[int, ...] = ()  # positional indexes read as one number
    sizes_from: int | None = None  # every positional from here on is a size (a tuple/list holds sizes)
    size_at: tuple[int, ...] = ()  # positional indexes holding a size or a tuple/list of sizes
    fills: tuple[int, ...] = ()  # positional indexes of a fill value
    keywords: tuple[str, ...] = ()  # keywords read as one number
    size_keywords: tuple[str, ...] = ()  # keywords holding a size or a tuple/list of sizes


# torch.<factory>(...): positions count from the first argument (there is no operand).
_FACTORIES = {
    **{n: _Slots(sizes_from=0, size_keywords=("size",)) for n in ("zeros", "ones", "empty", "rand", "randn")},
    "full": _Slots(size_at=(0,), fills=(1,), size_keywords=("size",)),
    "arange": _Slots(numbers=(0, 1, 2), keywords=("start", "end", "step")),
    "range": _Slots(numbers=(0, 1, 2), keywords=("start", "end", "step")),
    "linspace": _Slots(numbers=(0, 1, 2), keywords=("start", "end", "steps")),
    "logspace": _Slots(numbers=(0, 1, 2), keywords=("start", "end", "steps")),
    "randint": _Slots(size_at=(0, 1, 2), keywords=("low", "high"), size_keywords=("size",)),
    "randperm": _Slots(numbers=(0,), keywords=("n",)),
    "eye": _Slots(numbers=(0, 1), keywords=("n", "m")),
    "full_like": _Slots(fills=(1,)),
}
# Ops on a tensor, as ``t.op(...)`` (and ``torch.op(t, ...)`` where ``_FUNCTIONS`` says so).
_TENSOR_OPS = {
    **{n: _Slots(sizes_from=0, size_keywords=("size", "shape")) for n in ("view", "reshape", "expand", "repeat")},
    **{n: _Slots(sizes_from=0, size_keywords=("size",)) for n in ("new_zeros", "new_ones", "new_empty")},
    "new_full": _Slots(size_at=(0,), fills=(1,), size_keywords=("size",)),
    "narrow": _Slots(numbers=(1, 2), keywords=("start", "length")),
    "topk": _Slots(numbers=(0,), keywords=("k",)),
    "kthvalue": _Slots(numbers=(0,), keywords=("k",)),
    "split": _Slots(size_at=(0,), size_keywords=("split_size", "split_size_or_sections")),
    "roll": _Slots(size_at=(0,), size_keywords=("shifts",)),
    **{n: _Slots(keywords=("alpha",)) for n in ("add", "add_", "sub", "sub_")},
}
_FUNCTIONS = frozenset(("reshape", "narrow", "topk", "kthvalue", "split", "roll", "add", "sub"))


class TensorAsSize(Rule):
    code = "SYNC309"
    triggers = DEVICE_TENSOR_EVIDENCE
    name = "tensor-as-size"
    family = "data-dependent shapes"
    summary = "a device tensor used as a size, length, `k` or fill value is read back with a hidden `.item()`"

    def visit_Call(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if not isinstance(node, cst.Call):
            return
        qualified = ctx.qualify(node.func)
        if qualified is not None and qualified.startswith("torch.") and qualified.count(".") == 1:
            name = qualified[len("torch."):]
            slots = _FACTORIES.get(name)
            if slots is not None:
                self._check(node, name, slots, [a.value for a in node.args if a.keyword is None and not a.star], ctx)
                return
        call = match_torch_call(node, ctx, _TENSOR_OPS)
        if call is None or (not call.is_method and call.name not in _FUNCTIONS):
            return
        self._check(node, call.name, _TENSOR_OPS[call.name], call.positionals(), ctx)

    def _check(self, node: cst.Call, op: str, slots: _Slots, args: list[cst.BaseExpression], ctx: RuleContext) -> None:
        candidates: list[tuple[cst.BaseExpression, bool]] = []  # (expression, is a fill value)
        for index, arg in enumerate(args):
            if index in slots.numbers or index in slots.fills:
                candidates.append((arg, index in slots.fills))
            elif index in slots.size_at or (slots.sizes_from is not None and index >= slots.sizes_from):
                candidates.extend((el, False) for el in _sizes(arg))
        for name in slots.keywords:
            value = keyword(node, name)
            if value is not None:
                candidates.append((value, False))
        for name in slots.size_keywords:
            value = keyword(node, name)
            if value is not None:
                candidates.extend((el, False) for el in _sizes(value))
        fill_value = keyword(node, "fill_value")
        if fill_value is not None and slots.fills:
            candidates.append((fill_value, True))
        for expr, fill in candidates:
            confidence = tensor_argument_confidence(ctx.inference.infer(expr))
            if confidence is None:
                continue
            self._report(expr, op, fill, confidence, ctx)
            return

    def _report(self, expr: cst.BaseExpression, op: str, fill: bool, confidence: Confidence, ctx: RuleContext) -> None:
        if fill:
            advice = "build the tensor with `t.expand(size)` (a view) or `torch.empty(size, ...).copy_(t)` instead"
            what = "fill value"
        else:
            advice = "pass a host int (a `*_cpu` mirror, `.shape`/`.size()`, or a bound known in advance)"
            what = "size/count"
        ctx.report(
            self,
            expr,
            f"`{op}` reads this tensor as a Python {what}: a hidden `.item()` makes the host wait for the GPU; {advice}",
            confidence,
        )


def _sizes(arg: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The size expressions in one size argument: the elements of a tuple/list literal, else itself."""
    if isinstance(arg, (cst.Tuple, cst.List)):
        return [el.value for el in arg.elements if not isinstance(el, cst.StarredElement)]
    return [arg]


RULES = (TensorAsSize,)
