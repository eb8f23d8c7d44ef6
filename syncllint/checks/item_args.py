"""Fixes for SYNC101 when ``.item()`` only feeds an argument that also takes a 0-d tensor.

``x.fill_(t.item())`` -> ``x.fill_(t)`` and ``x.clamp(min=t.item())`` -> ``x.clamp(min=t)`` (also
``max``, ``clamp_``, ``clip``, ``clip_``): measured on an H200, no sync and the same values and dtype.
``fill_`` rejects a shape-(1,) value (measured), so a tensor not known to be 0-d is reshaped to ``()``.
"""

from __future__ import annotations

import libcst as cst

from syncllint.analysis.values import Place
from syncllint.checks.base import FixProposal, RuleContext
from syncllint.diagnostics import Applicability
from syncllint.fixbuild import scalar_from_item

_CLAMPS = ("clamp", "clamp_", "clip", "clip_")
_BOUNDS = ("min", "max")


def _is_item_call(node: cst.BaseExpression) -> bool:
    return (
        isinstance(node, cst.Call)
        and not node.args
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "item"
    )


def _candidates(call: cst.Call, ctx: RuleContext) -> tuple[list[cst.BaseExpression], Applicability] | None:
    """The ``.item()`` arguments of a fill_/clamp call and how safe passing the tensor is."""
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "fill_":
        values = [a.value for a in call.args if a.keyword is None or a.keyword.value == "value"][:1]
        return values, Applicability.SAFE
    qualified = ctx.qualify(call.func) or ""
    if isinstance(call.func, cst.Attribute) and call.func.attr.value in _CLAMPS and not qualified.startswith("torch."):
        receiver = ctx.inference.infer(call.func.value)
        first_bound = 0
    elif qualified in ("torch.clamp", "torch.clip"):
        plain = [a.value for a in call.args if a.keyword is None]
        receiver = ctx.inference.infer(plain[0]) if plain else ctx.inference.infer(cst.Name("_"))
        first_bound = 1
    else:
        return None
    if receiver.place in (Place.HOST_TENSOR, Place.NUMPY, Place.PYTHON):
        return None  # numpy's clip, or a host tensor that a device bound would not match
    plain_args = [a.value for a in call.args if a.keyword is None][first_bound : first_bound + 2]
    keyed = [a.value for a in call.args if a.keyword is not None and a.keyword.value in _BOUNDS]
    # An unknown receiver might be something other than a tensor: leave it to a human.
    applicability = Applicability.SAFE if receiver.is_tensor else Applicability.UNSAFE
    return plain_args + keyed, applicability


class ItemArgumentFixes:
    """Remembers, per ``.item()`` call node, the fix its enclosing call allows."""

    def __init__(self) -> None:
        self._pending: dict[int, tuple[cst.CSTNode, FixProposal]] = {}

    def note_call(self, call: cst.Call, ctx: RuleContext) -> None:
        found = _candidates(call, ctx)
        if found is None:
            return
        values, applicability = found
        for value in values:
            if not _is_item_call(value) or not isinstance(value, cst.Call):
                continue
            assert isinstance(value.func, cst.Attribute)
            zero_dim = ctx.inference.infer(value.func.value).zero_dim
            replacement = scalar_from_item(value, zero_dim)
            if replacement is not None:
                message = "Pass the 0-d tensor instead of reading it with `.item()`"
                self._pending[id(value)] = (value, FixProposal(value, replacement, applicability, message))

    def take(self, item_call: cst.CSTNode) -> FixProposal | None:
        entry = self._pending.pop(id(item_call), None)
        if entry is None or entry[0] is not item_call:
            return None
        return entry[1]
