"""Device checks that narrow a tensor's place: ``assert x.device.type == "cpu"``, ``if x.is_cuda:``.

Code that asks where a tensor lives tells the reader, and us, the answer on each branch:

- ``assert t.is_cpu`` / ``assert t.device.type == "cpu"``: host from there on;
- ``if t.is_cuda: ...``: a device tensor in the body (a host one in ``else``);
- ``if not t.is_cuda: raise ...``: a device tensor after the ``if`` (the body left);
- ``not t.is_cuda and torch.equal(t, u)``: the right operand runs only for a host ``t``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

import libcst as cst

from syncllint.analysis import torch_api as api
from syncllint.analysis.devices import DeviceInference, device_owner
from syncllint.analysis.imports import dotted_name
from syncllint.analysis.values import DeviceLiteral, Place, Value

# ``t.is_cuda`` and the other accelerators' flags (``weight.is_npu`` in Ascend code); ``t.is_cpu``.
_DEVICE_TESTS = frozenset(("is_cpu", *("is_" + prefix for prefix in api.ACCELERATOR_PREFIXES)))
# (expression, place it has): facts that hold on one side of a test.
# A device variable's fact is the device it names (``if device.type == "cpu":``).
Facts = tuple[tuple[cst.BaseExpression, Place | DeviceLiteral], ...]
# Apple silicon, special-cased in code written for CUDA: a tensor that is not there is as likely on
# CUDA as on the host. (Code testing ``"npu"`` or ``"xpu"`` is written for that accelerator: not
# there is the host.)
_RARE_ACCELERATOR = "mps"
_TENSOR_TYPES = frozenset(("torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"))
# Types no tensor is an instance of: ``isinstance(x, (str, Path))`` holds only for a Python value
# (a tensor is no ``numbers.Number``: torch does not register it).
_PYTHON_KINDS = frozenset((
    "list", "tuple", "dict", "str", "int", "float", "bool", "bytes", "set", "frozenset", "complex",
    "bytearray", "range", "pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath", "os.PathLike",
    "numbers.Number", "numbers.Real", "numbers.Integral",
))


@dataclass(frozen=True)
class Branches:
    """What an ``if`` test says of its branches (``Narrowing.enter_if``)."""

    host: list[cst.BaseSuite]  # branches that run only for host tensors
    elifs: list[cst.If]  # an ``elif`` holding the test's false facts, entered and left as an arm
    splits_devices: bool  # device tensors take one branch and host tensors the other


@dataclass(frozen=True)
class _Saved:
    key: cst.BaseExpression
    snapshot: Value | None  # what the scope held before the fact (None: nothing bound)
    narrowed: Value  # what the fact bound: a branch that rebinds the name keeps its own value


class Narrowing:
    """Applies the facts of device checks to the inference while the walk is inside their scope."""

    def __init__(self, inference: DeviceInference) -> None:
        self._inference = inference
        self._pending: dict[int, Facts] = {}  # suite id -> facts true inside it
        self._saved: dict[int, list[_Saved]] = {}
        # ids of the arms of ``if`` statements, and the arms the walk is inside (innermost last),
        # each with the facts its asserts applied: those hold on that arm's path only.
        self._arm_ids: set[int] = set()
        self._arms: list[tuple[int, list[_Saved]]] = []

    def enter_if(self, node: cst.If) -> Branches:
        """Records the facts of each branch; returns the branches that run only for host tensors,
        the ``elif`` that holds the test's false facts (entered and left as an arm), and whether the
        test splits device tensors from host ones.

        ``if not t.is_cuda:`` is a CPU fallback: its other tensors of unknown device are host
        tensors too (sglang's ``kv_read_table`` reads its CPU test inputs there).
        """
        when_true, when_false = self.facts(node.test)
        host_branches: list[cst.BaseSuite] = []
        elifs: list[cst.If] = []
        self._arm_ids.add(id(node.body))
        if isinstance(node.orelse, cst.Else):
            self._arm_ids.add(id(node.orelse.body))
        if when_true:
            self._pending[id(node.body)] = when_true
            if _on_the_host(when_true):
                host_branches.append(node.body)
        if when_false and isinstance(node.orelse, cst.Else):
            self._pending[id(node.orelse.body)] = when_false
            if _on_the_host(when_false):
                host_branches.append(node.orelse.body)
        elif when_false and isinstance(node.orelse, cst.If):
            # ``if torch.is_tensor(n): ... elif n == 0:``: the ``elif`` runs where the test was false.
            self._pending[id(node.orelse)] = when_false
            elifs.append(node.orelse)
        return Branches(host_branches, elifs, self._splits_devices(node.test, when_true + when_false))

    def leave_if(self, node: cst.If, body_leaves: bool) -> bool:
        """``if not t.is_cuda: raise``: after the ``if``, the test was false. Returns whether what
        follows runs only for host tensors (``if t.is_cuda: return ...`` before a CPU path)."""
        if body_leaves and node.orelse is None:
            after = self.facts(node.test)[1]
            self._apply(after)
            return _on_the_host(after)
        return False

    def enter_suite(self, suite: cst.CSTNode) -> None:
        facts = self._pending.pop(id(suite), None)
        if facts:
            self._saved[id(suite)] = self._apply(facts)
        if id(suite) in self._arm_ids:
            self._arms.append((id(suite), []))

    def leave_suite(self, suite: cst.CSTNode) -> None:
        if self._arms and self._arms[-1][0] == id(suite):
            # ``elif method == "cuml": assert x.device.type == "cuda"``: not so in the next arm.
            self._restore(self._arms.pop()[1])
            self._arm_ids.discard(id(suite))
        self._restore(self._saved.pop(id(suite), []))

    def enter_conditional(self, node: cst.IfExp) -> list[cst.BaseExpression]:
        """``a if device.type == "cuda" else b``: the test's facts hold in each arm. Returns the arms
        that have facts, entered and left as blocks are (``enter_suite`` / ``leave_suite``)."""
        when_true, when_false = self.facts(node.test)
        arms: list[cst.BaseExpression] = []
        for arm, facts in ((node.body, when_true), (node.orelse, when_false)):
            if facts:
                self._pending[id(arm)] = facts
                arms.append(arm)
        return arms

    def enter_and(self, node: cst.BooleanOperation) -> None:
        if isinstance(node.operator, cst.And):
            self._saved[id(node)] = self._apply(self.facts(node.left)[0])

    def leave_and(self, node: cst.BooleanOperation) -> None:
        self._restore(self._saved.pop(id(node), []))

    @contextmanager
    def assuming(self, test: cst.BaseExpression, outcome: bool) -> Iterator[None]:
        """The facts of ``test`` having ``outcome`` hold inside the ``with`` block."""
        saved = self._apply(self.facts(test)[0 if outcome else 1])
        try:
            yield
        finally:
            self._restore(saved)

    def assert_(self, node: cst.Assert) -> None:
        saved = self._apply(self.facts(node.test)[0])
        if self._arms:
            self._arms[-1][1].extend(saved)

    def _splits_devices(self, test: cst.BaseExpression, facts: Facts) -> bool:
        """``if t.device.type == "cuda": ... else: ...``: a test (``facts``: both sides' facts) that
        places a tensor on one side, alone or among other conditions (``compiling or t.is_cuda``,
        whose ``or`` keeps no fact of its own)."""
        if any(isinstance(place, Place) and place in (Place.DEVICE, Place.HOST_TENSOR) for _, place in facts):
            return True
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            operands: tuple[cst.BaseExpression, ...] = (test.expression,)
        elif isinstance(test, cst.BooleanOperation):
            operands = (test.left, test.right)
        else:
            return False
        return any(self._splits_devices(operand, sum(self.facts(operand), ())) for operand in operands)

    def facts(self, test: cst.BaseExpression) -> tuple[Facts, Facts]:
        """What holds when ``test`` is true, and when it is false."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            when_true, when_false = self.facts(test.expression)
            return when_false, when_true
        if isinstance(test, cst.BooleanOperation):
            left, right = self.facts(test.left), self.facts(test.right)
            if isinstance(test.operator, cst.And):
                return left[0] + right[0], ()
            return (), left[1] + right[1]
        if isinstance(test, cst.Attribute) and test.attr.value in _DEVICE_TESTS:
            place = Place.HOST_TENSOR if test.attr.value == "is_cpu" else Place.DEVICE
            if test.attr.value == "is_" + _RARE_ACCELERATOR:
                return ((test.value, place),), ()  # ``not t.is_mps``: on CUDA as likely as on the host
            return ((test.value, place),), ((test.value, _other(place)),)
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            return self._compared(test)
        if isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance":
            return self._isinstance(test)
        if isinstance(test, cst.Call) and len(test.args) == 1 and self._inference.imports.qualify(test.func) == "torch.is_tensor":
            return (), ((test.args[0].value, Place.PYTHON),)
        return (), ()

    def _isinstance(self, test: cst.Call) -> tuple[Facts, Facts]:
        """``isinstance(x, np.ndarray)``: numpy in the body; ``(list, tuple)``: a Python value."""
        if len(test.args) != 2:
            return (), ()
        subject, kinds = test.args[0].value, test.args[1].value
        names = [el.value for el in kinds.elements] if isinstance(kinds, cst.Tuple) else [kinds]
        if any(self._inference.imports.qualify(name) in _TENSOR_TYPES for name in names):
            # Not a tensor where the test fails (``else: n == 0`` compares a number); nothing said
            # of where the tensor lives where it holds.
            return (), ((subject, Place.PYTHON),)
        places = {self._kind_place(name) for name in names}
        place = places.pop() if len(places) == 1 else None
        if place is None:
            return (), ()
        return ((subject, place),), ()

    def _kind_place(self, kind: cst.BaseExpression) -> Place | None:
        qualified = self._inference.imports.qualify(kind) or ""
        if qualified.startswith("numpy."):
            return Place.NUMPY
        if qualified in _PYTHON_KINDS:
            return Place.PYTHON
        return None

    def _compared(self, test: cst.Comparison) -> tuple[Facts, Facts]:
        target = test.comparisons[0]
        if isinstance(target.operator, (cst.In, cst.NotIn)):
            return self._membership(test.left, target.comparator, isinstance(target.operator, cst.In))
        if not isinstance(target.operator, (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot)):
            return (), ()
        for tensor_side, spec_side in ((test.left, target.comparator), (target.comparator, test.left)):
            device = _device_variable(tensor_side)
            spec = self._inference.device_spec(spec_side) if device is not None else None
            facts: tuple[Facts, Facts] | None = None
            if device is not None and spec is not None:
                facts = (((device, spec),), ((device, _other(spec)),))
            else:
                facts = _owner_facts(tensor_side, lambda: self._inference.device_spec(spec_side))
            if facts is None:
                continue
            if _names_a_rare_accelerator(spec_side):
                # ``t.device.type != "mps"`` (an Apple-silicon workaround): the tensor may still be on
                # CUDA, so only the equal side says anything.
                facts = (facts[0], ())
            return facts if isinstance(target.operator, (cst.Equal, cst.Is)) else (facts[1], facts[0])
        return (), ()

    def _membership(self, left: cst.BaseExpression, choices: cst.BaseExpression, holds: bool) -> tuple[Facts, Facts]:
        """``t.device.type in ["cuda", "npu"]``: every choice an accelerator (or every one the CPU)
        says as much as ``==`` would."""
        if not isinstance(choices, (cst.List, cst.Tuple, cst.Set)) or not choices.elements:
            return (), ()
        specs = {self._inference.device_spec(element.value) for element in choices.elements}
        facts = _owner_facts(left, lambda: specs.pop() if len(specs) == 1 else None)
        if facts is None:
            return (), ()
        return facts if holds else (facts[1], facts[0])

    def _apply(self, facts: Facts) -> list[_Saved]:
        saved: list[_Saved] = []
        for expr, place in facts:
            if dotted_name(expr) is None:
                continue
            old = self._inference.infer(expr)
            if isinstance(place, DeviceLiteral):
                if old.device_literal is not place:
                    saved.append(self._bind(expr, Value(Place.PYTHON, zero_dim=True, device_literal=place)))
                continue
            if old.place is place:
                continue
            if place is Place.PYTHON and old.place is Place.HOST_TENSOR:
                # ``isinstance(counts, list)`` of host data (a field kept on the CPU): a list of host
                # tensors, whose items stay host data.
                continue
            saved.append(self._bind(expr, replace(old, place=place, pinned=False, assumed=False, layer=False)))
            # ``device = t.device`` above ``assert t.device.type == "cpu"`` names the same device.
            literal = DeviceLiteral.CPU if place is Place.HOST_TENSOR else DeviceLiteral.ACCELERATOR
            for name in self._inference.device_names_of(dotted_name(expr) or ""):
                held = cst.Name(name)
                literal_value = Value(Place.PYTHON, zero_dim=True, device_literal=literal)
                saved.append(self._bind(held, literal_value))
        return saved

    def _bind(self, expr: cst.BaseExpression, narrowed: Value) -> _Saved:
        snapshot = self._inference.binding_snapshot(expr)
        self._inference.bind(expr, narrowed)
        return _Saved(expr, snapshot, narrowed)

    def _restore(self, saved: list[_Saved]) -> None:
        for item in reversed(saved):
            if self._inference.infer(item.key) != item.narrowed:
                continue  # rebound in the branch (``if not torch.is_tensor(x): x = torch.tensor(x)``)
            # Exactly what was there: ``bind`` would keep an opaque rebinding of a host tensor a host
            # tensor, and the ``x.device.type != "cuda"`` of one arm would outlive the arm.
            self._inference.reinstate(item.key, item.snapshot)


def _other(place: Place | DeviceLiteral) -> Place | DeviceLiteral:
    if isinstance(place, DeviceLiteral):
        return DeviceLiteral.ACCELERATOR if place is DeviceLiteral.CPU else DeviceLiteral.CPU
    return Place.DEVICE if place is Place.HOST_TENSOR else Place.HOST_TENSOR


def _owner_facts(
    side: cst.BaseExpression, spec_of: Callable[[], DeviceLiteral | None]
) -> tuple[Facts, Facts] | None:
    """The facts (where it holds, where it fails) of a test that ``side`` (``t.device.type``) names
    the device ``spec_of()`` reads, about the tensor ``t``; None when either is unknown."""
    tensor = _device_owner(side)
    if tensor is None or isinstance(tensor, cst.Name) and tensor.value in ("self", "cls"):
        return None  # ``self.device.type == "cuda"`` of a module: where its weights are; self is no tensor
    spec = spec_of()
    if spec is None:
        return None
    place = Place.HOST_TENSOR if spec is DeviceLiteral.CPU else Place.DEVICE
    return ((tensor, place),), ((tensor, _other(place)),)


def _names_a_rare_accelerator(spec: cst.BaseExpression) -> bool:
    """A string naming ``_RARE_ACCELERATOR`` (``"mps"``, ``"mps:0"``)."""
    if not isinstance(spec, cst.SimpleString):
        return False
    text = spec.evaluated_value
    return isinstance(text, str) and text.strip().lower().startswith(_RARE_ACCELERATOR)


def _device_variable(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``device.type`` / ``target_device.type`` / ``device`` / ``str(device)`` of a device held in a
    variable -> the variable."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "str" and len(expr.args) == 1:
        expr = expr.args[0].value
    held = expr.value if isinstance(expr, cst.Attribute) and expr.attr.value == "type" else expr
    if isinstance(held, cst.Name) and "device" in held.value:
        return held
    return None


def _device_owner(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``t.device.type`` / ``t.device`` / ``str(t.device)`` -> ``t``."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "str" and expr.args:
        expr = expr.args[0].value
    if isinstance(expr, cst.Attribute) and expr.attr.value == "type":
        expr = expr.value
    return device_owner(expr)


def _on_the_host(facts: Facts) -> bool:
    """A device test that shows a host tensor (not ``isinstance(x, list)``, which says nothing of devices)."""
    return any(place in (Place.HOST_TENSOR, DeviceLiteral.CPU) for _, place in facts)
