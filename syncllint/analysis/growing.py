"""Lists a function builds element by element: ``parts = []`` then ``parts.append(t.cpu())``.

A literal list whose elements are all host tensors passes for host data (``DeviceInference._container``),
so ``torch.cat(parts)`` and ``parts[0]`` are host reads. The same holds for a list that starts empty
and only ever grows by host tensors, as far as the walk has seen (``append`` / ``extend`` in source
order, loops included): sglang's ``image_grid_thws.append(item.model_specific_data["grid_thws"])``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from syncllint.analysis.values import HOST_TENSOR, PYTHON, Place

if TYPE_CHECKING:
    from syncllint.analysis.devices import DeviceInference

_GROWING_METHODS = frozenset(("append", "extend"))


def starts_empty(value: cst.BaseExpression) -> bool:
    """``[]``: a list the function is about to grow."""
    return isinstance(value, cst.List) and not value.elements


def note_growth(inference: DeviceInference, call: cst.Call) -> None:
    """``name.append(x)`` / ``name.extend(xs)`` of a list that started empty in this function."""
    func = call.func
    if not (
        isinstance(func, cst.Attribute)
        and func.attr.value in _GROWING_METHODS
        and isinstance(func.value, cst.Name)
        and len(call.args) == 1
        and call.args[0].keyword is None
        and not call.args[0].star
    ):
        return
    growing = inference.growing_lists()
    name = func.value.value
    if name not in growing:
        return
    if inference.infer(call.args[0].value).place is Place.HOST_TENSOR:
        inference.set_local(name, HOST_TENSOR)
    else:  # one element of another kind: an ordinary list from here on
        growing.discard(name)
        inference.set_local(name, PYTHON)

