"""Device inference: where does the data behind a name or an expression live?

The engine drives one pass over the module in source order; this class keeps the scopes and
bindings seen so far, so ``infer`` answers with everything assigned above the expression in its
function (and in the module and the enclosing class's ``self.`` attributes). It is flow-ordered,
not flow-sensitive: the last binding seen wins.
"""

from __future__ import annotations

import libcst as cst

from syncllint.analysis.access import AccessInference
from syncllint.analysis.arguments import is_string_literal
from syncllint.analysis.binding import Binding, Scope, device_owner
from syncllint.analysis.calls import CallInference
from syncllint.analysis.imports import ImportMap
from syncllint.analysis.local_calls import LocalCalls
from syncllint.analysis.method_calls import MethodInference
from syncllint.analysis.naming import NamingConventions, names_a_class
from syncllint.analysis.object_usage import ClassUsage, FunctionUsage
from syncllint.analysis.parameters import ParameterBinding
from syncllint.analysis.pending import PendingCopies
from syncllint.analysis.values import (
    ACCELERATOR_DEVICE,
    CPU_DEVICE,
    DEVICE_TENSOR,
    HOST_TENSOR,
    LAYER,
    NUMPY,
    PYTHON,
    PYTHON_SCALAR,
    TENSOR,
    UNKNOWN,
    DeviceLiteral,
    DType,
    Place,
    Value,
    combine_operands,
    compare_operands,
    join,
)

# A literal list of more elements is data (numbers), not a handful of tensors: not read one by one.
_CONTAINER_ELEMENTS_READ = 16

# Arithmetic whose result is never a bool tensor: torch refuses ``-`` on bools, ``/`` gives floats.
_NUMERIC_OPERATORS = (cst.Subtract, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power)


class DeviceInference(
    Binding, CallInference, MethodInference, AccessInference, LocalCalls, NamingConventions, PendingCopies,
    ParameterBinding,
):
    def __init__(
        self,
        imports: ImportMap,
        host_suffixes: tuple[str, ...],
        device_suffixes: tuple[str, ...],
        mirrored: frozenset[str] = frozenset(),
        device_mirrored: frozenset[str] = frozenset(),
        returns: dict[str, Place] | None = None,
        host_keys: frozenset[str] = frozenset(),
        filled_parameters: dict[str, dict[str, Place | bool]] | None = None,
        host_attributes: frozenset[str] = frozenset(),
        follows: dict[str, tuple[str, int]] | None = None,
        elements: dict[str, tuple[Place | None, ...]] | None = None,
    ) -> None:
        PendingCopies.__init__(self)
        self.imports = imports
        self._host_suffixes = host_suffixes
        self._device_suffixes = device_suffixes
        # Names whose ``<name>_cpu`` host mirror the module uses: the name itself is the device half.
        self._mirrored = mirrored
        # Names whose ``<name>_device`` / ``<name>_gpu`` copy the module uses: the name is the host half.
        self._device_mirrored = device_mirrored
        # The module's own functions (``name``) and methods (``self.name``) whose returns show a place.
        self._returns = returns or {}
        # Those whose result keeps the place of a parameter: -> (parameter, position or -1).
        self._follows = follows or {}
        # Those returning tuples: where each element lives, where the returns show it.
        self._elements = elements or {}
        # Keys of data the project keeps on the host (vLLM fields registered ``keep_on_cpu=True``).
        self._host_keys = host_keys
        # ``name`` / ``self.name`` -> parameters every call fills with host data (a place), or
        # flags no call gives (their default, ``True`` / ``False``).
        self.filled_parameters = filled_parameters or {}
        # Attribute names that every ``self.<name> = ...`` of the project fills with host data.
        self._host_attributes = host_attributes
        self.device_memory_classes: set[str] = set()
        self._scopes: list[Scope] = [Scope()]
        # ``self.x`` bindings, per enclosing class, shared by all its methods.
        self._class_attrs: list[dict[str, Value]] = []
        self._class_usage: list[ClassUsage | None] = []

    # -- scopes -----------------------------------------------------------------------------
    def enter_function(self) -> None:
        self._scopes.append(Scope(default_device=self._scopes[-1].default_device))
        self._enter_pending_scope()

    def start_building_on_host(self) -> None:
        """The function is an ``__init__`` whose factories build on the host: the fields it sets
        are host tensors for the rest of it, until the module moves (``module_moved``)."""
        self._scopes[-1].built_here = {}

    def module_moved(self) -> None:
        """``self.to(device)`` / ``self.cuda()``: the fields an ``__init__`` built moved with it."""
        if self._scopes[-1].built_here is not None:
            self._scopes[-1].built_here = {}

    def exit_function(self) -> None:
        self._scopes.pop()
        self._exit_pending_scope()

    def enter_class(self, usage: ClassUsage | None = None) -> None:
        """``usage``: what the class's methods show of its fields (``object_usage.ClassUsage``)."""
        self._class_attrs.append({})
        self._class_usage.append(usage)
        # A class body binds its own names (dataclass fields ``counts: torch.Tensor``), which
        # its methods and the module do not see.
        self._scopes.append(Scope(default_device=self._scopes[-1].default_device, is_class=True))

    def exit_class(self) -> None:
        self._class_attrs.pop()
        self._class_usage.pop()
        self._scopes.pop()

    def show_host(self, names: frozenset[str]) -> None:
        self._scopes[-1].host_shown = names

    def show_usage(self, usage: FunctionUsage) -> None:
        """What the function's body shows of its names (``object_usage.FunctionUsage``)."""
        self._scopes[-1].usage = usage

    def set_default_device(self, device: DeviceLiteral | None) -> None:
        self._scopes[-1].default_device = device

    @property
    def default_device(self) -> DeviceLiteral | None:
        return self._scopes[-1].default_device

    # -- binding ----------------------------------------------------------------------------
    def _refine_by_name(self, name: str, value: Value) -> Value:
        """A host/device suffix beats a vague value: ``x_cpu: torch.Tensor`` is a host tensor."""
        if value.place in (Place.TENSOR, Place.UNKNOWN):
            # A tensor the code computed (``types = types.to(x.device)``) keeps its place against
            # naming habits (kept fields, mirrors); only an explicit suffix (``_cpu``) still counts.
            named = self._suffix_value(name, conventions_only=value.place is Place.TENSOR)
            if named is not None:
                # A device suffix on a value the code shows is a tensor is more than a name.
                assumed = named.assumed and not (value.is_tensor and not value.assumed)
                return Value(named.place, value.dtype, value.zero_dim, assumed=assumed)
        return value

    def _container(
        self, node: cst.List | cst.Tuple | cst.Set | cst.Dict | cst.ListComp | cst.SetComp | cst.DictComp
    ) -> Value:
        """A Python container; one whose elements are all host tensors (``[t.cpu() for t in ts]``,
        ``[torch.tensor([0], device="cpu") for _ in r]``) passes for a host tensor, as a host state
        dict does: what is read out of it or iterated over is host data."""
        elements: list[cst.BaseExpression]
        if isinstance(node, (cst.ListComp, cst.SetComp)):
            elements = [node.elt]
        elif isinstance(node, cst.DictComp):
            elements = [node.value]
        elif isinstance(node, cst.Dict):
            elements = [e.value for e in node.elements if isinstance(e, cst.DictElement)]
        else:
            elements = [e.value for e in node.elements if isinstance(e, cst.Element)]
        values = [self.infer(e) for e in elements] if len(elements) <= _CONTAINER_ELEMENTS_READ else []
        if values and all(v.place is Place.HOST_TENSOR for v in values):
            # ``[tokenizer(t, return_tensors="pt") for t in texts]``: records whose fields are host data.
            return values[0] if all(v.host_record for v in values) else HOST_TENSOR
        return PYTHON

    def set_local(self, name: str, value: Value) -> None:
        self._scopes[-1].names[name] = value

    def note_none_default(self, name: str, value: Value) -> None:
        self._scopes[-1].none_defaults[name] = value

    def holds_its_none_default(self, node: cst.BaseExpression) -> bool:
        """``threshold`` is a parameter defaulting to None, not rebound since: it may be None."""
        if not isinstance(node, cst.Name):
            return False
        scope = self._scopes[-1]
        bound = scope.none_defaults.get(node.value)
        return bound is not None and scope.names.get(node.value) is bound

    @property
    def fresh_modules(self) -> set[str]:
        return self._scopes[-1].fresh_modules

    @property
    def moved_modules(self) -> set[str]:
        return self._scopes[-1].moved_modules

    @property
    def altered_modules(self) -> set[str]:
        return self._scopes[-1].altered_modules

    def growing_lists(self) -> set[str]:
        return self._scopes[-1].growing

    # -- lookups ----------------------------------------------------------------------------
    def lookup(self, key: str) -> Value | None:
        found = self._bound(key)
        weak = found is not None and (found.place in (Place.UNKNOWN, Place.TENSOR) or found.assumed)
        if key.startswith("self."):
            fields = self._class_usage[-1] if self._class_usage else None
            if fields is not None and (found is None or found.place is Place.PYTHON) and key in fields.host_lists:
                return HOST_TENSOR  # a list of host tensors, as a literal list of them passes for one
            shown = weak and fields is not None and key in fields.object_fields
        else:
            names = self._scopes[-1].usage
            shown = weak and names is not None and key in names.objects
        return LAYER if shown else found  # ``normalizer.transform(y)`` elsewhere: an object, whatever ``.to(...)`` gave

    def host_fields(self) -> frozenset[str]:
        """The enclosing class's fields that only ever hold new host tensors (``ClassUsage.host_fields``)."""
        usage = self._class_usage[-1] if self._class_usage else None
        return usage.host_fields if usage is not None else frozenset()

    def _bound(self, key: str) -> Value | None:
        built = self._scopes[-1].built_here
        if built and key in built:
            return built[key]
        if key.startswith("self.") and self._class_attrs:
            found = self._class_attrs[-1].get(key)
            if found is not None:
                return found
        current = self._scopes[-1].names.get(key)
        if current is not None:
            return current
        # Python's closure rule: enclosing functions, then the module; class bodies are skipped.
        for scope in reversed(self._scopes[:-1]):
            if not scope.is_class:
                found = scope.names.get(key)
                if found is not None:
                    return found
        return None

    # -- expressions ------------------------------------------------------------------------
    def infer(self, node: cst.BaseExpression) -> Value:
        if isinstance(node, cst.Name):
            if node.value in ("True", "False", "None"):
                return PYTHON_SCALAR
            found = self.lookup(node.value)
            if found is None or found.place is Place.UNKNOWN:
                # The name says more than an opaque call result does.
                return self._suffix_value(node.value) or found or UNKNOWN
            return found
        if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary)):
            return PYTHON_SCALAR
        if is_string_literal(node):
            # ``device = "cpu"`` before ``x.to(device)``: the string names a place.
            spec = self.device_spec(node) if isinstance(node, cst.SimpleString) else None
            return Value(Place.PYTHON, zero_dim=True, device_literal=spec) if spec else PYTHON_SCALAR
        if isinstance(node, (cst.List, cst.Tuple, cst.Set, cst.Dict, cst.ListComp, cst.SetComp, cst.DictComp)):
            return self._container(node)
        if isinstance(node, cst.Attribute):
            return self._infer_attribute(node)
        if isinstance(node, cst.Call):
            return self.infer_call(node)
        if isinstance(node, cst.Subscript):
            return self._infer_subscript(node)
        if isinstance(node, cst.UnaryOperation):
            if isinstance(node.operator, cst.Not):
                return PYTHON_SCALAR
            return self.infer(node.expression)
        if isinstance(node, cst.BinaryOperation):
            result = combine_operands([self.infer(node.left), self.infer(node.right)])
            return result.with_dtype(DType.NUMBER) if result.is_tensor and _never_bool(node) else result
        if isinstance(node, cst.Comparison):
            operands = [self.infer(node.left)] + [self.infer(c.comparator) for c in node.comparisons]
            if any(isinstance(c.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for c in node.comparisons):
                return PYTHON_SCALAR
            if any(names_a_class(c.comparator) for c in node.comparisons) or names_a_class(node.left):
                return PYTHON_SCALAR  # ``param_type == PerTensorScaleParameter``: a class, not a tensor
            if any(is_string_literal(side) for side in (node.left, *(c.comparator for c in node.comparisons))):
                return PYTHON_SCALAR  # ``kernel == "fir"``: an option, whatever its annotation says
            result = compare_operands(operands)
            return result.with_dtype(DType.BOOL) if result.is_tensor or result.place == Place.NUMPY else result
        if isinstance(node, cst.IfExp):
            decided = self.truth_of(node.test)
            if decided is not None:  # ``... if not force_cpu_device else "cpu"`` with the flag's default
                chosen = node.body if decided else node.orelse
                spec = self.device_spec(chosen) if isinstance(chosen, cst.SimpleString) else None
                return CPU_DEVICE if spec is DeviceLiteral.CPU else ACCELERATOR_DEVICE if spec else self.infer(chosen)
            # ``x.device if isinstance(x, torch.Tensor) else None``: what the code gives when it gives
            # anything (``None`` is no data, and a ``device=None`` the default).
            if _is_none(node.orelse):
                return self.infer(node.body)
            if _is_none(node.body):
                return self.infer(node.orelse)
            return join(self.infer(node.body), self.infer(node.orelse))
        if isinstance(node, cst.BooleanOperation):
            return _flag_or_join(self.infer(node.left), self.infer(node.right))
        if isinstance(node, cst.NamedExpr):
            return self.infer(node.value)
        if isinstance(node, cst.Lambda):
            return PYTHON
        return UNKNOWN

    def truth_of(self, test: cst.BaseExpression) -> bool | None:
        """The truth of a condition built from flags the project shows (``not flag``, ``a and flag``),
        or None. ``and`` / ``or`` decide as soon as one known operand decides them."""
        if isinstance(test, cst.Name):
            return self.infer(test).truth
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self.truth_of(test.expression)
            return None if inner is None else not inner
        if isinstance(test, cst.BooleanOperation):
            deciding = isinstance(test.operator, cst.Or)  # ``or`` is decided by a true operand, ``and`` by a false one
            left, right = self.truth_of(test.left), self.truth_of(test.right)
            if deciding in (left, right):
                return deciding
            return None if left is None or right is None else not deciding
        return None

    def is_numpy_name(self, qualified: str | None) -> bool:
        return qualified is not None and (qualified == "numpy" or qualified.startswith("numpy."))


__all__ = ["DeviceInference", "device_owner", "NUMPY", "DEVICE_TENSOR", "HOST_TENSOR", "TENSOR", "UNKNOWN", "PYTHON"]


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _flag_or_join(left: Value, right: Value) -> Value:
    """``use_fused and x.dtype == torch.bfloat16``: an operand of unknown kind beside a Python
    scalar is a flag too. Were it a tensor, its truth test right here would be the sync (and the
    rule on the ``and`` reports it); what the expression leaves is a Python value."""
    places = {left.place, right.place}
    if places == {Place.PYTHON, Place.UNKNOWN} and not (left.layer or right.layer):
        python = left if left.place is Place.PYTHON else right
        if python.zero_dim and python.handle is None and python.device_literal is None:
            return PYTHON_SCALAR
    return join(left, right)


def _never_bool(node: cst.BinaryOperation) -> bool:
    """``input_ - start`` / ``mask * 2``: the result is numbers, not a boolean mask, whatever the
    operands' names say (``masked_input = input_.clone() - vocab_start``)."""
    if isinstance(node.operator, _NUMERIC_OPERATORS):
        return True
    arithmetic = isinstance(node.operator, (cst.Add, cst.Multiply))
    return arithmetic and any(isinstance(side, (cst.Integer, cst.Float)) for side in (node.left, node.right))
