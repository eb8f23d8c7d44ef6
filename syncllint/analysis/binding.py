"""Binding names as the one pass meets assignments: what each target of ``a = ...``, ``a, b = ...``,
``self.x = ...`` and loop targets holds, kept per scope (``Scope``).

A mixin of the device inference (``devices.py``), which owns the scopes and answers ``infer``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import libcst as cst

from syncllint.analysis.growing import starts_empty
from syncllint.analysis.imports import ImportMap, dotted_name
from syncllint.analysis.module_state import builds_a_host_module, module_state
from syncllint.analysis.values import (
    LAYER,
    PYTHON,
    PYTHON_SCALAR,
    UNKNOWN,
    DeviceLiteral,
    Place,
    Value,
)

if TYPE_CHECKING:
    from syncllint.analysis.devices import DeviceInference
    from syncllint.analysis.object_usage import FunctionUsage

# Unpacking a module's output into this many names: a forward returning tensors with lists and sizes.
_MANY_OUTPUTS = 3


@dataclass
class Scope:
    names: dict[str, Value] = field(default_factory=dict)
    default_device: DeviceLiteral | None = None
    is_class: bool = False
    # ``device = t.device``: the device names' owners, so a later ``assert t.is_cpu`` reaches them.
    device_owners: dict[str, str] = field(default_factory=dict)
    # Names bound once that the function's code shows are host tensors (``x.numpy()``: host_usage.py).
    host_shown: frozenset[str] = frozenset()
    # What the function's body shows of its names (object_usage.py), read on first need.
    usage: FunctionUsage | None = None
    # Lists that started empty and have grown only by host tensors since (growing.py).
    growing: set[str] = field(default_factory=set)
    # Names holding a module built on the host in this function, not moved since (module_state.py).
    fresh_modules: set[str] = field(default_factory=set)
    # Names holding such a module once moved (``tp.to(device)``): still a module, now on the device.
    moved_modules: set[str] = field(default_factory=set)
    # Fresh modules given tensors from elsewhere since (``linear.weight.data = w``, a state dict
    # assigned as loaded): moving them still uploads what was built, but they may hold device data.
    altered_modules: set[str] = field(default_factory=set)
    # In an ``__init__`` building on the host: ``self.`` fields it set to host tensors, which stay
    # there until the module moves (the class's table keeps them as tensors of unknown place).
    built_here: dict[str, Value] | None = None
    # Parameters that default to None (``threshold: Tensor | None = None``), with the value bound
    # for them: ``threshold or default`` tests for None while the name still holds that value.
    none_defaults: dict[str, Value] = field(default_factory=dict)


class Binding:
    """Mixin of DeviceInference: ``bind`` / ``bind_assignment`` write into the innermost scope."""

    imports: ImportMap
    _scopes: list[Scope]
    _class_attrs: list[dict[str, Value]]

    if TYPE_CHECKING:  # provided by DeviceInference and its other mixins; declared for the type checker

        def infer(self, node: cst.BaseExpression) -> Value: ...

        def lookup(self, key: str) -> Value | None: ...

        def _refine_by_name(self, name: str, value: Value) -> Value: ...

        def is_pending(self, expr: cst.BaseExpression) -> bool: ...

        def _mark_pending(self, target: cst.BaseExpression, pending: bool) -> None: ...

        def own_function_elements(self, call: cst.Call) -> tuple[Place | None, ...] | None: ...

        def layer_call(self, call: cst.Call) -> Value | None: ...

        def host_fields(self) -> frozenset[str]: ...

    def bind(self, target: cst.BaseExpression, value: Value, *, rebinding: bool = True) -> None:
        """``rebinding=False``: a loop or comprehension target, whose earlier value says nothing."""
        self._mark_pending(target, False)
        if isinstance(target, cst.Name):
            if not rebinding:  # a new object each iteration: what its attributes held is gone
                names = self._scopes[-1].names
                prefix = target.value + "."
                for stale in [k for k in names if k.startswith(prefix)]:
                    del names[stale]
                self._scopes[-1].device_owners.pop(target.value, None)
            previous = self._scopes[-1].names.get(target.value) if rebinding else None
            if value.place is Place.UNKNOWN and not value.layer and previous is not None and previous.is_tensor:
                # ``labels = merged["labels"]`` / ``h = self.helper(h)``: an opaque rebinding of a
                # tensor is most likely a tensor still, though where is no longer certain.
                place = Place.HOST_TENSOR if previous.place is Place.HOST_TENSOR else Place.TENSOR
                value = Value(place, assumed=previous.assumed)
            if target.value in self._scopes[-1].host_shown and value.place in (Place.TENSOR, Place.UNKNOWN):
                value = Value(Place.HOST_TENSOR, value.dtype, value.zero_dim, rank=value.rank)
            self._scopes[-1].names[target.value] = self._refine_by_name(target.value, value)
            self._scopes[-1].fresh_modules.discard(target.value)
            self._scopes[-1].moved_modules.discard(target.value)
            self._scopes[-1].altered_modules.discard(target.value)
        elif isinstance(target, cst.Attribute):
            value = self._refine_by_name(target.attr.value, value)
            found = self._binding_table(target)
            if found is not None:
                table, key = found
                self._scopes[-1].fresh_modules.discard(key)
                self._scopes[-1].moved_modules.discard(key)
                # ``linear.weight.data = w`` gives a module built here someone else's tensor.
                owners = {key.rsplit(".", n)[0] for n in range(1, key.count(".") + 1)}
                self._scopes[-1].altered_modules.update(owners & self._scopes[-1].fresh_modules)
                table[key] = value
                built = self._scopes[-1].built_here
                if built is not None:
                    built.pop(key, None)
        elif isinstance(target, (cst.Tuple, cst.List)):
            # ``a, b = x.max(dim=0)`` / ``a, b = t1, t2``: elements of a tuple of tensors.
            element = value if value.is_tensor or value.collated else UNKNOWN
            for el in target.elements:
                # ``h, *rest = x.split(n)``: a starred target always gets a list.
                starred = isinstance(el, cst.StarredElement)
                self.bind(el.value, PYTHON if starred else element, rebinding=rebinding)
        elif isinstance(target, cst.StarredElement):
            self.bind(target.value, PYTHON)

    def note_built_here(self, target: cst.BaseExpression, held: Value) -> None:
        """``self.levels = torch.tensor(levels)`` in an ``__init__`` building on the host: read
        later in that ``__init__`` (``self.levels.prod().item()``) it is a host tensor."""
        built = self._scopes[-1].built_here
        key = dotted_name(target) if isinstance(target, cst.Attribute) else None
        if built is not None and key is not None and key.startswith("self.") and key.count(".") == 1:
            if held.place is Place.HOST_TENSOR:
                built[key] = held

    def binding_snapshot(self, target: cst.BaseExpression) -> Value | None:
        """What the innermost scope itself holds for ``target`` (None: nothing bound there), so a
        narrowing can be undone exactly: ``bind`` guesses about opaque rebindings, which an undo must not."""
        found = self._binding_table(target)
        return found[0].get(found[1]) if found is not None else None

    def reinstate(self, target: cst.BaseExpression, snapshot: Value | None) -> None:
        """Put back what ``binding_snapshot`` saw: a branch's device fact ends with the branch."""
        found = self._binding_table(target)
        if found is None:
            return
        table, key = found
        if snapshot is None:
            table.pop(key, None)
        else:
            table[key] = snapshot

    def _binding_table(self, target: cst.BaseExpression) -> tuple[dict[str, Value], str] | None:
        """The table ``bind`` writes ``target`` into (a class's ``self.`` fields, or the scope's
        names), with its key there."""
        key = dotted_name(target)
        if key is None:
            return None
        if isinstance(target, cst.Attribute) and key.startswith("self.") and self._class_attrs:
            return self._class_attrs[-1], key
        return self._scopes[-1].names, key

    def bind_assignment(self, targets: list[cst.BaseExpression], value: cst.BaseExpression) -> None:
        pending = self.is_pending(value)  # before binding: ``x = x.to("cpu", non_blocking=True)``
        if isinstance(value, cst.Name) and value.value == "None":
            # ``masks_cpu = None`` on one path says nothing about what the name holds on the others
            # (the inference is flow-ordered: a reset must not erase the tensor bound above).
            targets = [t for t in targets if not (isinstance(t, cst.Name) and self.lookup(t.value) is not None)]
        for target in targets:
            if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
                if len(target.elements) == len(value.elements):
                    for t_el, v_el in zip(target.elements, value.elements):
                        if isinstance(t_el.value, (cst.Tuple, cst.List)):
                            self.bind_assignment([t_el.value], v_el.value)  # ``(h, w), n = x.size(), k``
                        else:
                            self.bind(t_el.value, self.infer(v_el.value))
                    continue
            if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, cst.Call):
                # ``should_pad, lens = coordinate(...)`` of a helper whose returns show each place.
                places = self.own_function_elements(value)
                starred = any(isinstance(el, cst.StarredElement) for el in target.elements)
                if places is not None and len(places) == len(target.elements) and not starred:
                    whole = self.infer(value)
                    for t_el, place in zip(target.elements, places):
                        self.bind(t_el.value, Value(place) if place else whole if whole.is_tensor else UNKNOWN)
                    continue
                named = [el for el in target.elements if not (isinstance(el.value, cst.Name) and el.value.value == "_")]
                outputs = self.layer_call(value) if len(named) >= _MANY_OUTPUTS and not starred else None
                if outputs is not None:
                    # ``(masks, lengths, rope, img_lens) = self.rope_embedder(...)``: a module's forward
                    # returning that many things mixes tensors with lists and sizes; each is a tensor
                    # by convention only.
                    for t_el in target.elements:
                        self.bind(t_el.value, Value(outputs.place, assumed=True) if outputs.is_tensor else UNKNOWN)
                    continue
            inferred = self.infer(value)
            key = dotted_name(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
            built = key is not None and builds_a_host_module(value, cast("DeviceInference", self), inferred)
            if built and inferred.place is Place.UNKNOWN and not inferred.layer:
                # ``model = Net(...)`` after ``model = model.cpu()``: an object, whatever the name held.
                inferred = LAYER
            self.bind(target, module_state(self.imports, target, value, inferred, self.host_fields))
            if isinstance(target, (cst.Tuple, cst.List)) and _is_a_shape(value):
                # ``batch, features, h, w = x.shape``: Python ints, whatever ``x`` is.
                for t_el in target.elements:
                    self.bind(t_el.value, PYTHON if isinstance(t_el, cst.StarredElement) else PYTHON_SCALAR)
            elif isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, cst.Call):
                for t_el in target.elements:
                    if _names_a_shape(t_el.value):
                        self.bind(t_el.value, PYTHON)
            self.note_built_here(target, inferred)
            if built and key is not None:
                # ``model = Net(...)``: a module still on the host until moved or rebound (``bind``).
                self._scopes[-1].fresh_modules.add(key)
            if isinstance(target, cst.Name):
                if starts_empty(value):
                    self._scopes[-1].growing.add(target.value)
                else:
                    self._scopes[-1].growing.discard(target.value)
            if pending:
                self._mark_pending(target, True)
            if isinstance(target, cst.Name):
                held = device_owner(value)
                owner = dotted_name(held) if held is not None else None
                if owner is None:
                    self._scopes[-1].device_owners.pop(target.value, None)
                else:
                    self._scopes[-1].device_owners[target.value] = owner

    def device_names_of(self, owner: str) -> list[str]:
        """Names bound to ``<owner>.device`` in the current function and not rebound since."""
        return [name for name, of in self._scopes[-1].device_owners.items() if of == owner]


def _is_a_shape(expr: cst.BaseExpression) -> bool:
    """``x.shape``, ``x.shape[:2]``, ``x.size()``: a tuple of Python ints (a ``torch.Size`` for a tensor)."""
    if isinstance(expr, cst.Subscript) and all(isinstance(el.slice, cst.Slice) for el in expr.slice):
        expr = expr.value
    if isinstance(expr, cst.Call) and not expr.args:
        expr = expr.func
        return isinstance(expr, cst.Attribute) and expr.attr.value == "size"
    return isinstance(expr, cst.Attribute) and expr.attr.value == "shape"


def _names_a_shape(target: cst.BaseExpression) -> bool:
    """``x, hw_shape = self.patch_embed(x)``: one shape (a ``torch.Size`` or tuple of ints) among
    what a call returns; ``spatial_shapes`` (plural) is often a tensor of them, and the parts of a
    tensor unpacked (``num_shape, ... = metadata``) are tensors whatever their names."""
    return isinstance(target, cst.Name) and target.value.lower().endswith("shape")


def device_owner(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``t.device`` -> ``t``: the tensor whose device the expression names."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "device":
        return expr.value
    return None
