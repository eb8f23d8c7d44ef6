"""What type annotations say about a value's place: ``torch.Tensor``, ``np.ndarray``, ``list[int]``..."""

from __future__ import annotations

import libcst as cst

from syncllint.analysis import torch_api as api
from syncllint.analysis.imports import ImportMap
from syncllint.analysis.values import (
    DEVICE_TENSOR,
    HOST_RECORD,
    NUMPY,
    PYTHON,
    PYTHON_SCALAR,
    TENSOR,
    Value,
)

_BY_ANNOTATION = (
    (api.TENSOR_ANNOTATIONS, TENSOR),
    (api.DEVICE_ANNOTATIONS, DEVICE_TENSOR),
    (api.NUMPY_ANNOTATIONS, NUMPY),
)


def annotation_value(node: cst.BaseExpression, imports: ImportMap) -> Value | None:
    """What an annotation says a value is (None: nothing useful, e.g. ``Any`` or a class of the project)."""
    # ``Optional[X]`` / ``X | None``: the X decides.
    if isinstance(node, cst.Subscript):
        name = imports.qualify(node.value) or ""
        if name.rsplit(".", 1)[-1] == "Optional" and node.slice:
            inner = node.slice[0].slice
            if isinstance(inner, cst.Index):
                return annotation_value(inner.value, imports)
        if name in api.NUMPY_ANNOTATIONS:
            return NUMPY
        if name.rsplit(".", 1)[-1] in ("list", "List", "Sequence", "tuple", "Tuple") and node.slice:
            inner = node.slice[0].slice  # ``List[MultimodalDataItem]``: a list of host records
            if isinstance(inner, cst.Index) and annotation_value(inner.value, imports) == HOST_RECORD:
                return HOST_RECORD
        return PYTHON if name.rsplit(".", 1)[-1] in ("list", "List", "tuple", "Tuple", "dict", "Dict", "Sequence", "set") else None
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
        # ``X | None`` is X; ``torch.Tensor | int`` could be either, so it says nothing.
        sides = [s for s in _union_members(node) if not (isinstance(s, cst.Name) and s.value == "None")]
        values = {annotation_value(side, imports) for side in sides}
        return values.pop() if len(values) == 1 else None
    if isinstance(node, cst.SimpleString):
        return None
    qualified = imports.qualify(node)
    if qualified is None:
        return None
    name = qualified
    if name in api.HOST_RECORDS:
        return HOST_RECORD
    for names, value in _BY_ANNOTATION:
        if name in names:
            return value
    if name in api.PYTHON_ANNOTATIONS:
        return PYTHON_SCALAR if name in ("int", "float", "bool") else PYTHON
    if name.split(".", 1)[0] in api.HOST_TABLE_MODULES:
        # ``df: pl.DataFrame``: host tables; their columns (``df["x"].unique()``) act like numpy.
        return NUMPY
    return None


def _union_members(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
        return _union_members(node.left) + _union_members(node.right)
    return [node]
