"""SYNC2xx: host->device copies that make the host wait."""

from __future__ import annotations

import libcst as cst

from syncllint.analysis import torch_api as api
from syncllint.analysis.arguments import keyword, positional
from syncllint.analysis.values import DeviceLiteral, Place
from syncllint.checks.base import (
    FixProposal,
    Rule,
    RuleContext,
    holds_no_elements,
    receiver_confidence,
    variable_device_confidence,
)
from syncllint.diagnostics import Applicability, Confidence
from syncllint.fixbuild import Imports, staged_factory, staged_new_tensor


class TensorFromHostData(Rule):
    code = "SYNC201"
    kept_in_host_code = True
    uploads_to_the_device = True
    fix_applicability = Applicability.SAFE
    name = "tensor-from-host-data"
    family = "host->device copies"
    summary = "`torch.tensor(data, device=...)` / `as_tensor` / `new_tensor` copy host data with a blocking copy"
    triggers = ("torch", "new_tensor")

    def visit_Call(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if not isinstance(node, cst.Call) or ctx.in_compiled_function:
            # Traced by ``torch.compile``, the data becomes a constant of the graph, made on the
            # device by a kernel: measured, no sync (a ``.item()`` there still breaks the graph and syncs).
            return
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "new_tensor":
            self._check_new_tensor(node, node.func, ctx)
            return
        qualified = ctx.qualify(node.func)
        if qualified not in api.HOST_DATA_CONSTRUCTORS:
            return
        device = keyword(node, "device")
        if device is None:
            if ctx.inference.default_device is not DeviceLiteral.ACCELERATOR:
                return
            confidence = Confidence.HIGH
        else:
            spec = ctx.inference.device_spec(device)
            if spec is DeviceLiteral.CPU:
                return
            confidence = Confidence.HIGH if spec is DeviceLiteral.ACCELERATOR else variable_device_confidence(device, ctx)
        data = positional(node, 0) or keyword(node, "data")
        if data is None or not self._is_host_data(data, ctx) or _own_device(data, device):
            return
        if ctx.in_host_code and _device_of_a_local(device):
            return  # ``as_tensor([h, w], device=image.device)`` in host code: the image is on the host
        ctx.report(
            self,
            node,
            f"`{qualified.rsplit('.', 1)[-1]}(..., device=...)` copies host data with a blocking copy from "
            "pageable memory, so the host waits for the GPU; stage it in pinned memory and copy with "
            "`non_blocking=True` (or use the project's `async_tensor_h2d`)",
            confidence,
            fix=_staging_fix(
                node,
                staged_factory(node, qualified, ctx.h2d_helper, _plain(data, ctx)),
                ctx,
                device_visible=ctx.inference.device_spec(device) is DeviceLiteral.ACCELERATOR,
            ),
        )

    @staticmethod
    def _is_host_data(data: cst.BaseExpression, ctx: RuleContext) -> bool:
        if holds_no_elements(data):
            return False  # ``torch.tensor([])``: nothing to copy
        value = ctx.inference.infer(data)
        # A tensor already on the device is copied on the device (measured: no sync); a tensor of
        # unknown place might be either, so stay quiet.
        return value.assumed or value.place not in (Place.DEVICE, Place.TENSOR)

    def _check_new_tensor(self, node: cst.Call, func: cst.Attribute, ctx: RuleContext) -> None:
        device = keyword(node, "device")
        if device is not None:
            spec = ctx.inference.device_spec(device)
            if spec is DeviceLiteral.CPU:
                return
            confidence: Confidence | None = Confidence.HIGH if spec is DeviceLiteral.ACCELERATOR else Confidence.MEDIUM
        else:
            receiver = ctx.inference.infer(func.value)
            if receiver.place is Place.UNKNOWN and not ctx.module_imports_torch:
                return
            confidence = receiver_confidence(receiver, ctx)
        data = positional(node, 0) or keyword(node, "data")
        if confidence is None or data is None or not self._is_host_data(data, ctx):
            return
        ctx.report(
            self,
            node,
            "`.new_tensor(data)` copies host data to the receiver's device with a blocking copy, so the "
            "host waits for the GPU; stage it in pinned memory and copy with `non_blocking=True`",
            confidence,
            fix=_staging_fix(
                node,
                staged_new_tensor(node, func.value, ctx.imports, ctx.h2d_helper, _plain(data, ctx)),
                ctx,
                device_visible=confidence is Confidence.HIGH,
            ),
        )


def _plain(data: cst.BaseExpression, ctx: RuleContext) -> bool:
    """Host data that is not a tensor (a list, a number, a numpy array)."""
    return ctx.inference.infer(data).place in (Place.PYTHON, Place.NUMPY)


def _staging_fix(
    node: cst.Call, built: tuple[cst.Call, Imports] | None, ctx: RuleContext, *, device_visible: bool
) -> FixProposal | None:
    """Safe: the staging tensor is a fresh temporary nobody else can mutate while the copy is in flight.

    Unsafe when the device is not visibly an accelerator: it may be the CPU at run time, and
    ``pin_memory=True`` raises on a machine without one (the project's helper checks for that)."""
    if built is None or ctx.inference.default_device is not None:
        # Under a default device (``with torch.device("cuda")``) the staging tensor would not be on the host.
        return None
    replacement, imports = built
    uses_helper = bool(ctx.h2d_helper) and any(name is not None for _, name in imports)
    safe = device_visible or uses_helper
    message = "Stage in pinned memory and copy with `non_blocking=True`"
    return FixProposal(node, replacement, Applicability.SAFE if safe else Applicability.UNSAFE, message, imports)


RULES = (TensorFromHostData,)


def _device_of_a_local(device: cst.BaseExpression | None) -> bool:
    """``device=image.device`` / ``images[0].device``: a local tensor's device (not ``self.pool.device``)."""
    if not (isinstance(device, cst.Attribute) and device.attr.value == "device"):
        return False
    head = device.value
    while isinstance(head, cst.Subscript):
        head = head.value
    return isinstance(head, cst.Name) and head.value != "self"


def _own_device(data: cst.BaseExpression, device: cst.BaseExpression | None) -> bool:
    """``as_tensor(t, device=t.device)``: t is a tensor already where it is asked to be (no copy, measured)."""
    return isinstance(device, cst.Attribute) and device.attr.value == "device" and device.value.deep_equals(data)
