"""What a module's state holds: attributes set on ``self`` and buffers it registers.

Module state follows the module to its device later (``model.cuda()``, ``model.to(device)``), so
the factory that first built it (``torch.zeros(n)`` without ``device=``) says nothing about where
it lives when the module runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from syncllint.analysis import torch_api as api
from syncllint.analysis.arguments import keyword, positional
from syncllint.analysis.imports import dotted_name
from syncllint.analysis.values import LAYER, TENSOR, DeviceLiteral, Place, Value

if TYPE_CHECKING:
    from syncllint.analysis.devices import DeviceInference
    from syncllint.analysis.imports import ImportMap

# CamelCase names that build no module (no parameters to copy).
_NOT_MODULES = frozenset({"Tensor", "Size", "Generator", "Stream", "Event", "Device", "Path"})
# ``register_buffer(name, tensor)`` / ``register_parameter(name, param)``: the keyword of the value.
_REGISTERING = {"register_buffer": "tensor", "register_parameter": "param"}


def module_state(imports: ImportMap, target: cst.BaseExpression, expr: cst.BaseExpression, value: Value) -> Value:
    """What ``target = expr`` binds when ``target`` is module state: ``self.w = torch.zeros(n)`` is a
    tensor of unknown place, ``self.proj = ColumnParallelLinear(...)`` a submodule (whose calls map
    tensors to tensors)."""
    if value.place is Place.UNKNOWN and _is_self_attribute(target) and _builds_instance(expr):
        return LAYER
    if (
        value.place is Place.HOST_TENSOR
        and not value.pinned
        and _is_self_attribute(target)
        and isinstance(expr, cst.Call)
        and imports.qualify(expr.func) in api.TORCH_FACTORIES
        and keyword(expr, "device") is None
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
    inference.bind(cst.Attribute(cst.Name("self"), cst.Name(attribute)), state)


def builds_a_host_module(expr: cst.BaseExpression, inference: DeviceInference) -> bool:
    """``Linear(4, 4)``, ``Model.from_pretrained(p)``: a module built on the host (its parameters in
    pageable memory), which a later ``.to(device)`` / ``.cuda()`` copies.

    A class is told by its CamelCase name; under ``with torch.device("cuda"):`` (or a default
    device), with ``device=`` or a ``device_map`` it is built where it will live.
    """
    if not isinstance(expr, cst.Call) or inference.default_device is DeviceLiteral.ACCELERATOR:
        return False
    if keyword(expr, "device") is not None or keyword(expr, "device_map") is not None:
        return False
    callee = expr.func
    if isinstance(callee, cst.Attribute) and callee.attr.value == "from_pretrained":
        return True
    leaf = callee.attr.value if isinstance(callee, cst.Attribute) else callee.value if isinstance(callee, cst.Name) else ""
    if not (leaf[:1].isupper() and any(c.islower() for c in leaf)) or leaf.endswith("Tensor") or leaf in _NOT_MODULES:
        return False
    return inference.infer(expr).place in (Place.UNKNOWN, Place.PYTHON)


def note_built_module(inference: DeviceInference, targets: list[cst.BaseExpression], expr: cst.BaseExpression) -> None:
    """``model = Net(...)`` / ``self.embed = Embedding(...)``: remember, in this function, which names
    hold a module still on the host, until they are rebound or moved."""
    built = builds_a_host_module(expr, inference)
    for target in targets:
        key = dotted_name(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
        if key is None:
            continue
        if built:
            inference.fresh_modules.add(key)
        else:
            inference.fresh_modules.discard(key)


def note_module_moved(inference: DeviceInference, call: cst.Call) -> None:
    """``model.to(device)`` moves the module itself: after it, the name holds a module on the device."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in ("to", "cuda"):
        key = dotted_name(func.value)
        if key is not None:
            inference.fresh_modules.discard(key)


def is_fresh_module(receiver: cst.BaseExpression, inference: DeviceInference) -> bool:
    """``Linear(4, 4).cuda()``, or ``model.to(device)`` of a ``model = Net(...)`` built above in the function."""
    if isinstance(receiver, cst.Call):
        return builds_a_host_module(receiver, inference)
    key = dotted_name(receiver) if isinstance(receiver, (cst.Name, cst.Attribute)) else None
    return key is not None and key in inference.fresh_modules and inference.default_device is not DeviceLiteral.ACCELERATOR


def _is_self_attribute(target: cst.BaseExpression) -> bool:
    return isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self"


def _builds_instance(expr: cst.BaseExpression) -> bool:
    """``Linear(...)`` / ``nn.Embedding(...)``: a call of a CamelCase name (a class), not a tensor type."""
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    leaf = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    return leaf[:1].isupper() and any(c.islower() for c in leaf) and not leaf.endswith(("Tensor", "Config", "Event", "Stream"))
