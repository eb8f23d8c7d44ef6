"""Calls that stay in the module: its own functions (by their returns) and its submodules.

A mixin of DeviceInference: ``lookup`` and ``infer`` come from there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import libcst as cst

from syncllint.analysis import torch_api as api
from syncllint.analysis.arguments import keyword, positional
from syncllint.analysis.imports import dotted_name
from syncllint.analysis.module_state import MODULE_MOVES, holds_a_built_module
from syncllint.analysis.values import (
    ASSUMED_TENSOR,
    HOST_TENSOR,
    PYTHON_SCALAR,
    Place,
    Value,
    combine_operands,
)

if TYPE_CHECKING:
    from syncllint.analysis.devices import DeviceInference


class LocalCalls:
    _returns: dict[str, Place]
    _follows: dict[str, tuple[str, int]]
    _elements: dict[str, tuple[Place | None, ...]]

    if TYPE_CHECKING:  # provided by DeviceInference

        def lookup(self, key: str) -> Value | None: ...

        def infer(self, node: cst.BaseExpression) -> Value: ...

    def own_function_result(self, call: cst.Call) -> Value | None:
        """``_snapshot(...)`` / ``self._snapshot(...)`` of this module, or a project helper it imports
        (``load_dump(...)``, ``loader.load_dump(...)``), when the helper's returns show the place."""
        key = dotted_name(call.func)
        if key is None:
            return None
        place = self._returns.get(key)
        if place is None and key in self._follows:
            # ``pad_rows(rows, n)`` returning ``torch.cat([rows, rows.new_zeros(...)])``: where ``rows`` is.
            argument = _bound_argument(call, *self._follows[key])
            shown = self.infer(argument) if argument is not None else None
            place = shown.place if shown is not None and shown.place in (Place.HOST_TENSOR, Place.DEVICE) else None
        if place is Place.PYTHON:
            return PYTHON_SCALAR  # ``def _n_ones(n: int) -> int``
        return None if place is None else Value(place)

    def own_function_elements(self, call: cst.Call) -> tuple[Place | None, ...] | None:
        """Per element of the tuple a helper returns (``return should_pad, lens_cpu``), where it
        lives when every return shows it, or a torch call whose parts have fixed places; None when
        the call is not known to return tuples. Unpacking and ``call(...)[i]`` both read it."""
        if cast("DeviceInference", self).imports.qualify(call.func) in api.HOST_LENGTHS_RESULTS:
            return (None, Place.HOST_TENSOR)  # ``out, lengths = pad_packed_sequence(packed)``
        key = dotted_name(call.func)
        return None if key is None else self._elements.get(key)

    def layer_call(self, call: cst.Call) -> Value | None:
        """``self.proj(x)`` of a submodule: a tensor where ``x`` is (by convention when x is unknown)."""
        key = dotted_name(call.func)
        if key is None:
            return None
        inference = cast("DeviceInference", self)
        if holds_a_built_module(call.func, inference, moved=False) or isinstance(call.func, cst.Attribute) and (
            call.func.attr.value not in MODULE_MOVES and holds_a_built_module(call.func.value, inference, moved=False)
        ):
            return self._fresh_module_call(call)  # ``mapper(x)``, ``mapper.log_prob(x)``
        if key.count(".") > 1 or "." in key and not key.startswith("self."):
            return None
        callee = self.lookup(key)  # ``self.proj``, or a local alias ``vt = self.vision_tower``
        if callee is None or not callee.layer:
            return None
        tensors = [v for v in (self.infer(a.value) for a in call.args if a.keyword is None) if v.is_tensor]
        if not tensors:
            return ASSUMED_TENSOR
        place = combine_operands(tensors)
        return Value(place.place, assumed=place.assumed)

    def _fresh_module_call(self, call: cst.Call) -> Value | None:
        """``mapper(logits)`` of a ``mapper = BinaryMapper(...)`` built on the host above and never
        moved: given host tensors (and nothing that may be on a device), it answers on the host."""
        places = [self.infer(a.value) for a in call.args]
        if not any(v.place is Place.HOST_TENSOR for v in places):
            return None
        if any(v.may_be_device for v in places):
            return None
        return HOST_TENSOR


def _bound_argument(call: cst.Call, parameter: str, position: int) -> cst.BaseExpression | None:
    """The argument a call gives ``parameter``: by keyword, or at ``position`` when no ``*args`` comes first."""
    found = keyword(call, parameter)
    if found is not None or position < 0 or any(arg.star for arg in call.args[: position + 1]):
        return found
    return positional(call, position)


def local_callee(func: cst.BaseExpression, keyed: bool = False) -> str | None:
    """``helper(...)`` -> ``helper``; ``self.helper(...)`` / ``cls.helper(...)`` -> ``helper``
    (``self.helper`` when ``keyed``, to tell methods from functions): calls that stay in the module."""
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in ("self", "cls"):
        return ("self." if keyed else "") + func.attr.value
    return None
