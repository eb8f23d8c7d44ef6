"""Names the code shows hold no tensor: ``self.out_normalizer.transform(y)`` calls a method that
``torch.Tensor`` lacks, so ``if self.out_normalizer:`` tests an object, not a tensor's value.

Only weak readings give way to this (a value of unknown kind, or a tensor assumed from ``.to(...)``,
which modules share): what a factory or a device check shows stands. A name tested with
``isinstance`` / ``hasattr``, or also called with a method only tensors have (Lightning's
``self.value``, a tensor or a metric by a flag), may hold either kind, and a local bound more than
once may change kind between bindings, so none of these is read.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import libcst as cst

from syncllint.analysis.growing import host_list_fields
from syncllint.analysis.imports import dotted_name
from syncllint.analysis.tensor_methods import (
    SHARED_WITH_MODULES_AND_ARRAYS,
    TENSOR_METHODS,
)
from syncllint.traversal import walk

# Methods tensor-like containers share with dicts (TensorDict, DTensor, HF BatchEncoding): a call
# of one of these says nothing about whether ``.any()`` or ``.cpu()`` on the name reaches a GPU.
_CONTAINER_METHODS = frozenset(
    """
    get set items keys values update pop setdefault copy select exclude apply named_apply
    full_tensor to_local redistribute to_dict flatten_keys unflatten_keys memmap memmap_ lock_ unlock_
    set_ get_at set_at_ update_ is_empty entry_class batch_size names auto_batch_size_
    """.split()
)
# Calls that ask what kind a name holds: the code expects more than one.
_KIND_TESTS = frozenset(("isinstance", "hasattr", "getattr", "type", "callable", "is_tensor", "torch.is_tensor"))


@dataclass(frozen=True)
class FunctionUsage:
    """What a function's body shows of its names, read on first need: most bodies never ask."""

    node: cst.FunctionDef

    @cached_property
    def objects(self) -> frozenset[str]:
        return objects_shown(self.node)


@dataclass(frozen=True)
class ClassUsage:
    """What a class's methods show of its ``self.`` fields, read on first need."""

    node: cst.ClassDef

    @cached_property
    def object_fields(self) -> frozenset[str]:
        return fields_shown(self.node)

    @cached_property
    def host_lists(self) -> frozenset[str]:
        return host_list_fields(self.node)


def objects_shown(function: cst.FunctionDef) -> frozenset[str]:
    """The function's names (parameters included) bound once, and called with a non-tensor method."""
    scan = _Scan()
    walk(function.body, scan)
    bindings = dict(scan.bindings)
    for param in (*function.params.posonly_params, *function.params.params, *function.params.kwonly_params):
        bindings[param.name.value] = bindings.get(param.name.value, 0) + 1
    return frozenset(
        name
        for name in scan.called - scan.tested - scan.tensor_only
        if "." not in name and bindings.get(name, 0) <= 1
    )


def fields_shown(cls: cst.ClassDef) -> frozenset[str]:
    """``self.`` fields any method of the class calls with a non-tensor method (``self.out_normalizer``)."""
    scan = _Scan()
    for statement in cls.body.body:
        if isinstance(statement, cst.FunctionDef):
            walk(statement.body, scan)
    return frozenset(name for name in scan.called - scan.tested - scan.tensor_only if name.startswith("self."))


class _Scan(cst.CSTVisitor):
    """Method calls by receiver, kind tests and local bindings, in one body (not nested defs)."""

    def __init__(self) -> None:
        super().__init__()
        self.called: set[str] = set()
        self.tested: set[str] = set()
        # Receivers of a method only tensors have (``self.value.clone()``): the kind is mixed.
        self.tensor_only: set[str] = set()
        self.bindings: dict[str, int] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            receiver = dotted_name(func.value)
            refutes = method not in TENSOR_METHODS and method not in _CONTAINER_METHODS and not method.startswith("_")
            if receiver is not None and (receiver.count(".") == 0 or _is_field(receiver)):
                if refutes:
                    self.called.add(receiver)
                elif method in TENSOR_METHODS and method not in SHARED_WITH_MODULES_AND_ARRAYS:
                    self.tensor_only.add(receiver)
        if (dotted_name(func) or "") in _KIND_TESTS:
            for arg in node.args:
                name = dotted_name(arg.value)
                if name is not None:
                    self.tested.add(name)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind(node.asname.name)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target)

    def _bind(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.bindings[target.value] = self.bindings.get(target.value, 0) + 1
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value)


def _is_field(name: str) -> bool:
    return name.startswith("self.") and name.count(".") == 1
