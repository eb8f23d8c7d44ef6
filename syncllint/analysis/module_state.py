"""What a module's state holds: attributes set on ``self`` and buffers it registers.

Module state follows the module to its device later (``model.cuda()``, ``model.to(device)``), so
the factory that first built it (``torch.zeros(n)`` without ``device=``) says nothing about where
it lives when the module runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from syncllint.analysis import torch_api as api
from syncllint.analysis.arguments import keyword, may_be_set, positional
from syncllint.analysis.imports import dotted_name
from syncllint.analysis.values import LAYER, TENSOR, DeviceLiteral, Place, Value

if TYPE_CHECKING:
    from syncllint.analysis.devices import DeviceInference
    from syncllint.analysis.imports import ImportMap

# Classes whose objects are no module (no parameters to copy, no calls mapping tensors).
_NOT_MODULES = frozenset({"Size", "Generator", "Device", "Path"})
_NOT_MODULE_SUFFIXES = ("Tensor", "Config", "Event", "Stream")
# Methods that move a module to a device; ``cpu`` moves it too, but to where it was built.
DEVICE_MOVES = frozenset(("to", "cuda", "to_empty", "xpu", "npu"))
MODULE_MOVES = DEVICE_MOVES | {"cpu"}
# Keywords that tell a constructor where to build: ``QuantAttentionFused(..., dev=dev)``.
_BUILT_WHERE_TOLD = ("device", "device_map", "dev")
# ``register_buffer(name, tensor)`` / ``register_parameter(name, param)``: the keyword of the value.
_REGISTERING = {"register_buffer": "tensor", "register_parameter": "param"}


def module_state(
    imports: ImportMap,
    target: cst.BaseExpression,
    expr: cst.BaseExpression,
    value: Value,
    host_fields: Callable[[], frozenset[str]] = frozenset,
) -> Value:
    """What ``target = expr`` binds when ``target`` is module state: ``self.w = torch.zeros(n)`` is a
    tensor of unknown place, ``self.proj = ColumnParallelLinear(...)`` a submodule (whose calls map
    tensors to tensors). ``host_fields``: fields the class only ever sets to new host tensors and
    never registers (``ClassUsage.host_fields``), which stay on the host; asked for only here, so
    the class's scan runs only when a field is set from a host factory."""
    if value.place is Place.UNKNOWN and _is_self_attribute(target) and _builds_instance(expr):
        return LAYER
    if (
        value.place is Place.HOST_TENSOR
        and not value.pinned
        and _is_self_attribute(target)
        and isinstance(expr, cst.Call)
        and imports.qualify(expr.func) in api.TORCH_FACTORIES
        and keyword(expr, "device") is None
        and dotted_name(target) not in host_fields()
    ):
        return Value(Place.TENSOR, value.dtype, value.zero_dim, rank=value.rank)
    return value


def note_registered_state(inference: DeviceInference, call: cst.Call) -> None:
    """``self.register_buffer("min_val", torch.tensor(float("inf")))``: ``self.min_val`` is a tensor
    from here on, wherever the module is moved (on the device unless the code shows otherwise)."""
    func = call.func
    if not (_is_self_attribute(func) and isinstance(func, cst.Attribute) and func.attr.value in _REGISTERING):
        return
    name = positional(call, 0) or keyword(call, "name")
    registered = positional(call, 1) or keyword(call, _REGISTERING[func.attr.value])
    if not isinstance(name, cst.SimpleString) or registered is None:
        return
    attribute = name.evaluated_value
    if not isinstance(attribute, str) or not attribute.isidentifier():
        return
    held = inference.infer(registered)
    if held.place is Place.PYTHON:
        return  # ``register_buffer("mask", None)``: a slot filled later
    place = Place.DEVICE if held.place is Place.DEVICE else Place.TENSOR
    state = Value(place, held.dtype, held.zero_dim, rank=held.rank) if held.is_tensor else TENSOR
    field = cst.Attribute(cst.Name("self"), cst.Name(attribute))
    inference.bind(field, state)
    inference.note_built_here(field, held)


def builds_a_host_module(expr: cst.BaseExpression, inference: DeviceInference, built: Value | None = None) -> bool:
    """``Linear(4, 4)``, ``Model.from_pretrained(p)``: a module built on the host (its parameters in
    pageable memory), which a later ``.to(device)`` / ``.cuda()`` copies (``built``: what the
    expression was inferred to be, when the caller has it).

    Under ``with torch.device("cuda"):`` (or a default device), with ``device=`` or a
    ``device_map`` it is built where it will live.
    """
    if not isinstance(expr, cst.Call) or inference.default_device is DeviceLiteral.ACCELERATOR:
        return False
    if any(keyword(expr, name) is not None for name in _BUILT_WHERE_TOLD):
        return False
    if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "from_pretrained":
        return True
    if not _builds_instance(expr):
        return False
    return (built or inference.infer(expr)).place in (Place.UNKNOWN, Place.PYTHON)


def note_module_moved(inference: DeviceInference, call: cst.Call) -> None:
    """``model.to(device)`` moves the module itself: after it, the name holds a module on the device.
    ``model.load_state_dict(sd, assign=True)`` leaves it where it is, but holding ``sd``'s tensors."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "load_state_dict" and may_be_set(keyword(call, "assign")):
        state = positional(call, 0) or keyword(call, "state_dict")
        if state is None or not inference.infer(state).is_host:
            # Wherever they were loaded (``torch.load(path)`` keeps the devices they were saved from).
            inference.altered_modules.add(dotted_name(func.value) or "")
    if isinstance(func, cst.Attribute) and func.attr.value in DEVICE_MOVES:
        key = dotted_name(func.value)
        if key is not None and key in inference.fresh_modules:
            inference.fresh_modules.discard(key)
            inference.moved_modules.add(key)
        if key == "self":
            inference.module_moved()


def holds_a_built_module(receiver: cst.BaseExpression, inference: DeviceInference, *, moved: bool = True) -> bool:
    """``model`` of ``model = Net(...)`` above in the function, not rebound since: on the host, or
    (``moved``) also once moved to a device."""
    key = dotted_name(receiver) if isinstance(receiver, (cst.Name, cst.Attribute)) else None
    return key is not None and (key in inference.fresh_modules or moved and key in inference.moved_modules)


def holds_only_host_data(receiver: cst.BaseExpression, inference: DeviceInference) -> bool:
    """A module built on the host above (``is_fresh_module``) that nothing has given tensors from
    elsewhere since: ``.cpu()`` of it copies nothing."""
    key = dotted_name(receiver) if isinstance(receiver, (cst.Name, cst.Attribute)) else None
    return is_fresh_module(receiver, inference) and (key is None or key not in inference.altered_modules)


def is_fresh_module(receiver: cst.BaseExpression, inference: DeviceInference) -> bool:
    """``Linear(4, 4).cuda()``, or ``model.to(device)`` of a ``model = Net(...)`` built above in the function."""
    if isinstance(receiver, cst.Call):
        return builds_a_host_module(receiver, inference)
    return holds_a_built_module(receiver, inference, moved=False) and inference.default_device is not DeviceLiteral.ACCELERATOR


def _is_self_attribute(target: cst.BaseExpression) -> bool:
    return isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self"


def _builds_instance(expr: cst.BaseExpression) -> bool:
    """``Linear(...)`` / ``nn.Embedding(...)``: a call of a class that builds a module (not a tensor
    type, a config, an event, a stream or a size)."""
    if not isinstance(expr, cst.Call):
        return False
    leaf = expr.func.attr.value if isinstance(expr.func, cst.Attribute) else dotted_name(expr.func) or ""
    # Not ``naming.names_a_class``: class names may hold an underscore (``Resampler2_5``), or be an
    # acronym (``nn.LSTM``, ``FNO``): constants in capitals are not called.
    camel_case = leaf[:1].isupper() and (any(c.islower() for c in leaf) or len(leaf) > 1 and "_" not in leaf)
    return camel_case and not leaf.endswith(_NOT_MODULE_SUFFIXES) and leaf not in _NOT_MODULES
