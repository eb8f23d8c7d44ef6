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
from syncllint.traversal import walk

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


# Reads that leave host data whatever the tensor was: ``t.cpu()``, ``t.numpy()``, ``t.tolist()``.
_HOST_RESULTS = frozenset(("cpu", "numpy", "tolist", "item"))


def host_list_fields(cls: cst.ClassDef) -> frozenset[str]:
    """``self.`` fields of ``cls`` that its methods only ever set to ``[]`` and grow by host reads
    (``self._val_targets.append(targets.cpu())`` in ``validation_step``): lists of host tensors,
    wherever a method reads them (``torch.cat(self._val_targets)`` in ``on_validation_epoch_end``)."""
    scan = _FieldGrowth()
    for statement in cls.body.body:
        if isinstance(statement, cst.FunctionDef):
            walk(statement.body, scan)
    return frozenset(scan.grown - scan.other)


class _FieldGrowth(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.grown: set[str] = set()  # fields grown by a host read
        self.other: set[str] = set()  # fields set or grown otherwise: not known to hold host data

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._set(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._set(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._set(node.target, None)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in _GROWING_METHODS):
            return
        field = _field(func.value)
        if field is None:
            return
        if len(node.args) == 1 and not node.args[0].star and _reads_to_host(node.args[0].value):
            self.grown.add(field)
        else:
            self.other.add(field)

    def _set(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._set(element.value, None)
            return
        field = _field(target)
        if field is not None and not (value is not None and starts_empty(value)):
            self.other.add(field)


def _field(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        return "self." + expr.attr.value
    return None


def _reads_to_host(expr: cst.BaseExpression) -> bool:
    """``targets.cpu()``, ``out.detach().cpu().numpy()``, ``loss.item()``: a host read's result."""
    return (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value in _HOST_RESULTS
        and not expr.args
    )
