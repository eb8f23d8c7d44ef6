"""What a body shows of its names by how it uses them, read on first need (most bodies never ask).

Names that hold no tensor: ``self.out_normalizer.transform(y)`` calls a method that
``torch.Tensor`` lacks, so ``if self.out_normalizer:`` tests an object, not a tensor's value.

Only weak readings give way to this (a value of unknown kind, or a tensor assumed from ``.to(...)``,
which modules share): what a factory or a device check shows stands. A name tested with
``isinstance`` / ``hasattr``, or also called with a method only tensors have (Lightning's
``self.value``, a tensor or a metric by a flag), may hold either kind, and a local bound more than
once may change kind between bindings, so none of these is read.

Fields that hold host tensors: a ``self.`` field a class only ever sets to ``[]`` and grows by host
reads (``self._val_targets.append(targets.cpu())`` in ``validation_step``) is a list of host tensors
wherever a method reads it (``torch.cat(self._val_targets)`` in ``on_validation_epoch_end``), as a
literal list of host tensors passes for host data.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import libcst as cst

from syncllint.analysis import torch_api as api
from syncllint.analysis.annotations import annotation_value
from syncllint.analysis.arguments import keyword, named_parameters
from syncllint.analysis.growing import starts_empty
from syncllint.analysis.imports import ImportMap, dotted_name
from syncllint.analysis.module_state import DEVICE_MOVES
from syncllint.analysis.tensor_methods import (
    SHARED_WITH_MODULES_AND_ARRAYS,
    TENSOR_METHODS,
)
from syncllint.analysis.values import PYTHON_SCALAR
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
# Methods through which a class moves its own fields (a plain ``Module.to`` moves registered state only).
_MOVING_METHODS = DEVICE_MOVES | {"_apply", "to_device", "pin_memory"}
_LITERAL_DATA = (cst.Integer, cst.Float, cst.List, cst.Tuple, cst.ListComp, cst.UnaryOperation)
# Calls that ask what kind a name holds: the code expects more than one.
_KIND_TESTS = frozenset(("isinstance", "hasattr", "getattr", "type", "callable", "is_tensor", "torch.is_tensor"))


@dataclass(frozen=True)
class FunctionUsage:
    """What a function's body shows of its names."""

    node: cst.FunctionDef

    @cached_property
    def objects(self) -> frozenset[str]:
        """Names bound once (parameters included) that the body calls with a non-tensor method."""
        scan = _scan([self.node.body])
        for param in named_parameters(self.node.params):
            scan.bindings[param.name.value] = scan.bindings.get(param.name.value, 0) + 1
        return frozenset(name for name in scan.objects if "." not in name and scan.bindings.get(name, 0) <= 1)


@dataclass(frozen=True)
class ClassUsage:
    """What a class's methods show of its ``self.`` fields."""

    node: cst.ClassDef
    imports: ImportMap  # reads the annotations of number parameters (``drop_rate: float``)

    @cached_property
    def _methods(self) -> _Scan:
        scan = _Scan(self.imports)
        for method in self.node.body.body:
            if isinstance(method, cst.FunctionDef):
                scan.numbers = _number_parameters(method.params, self.imports)
                walk(method.body, scan)
        return scan

    @cached_property
    def object_fields(self) -> frozenset[str]:
        """Fields any method calls with a non-tensor method (``self.out_normalizer``)."""
        return frozenset(name for name in self._methods.objects if name.startswith("self."))

    @cached_property
    def host_lists(self) -> frozenset[str]:
        """Fields only ever set to ``[]`` and grown by host reads."""
        return frozenset(self._methods.grown - self._methods.set_otherwise)

    @cached_property
    def host_fields(self) -> frozenset[str]:
        """Fields every method sets to a tensor made on the host (``self.keep = torch.ones(n)``) and
        nothing registers: ``Module.to`` moves parameters and buffers only, so a plain field stays
        where its factory put it. A class with a ``to`` / ``cuda`` / ``_apply`` of its own may move
        its fields itself, so it has none."""
        scan = self._methods
        methods = {s.name.value for s in self.node.body.body if isinstance(s, cst.FunctionDef)}
        if methods & _MOVING_METHODS:
            return frozenset()
        return frozenset(scan.host_made - scan.set_otherwise - scan.registered)


def _scan(bodies: list[cst.BaseSuite]) -> _Scan:
    scan = _Scan()
    for body in bodies:
        walk(body, scan)
    return scan


class _Scan(cst.CSTVisitor):
    """Method calls by receiver, kind tests, local bindings and field growth, in bodies (not nested defs)."""

    def __init__(self, imports: ImportMap | None = None) -> None:
        """``imports``: a class's scan, which also reads which fields are made on the host."""
        super().__init__()
        self._imports = imports
        self.called: set[str] = set()
        self.tested: set[str] = set()
        # Receivers of a method only tensors have (``self.value.clone()``): the kind is mixed.
        self.tensor_only: set[str] = set()
        self.bindings: dict[str, int] = {}
        self.grown: set[str] = set()  # fields grown by a host read
        self.set_otherwise: set[str] = set()  # fields set or grown otherwise
        self.host_made: set[str] = set()  # fields set to a tensor a factory makes on the host
        self.registered: set[str] = set()  # fields named to ``register_buffer`` and the like
        self.numbers: frozenset[str] = frozenset()  # the scanned method's parameters that take numbers

    @property
    def objects(self) -> set[str]:
        return self.called - self.tested - self.tensor_only

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
            if receiver == "self" and method.startswith("register_") and node.args:
                named = node.args[0].value
                if isinstance(named, cst.SimpleString) and isinstance(named.evaluated_value, str):
                    self.registered.add("self." + named.evaluated_value)
            if method in ("append", "extend") and receiver is not None and _is_field(receiver):
                grows_by_host = len(node.args) == 1 and not node.args[0].star and _reads_to_host(node.args[0].value)
                (self.grown if grows_by_host else self.set_otherwise).add(receiver)
        if (dotted_name(func) or "") in _KIND_TESTS:
            for arg in node.args:
                name = dotted_name(arg.value)
                if name is not None:
                    self.tested.add(name)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        field = dotted_name(node.target)
        if field is not None and field in self.host_made:
            return  # ``self.total += x.cpu()``: in place, where the field already is
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

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression | None = None) -> None:
        """``value``: what is assigned, where one value goes to ``target`` as a whole."""
        if isinstance(target, cst.Name):
            self.bindings[target.value] = self.bindings.get(target.value, 0) + 1
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind(element.value)
        elif isinstance(target, cst.StarredElement):
            self._bind(target.value)
        else:
            field = dotted_name(target)
            made_on_host = self._imports is not None and value is not None and _made_on_host(value, self.numbers, self._imports)
            if field is not None and _is_field(field) and made_on_host:
                self.host_made.add(field)
            elif field is not None and _is_field(field) and not (value is not None and _placeholder(value)):
                self.set_otherwise.add(field)


def _placeholder(value: cst.BaseExpression) -> bool:
    """``[]`` to grow, or ``None`` until a method builds the field (``self.totals = None`` in
    ``__init__``, ``torch.zeros(n)`` in ``reset``): neither says where the field's data lives."""
    return starts_empty(value) or (isinstance(value, cst.Name) and value.value == "None")


def _is_field(name: str) -> bool:
    return name.startswith("self.") and name.count(".") == 1


def _made_on_host(expr: cst.BaseExpression, numbers: frozenset[str], imports: ImportMap) -> bool:
    """``torch.zeros(n)``, ``torch.tensor([0.5, 0.5])`` without ``device=``, ``torch.from_numpy(a)``:
    a new host tensor (under a default device the walk's own inference already places it there).
    ``torch.tensor(x)`` of a name may copy a device tensor where it is, so only literal data, number
    parameters (``drop_rate: float = 0.2``) and numpy or table results (``np.frombuffer(b)``) count."""
    if not isinstance(expr, cst.Call) or keyword(expr, "device") is not None:
        return False
    name = imports.qualify(expr.func)
    if name in api.HOST_TENSOR_FUNCTIONS:
        return True
    if name not in api.TORCH_FACTORIES:
        return False
    if name in api.HOST_DATA_CONSTRUCTORS or name in api.LEGACY_CONSTRUCTORS:
        first = expr.args[0].value if expr.args and expr.args[0].keyword is None else None
        if isinstance(first, cst.Call):
            return api.is_host_array_api(imports.qualify(first.func) or "")
        return isinstance(first, _LITERAL_DATA) or isinstance(first, cst.Name) and first.value in numbers
    return True


def _number_parameters(params: cst.Parameters, imports: ImportMap) -> frozenset[str]:
    """Parameters annotated as a Python number (``float``, ``Optional[int]``) or defaulting to one."""
    return frozenset(
        p.name.value
        for p in named_parameters(params)
        if p.annotation is not None and annotation_value(p.annotation.annotation, imports) == PYTHON_SCALAR
        or isinstance(p.default, (cst.Integer, cst.Float))
    )


def _reads_to_host(expr: cst.BaseExpression) -> bool:
    """``targets.cpu()``, ``out.detach().cpu().numpy()``, ``loss.item()``: a host read's result; or
    a tuple of them beside Python numbers (``(matched.cpu(), scores.cpu(), int(n))``)."""
    if isinstance(expr, cst.Tuple):
        parts = [el.value for el in expr.elements if isinstance(el, cst.Element)]
        return len(parts) == len(expr.elements) and any(_reads_to_host(p) for p in parts) and all(
            _reads_to_host(p) or _python_number(p) for p in parts
        )
    return (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value in api.HOST_RESULT_METHODS
        and not expr.args
    )


def _python_number(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, (cst.Integer, cst.Float)) or (
        isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in ("int", "float", "bool", "len")
    )