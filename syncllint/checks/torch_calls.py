"""Matching ``torch.op(t, ...)`` and ``t.op(...)`` as one call shape, and judging their operands.

Many torch ops exist both as a function and as a tensor method (``torch.nonzero(m)`` /
``m.nonzero()``). Rules see both through :class:`TorchCall`: ``operand`` is the tensor the op
works on (the receiver, or the first positional argument of the function), and ``arg(i)``
counts positions after it, so one index table serves both spellings.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

import libcst as cst

from syncllint.analysis.arguments import keyword, positional
from syncllint.analysis.values import Place, Value
from syncllint.checks.base import Rule, RuleContext, receiver_confidence
from syncllint.diagnostics import Confidence

_NOT_TENSORS = ("self", "cls", "super")
# Modules whose objects share method names with tensors (``arr.nonzero()``, ``series.unique()``).
_LOOKALIKE_MODULES = ("numpy", "pandas")


@dataclass(frozen=True)
class TorchCall:
    name: str
    node: cst.Call
    operand: cst.BaseExpression | None
    is_method: bool
    qualified: str | None  # the function's qualified name; None for a method call

    def arg(self, index: int, name: str | None = None) -> cst.BaseExpression | None:
        """The ``index``-th argument after the operand, or the keyword ``name``."""
        if name is not None:
            found = keyword(self.node, name)
            if found is not None:
                return found
        return positional(self.node, index + (0 if self.is_method else 1))

    def positionals(self) -> list[cst.BaseExpression]:
        """Positional arguments after the operand."""
        values = [a.value for a in self.node.args if a.keyword is None and not a.star]
        return values if self.is_method else values[1:]

    def has_keyword(self, name: str) -> bool:
        return keyword(self.node, name) is not None


def match_torch_call(
    node: cst.CSTNode,
    ctx: RuleContext,
    names: Iterable[str],
    *,
    namespaces: tuple[str, ...] = ("torch",),
    methods: bool = True,
) -> TorchCall | None:
    """``node`` as a call of one of ``names``, as ``<namespace>.name(...)`` or ``recv.name(...)``."""
    if not isinstance(node, cst.Call):
        return None
    func = node.func
    wanted = frozenset(names)
    if isinstance(func, cst.Name):
        qualified = ctx.qualify(func)
        leaf = qualified.rsplit(".", 1)[-1] if qualified else ""
        if qualified and leaf in wanted and qualified.rsplit(".", 1)[0] in namespaces:
            return TorchCall(leaf, node, positional(node, 0), False, qualified)
        return None
    if not isinstance(func, cst.Attribute) or func.attr.value not in wanted:
        return None
    qualified = ctx.qualify(func)
    if qualified is not None and qualified.rsplit(".", 1)[0] in namespaces:
        return TorchCall(func.attr.value, node, positional(node, 0), False, qualified)
    if qualified is not None and qualified.split(".", 1)[0] in ("torch", *_LOOKALIKE_MODULES, "math"):
        return None  # another module's function of the same name (``np.unique``, ``torch.special.x``)
    if not methods:
        return None
    receiver = func.value
    if isinstance(receiver, cst.Name) and ctx.imports.is_imported(receiver.value):
        return None  # ``module.op(...)`` of some other imported module
    if isinstance(receiver, cst.Name) and receiver.value in _NOT_TENSORS and not ctx.inference.infer(receiver).is_tensor:
        return None  # ``self.unique()`` of a class; a tensor the code binds to ``cls`` still counts
    if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Name) and receiver.func.value == "super":
        return None
    return TorchCall(func.attr.value, node, receiver, True, None)


def operand_confidence(
    call: TorchCall,
    ctx: RuleContext,
    others: Iterable[cst.BaseExpression | None] = (),
    *,
    lookalike_method: bool = False,
) -> Confidence | None:
    """How sure we are that ``call`` runs on a device tensor; None for host data.

    The operand decides: host data (a CPU tensor, numpy, Python values) never syncs. A device
    tensor among ``others`` (the op's other tensor inputs) raises an unknown operand to high,
    since torch requires them on one device. ``lookalike_method``: numpy or pandas objects have a
    method of this name, so an unknown receiver in a module using them is only a low guess.
    """
    if call.operand is None:
        return None
    value = ctx.inference.infer(call.operand)
    confidence = receiver_confidence(value, ctx)
    if confidence is None:
        return None
    if value.place is Place.UNKNOWN:
        if any(_is_device(ctx.inference.infer(o)) for o in others if o is not None):
            return Confidence.HIGH
        if call.is_method and lookalike_method and any(ctx.imports.imports_module(m) for m in _LOOKALIKE_MODULES):
            return Confidence.LOW
        if call.is_method and not ctx.module_imports_torch:
            return Confidence.LOW
    return confidence


def tensor_argument_confidence(value: Value) -> Confidence | None:
    """For an argument torch reads as a Python number: a device tensor syncs, a host one does not.

    A tensor only by convention (an unannotated ``forward`` parameter, marked ``assumed`` where
    inference marks it) is too weak here: sizes and counts are usually ints.
    """
    if value.place is Place.DEVICE:
        return Confidence.HIGH
    if value.place is Place.TENSOR and not getattr(value, "assumed", False):
        # A known 0-d result (``k.max()``) passed as a size is a strong sign; an element of an
        # iterated tensor or a ``torch.cat`` of lists is as likely a host tensor (vLLM's vision
        # encoders build ``grid_thw`` and ``cu_seqlens`` on the CPU).
        return Confidence.MEDIUM if value.zero_dim else Confidence.LOW
    return None


def _is_device(value: Value) -> bool:
    return value.place is Place.DEVICE


class TorchCallRule(Rule):
    """A rule that is data: these torch functions/methods sync whenever their operand may live on
    the device. Subclasses list ``functions``, further tensor inputs and the message."""

    functions: ClassVar[tuple[str, ...]]
    # ``(position after the operand, keyword)`` of other tensor inputs: a device tensor there puts
    # the operand on the device too (torch requires one device).
    other_inputs: ClassVar[tuple[tuple[int, str], ...]] = ()
    # numpy/pandas objects have a method of this name: an unknown receiver is only a low guess.
    lookalike_method: ClassVar[bool] = False
    message: ClassVar[str]  # may use {name}, the op as written

    def visit_Call(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        call = match_torch_call(node, ctx, self.functions)
        if call is None:
            return
        others = [call.arg(index, name) for index, name in self.other_inputs]
        confidence = operand_confidence(call, ctx, others, lookalike_method=self.lookalike_method)
        if confidence is not None:
            ctx.report(self, call.node, self.message.format(name=call.name), confidence)
