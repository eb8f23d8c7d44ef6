"""Ranks the code shows: ``torch.zeros(n)`` is 1-D, ``x.view(4, 4)`` 2-D (SYNC402 needs them:
only a write to one element syncs)."""

from __future__ import annotations

import libcst as cst

from syncllint.analysis import torch_api as api

# Methods that return a tensor of the same shape, place and dtype.
SAME_SHAPE_METHODS = frozenset(("clone", "contiguous", "detach", "zero_", "fill_", "copy_"))


def shape_rank(call: cst.Call) -> int | None:
    """``x.view(4, 4)`` / ``x.reshape((n, -1))``: the rank of the new shape (a dtype or a shape name: unknown)."""
    sizes = [a.value for a in call.args]
    if any(a.star or a.keyword is not None for a in call.args) or not sizes:
        return None
    if len(sizes) == 1:
        only = sizes[0]
        if isinstance(only, (cst.Tuple, cst.List)):
            return None if any(isinstance(el, cst.StarredElement) for el in only.elements) else len(only.elements)
        return 1 if isinstance(only, (cst.Integer, cst.UnaryOperation)) else None
    return len(sizes)


# Elements of a list literal read as numbers: literals, and names (``torch.tensor([fill])``).
_SCALAR_ELEMENTS = (cst.Integer, cst.Float, cst.UnaryOperation, cst.Name, cst.Attribute)


def factory_size_arguments(qualified: str, call: cst.Call) -> list[cst.BaseExpression] | None:
    """The positional arguments that hold a sized factory's size: all of ``zeros(a, b)``, the first
    of ``full(size, value)``, the last of ``randint(low, high, size)``; None for other calls."""
    sizes = [a.value for a in call.args if a.keyword is None]
    if qualified == "torch.full":
        return sizes[:1]
    if qualified == "torch.randint":
        return sizes[-1:]  # randint(low, high, size) / randint(high, size)
    return sizes if qualified in api.SIZED_FACTORIES else None


def factory_rank(qualified: str, call: cst.Call) -> int | None:
    """``torch.zeros(n)`` / ``zeros((a, b))`` / ``arange(n)`` / ``tensor([1, 2])``: the rank the call shows."""
    if qualified in ("torch.arange", "torch.range", "torch.linspace", "torch.logspace", "torch.randperm"):
        return 1
    if any(a.star for a in call.args):
        return None
    sizes = factory_size_arguments(qualified, call)
    if sizes is None:
        data = [a.value for a in call.args if a.keyword is None]
        builds_from_data = qualified in ("torch.tensor", "torch.as_tensor") or qualified in api.LEGACY_CONSTRUCTORS
        if builds_from_data and data and isinstance(data[0], (cst.List, cst.Tuple)):
            # ``tensor([1, 2])``, ``Tensor([fill])``: a flat list of numbers (or names of them).
            elements = data[0].elements
            if elements and all(isinstance(el.value, _SCALAR_ELEMENTS) for el in elements):
                return 1
        return None
    if len(sizes) == 1 and isinstance(sizes[0], (cst.Tuple, cst.List)):
        if any(isinstance(el, cst.StarredElement) for el in sizes[0].elements):
            return None
        return len(sizes[0].elements)
    if len(sizes) == 1 and not isinstance(sizes[0], cst.Integer):
        # ``zeros(n)`` is 1-D, but ``zeros(shape)`` / ``zeros(x.size())`` take a whole shape.
        leaf = sizes[0].attr.value if isinstance(sizes[0], cst.Attribute) else sizes[0].value if isinstance(sizes[0], cst.Name) else ""
        if not leaf or "shape" in leaf.lower() or leaf.lower() in ("size", "sizes", "dims"):
            return None
    if not sizes or qualified == "torch.randint" and not isinstance(sizes[0], (cst.Tuple, cst.List)):
        return None  # ``size=`` by keyword, or randint's bounds only
    return len(sizes)
