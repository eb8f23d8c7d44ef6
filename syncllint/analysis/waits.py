"""Host waits and asynchronous device->host copies, recognised in calls.

Shared by the explicit-wait rules (which report the waits) and the device inference (which
forgets pending copies at a wait, so reading their results afterwards is fine).
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

import libcst as cst

from syncllint.analysis import torch_api as api
from syncllint.analysis.arguments import is_true, keyword, positional
from syncllint.analysis.imports import dotted_name
from syncllint.analysis.values import DeviceLiteral, Handle, Place

if TYPE_CHECKING:
    from syncllint.analysis.devices import DeviceInference


class WaitKind(enum.Enum):
    DEVICE = "device"  # torch.cuda.synchronize(): every stream of the device
    STREAM = "stream"  # Stream.synchronize()
    EVENT = "event"  # Event.synchronize()


def _handle_by_name(expr: cst.BaseExpression) -> Handle | None:
    name = dotted_name(expr)
    leaf = (name or "").rsplit(".", 1)[-1].lower()
    if "stream" in leaf:
        return Handle.STREAM
    # ``accelerator = get_torch_device_backend(device)``, DeepSpeed's ``profile["accelerator"]``:
    # the running accelerator's module (an object with a ``synchronize()`` of the whole device).
    if "accelerator" in leaf:
        return Handle.DEVICE_MODULE
    # ``copy_done.synchronize()``, ``ready_evt.synchronize()``: events named for what they mark.
    if any(part in leaf for part in _EVENT_NAME_PARTS):
        return Handle.EVENT
    return None


_EVENT_NAME_PARTS = ("event", "evt", "done", "ready")


def _is_platform_synchronize(qualified: str | None) -> bool:
    """``current_platform.synchronize()`` of vLLM and sglang: their wrapper of ``torch.cuda.synchronize()``."""
    return qualified is not None and (
        qualified == "current_platform.synchronize" or qualified.endswith(".current_platform.synchronize")
    )


def host_wait(call: cst.Call, inference: DeviceInference) -> WaitKind | None:
    """What a call makes the host wait for, if it is a synchronize call."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "synchronize":
        qualified = inference.imports.qualify(func)
        if qualified in api.DEVICE_SYNCHRONIZE or _is_platform_synchronize(qualified):
            return WaitKind.DEVICE
        # ``get_torch_device().synchronize()``, ``device_module.synchronize()`` after
        # ``device_module = torch.get_device_module()``: the running accelerator's module.
        handle = inference.infer(func.value).handle
        if handle is Handle.DEVICE_MODULE:
            return WaitKind.DEVICE
        if call.args:
            return None
        handle = handle or _handle_by_name(func.value)
        if handle is Handle.DEVICE_MODULE:
            return WaitKind.DEVICE
        if handle is Handle.STREAM:
            return WaitKind.STREAM
        if handle is Handle.EVENT:
            return WaitKind.EVENT
        return None
    if isinstance(func, cst.Name) and inference.imports.qualify(func) in api.DEVICE_SYNCHRONIZE:
        return WaitKind.DEVICE
    return None


def completes_queued_work(call: cst.Call, inference: DeviceInference) -> bool:
    """A host wait, or a blocking read of a device tensor (which drains the stream too)."""
    if host_wait(call, inference) is not None:
        return True
    func = call.func
    if not isinstance(func, cst.Attribute):
        return False
    if func.attr.value == "to" and call.args and not is_true(keyword(call, "non_blocking")):
        # ``t.to(torch.device("cpu"), non_blocking=False)``: a blocking copy to the host waits for
        # the stream like ``.cpu()`` does.
        target = keyword(call, "device") or positional(call, 0)
        if target is None or inference.device_spec(target) is not DeviceLiteral.CPU:
            return False
    elif call.args:
        return False
    elif func.attr.value == "query":  # ``while not event.query(): ...`` ends with the work done
        return True
    elif func.attr.value not in ("item", "tolist", "cpu"):
        return False
    owner = inference.infer(func.value)
    return owner.place in (Place.DEVICE, Place.TENSOR) and not inference.is_pending(func.value)


def is_async_copy_to_host(expr: cst.BaseExpression, inference: DeviceInference) -> bool:
    """``t.to("cpu", non_blocking=True)`` of a tensor that may be on a device."""
    if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "to"):
        return False
    if not is_true(keyword(expr, "non_blocking")):
        return False
    target = keyword(expr, "device") or positional(expr, 0)
    if target is None or inference.device_spec(target) is not DeviceLiteral.CPU:
        return False
    return inference.infer(expr.func.value).place in (Place.DEVICE, Place.TENSOR)


def async_copy_destination(call: cst.Call, inference: DeviceInference) -> cst.BaseExpression | None:
    """The host tensor of ``host.copy_(device_tensor, non_blocking=True)``, else None."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "copy_"):
        return None
    if not is_true(keyword(call, "non_blocking")):
        return None
    source = positional(call, 0) or keyword(call, "src")
    if source is None or inference.infer(source).place not in (Place.DEVICE, Place.TENSOR):
        return None
    if inference.infer(func.value).place is not Place.HOST_TENSOR:
        return None
    return func.value
