"""Host and device data meeting in one op: SYNC105 (device values into host tensors) and SYNC203
(host index tensors, lists and values fed to ops on device tensors).

Measured on an H200 (torch 2.11), each behind a 100 ms GPU kernel: ``torch.tensor([g0, g0])``,
``cpu[0] = g[0]``, ``cpu[0:1] = g[0:1]`` and ``cpu.copy_(g)`` blocked the host (device -> host
copies); ``g[cpu_idx]``, ``g[[1, 2]]``, ``g[cpu_idx] = v``, ``g[[1, 2]] = 0.0``,
``g[cpu_mask] = 0.0``, ``g.index_put_((cpu_idx,), v)``, ``g.index_put_((idx,), torch.tensor(0.0))``
and ``torch.where(m, g, torch.tensor(0.0))`` blocked it too (host -> device copies). Not syncing:
``g[cpu_mask]`` (a read), ``g[cpu_mask] = <device 0-d tensor>``, ``g[ci[0]]`` (a CPU 0-d index),
``g * torch.tensor(2.0)``, ``g.add_(torch.tensor(1.0))``, ``masked_fill_``/``fill_`` with a CPU
0-d value, ``torch.stack([g0, g0])``.
"""

from __future__ import annotations

import libcst as cst

from syncllint.analysis import torch_api as api
from syncllint.analysis.arguments import (
    is_string_literal,
    keyword,
    may_be_set,
    positional,
    sole_index,
)
from syncllint.analysis.values import DeviceLiteral, DType, Place, Value
from syncllint.checks.base import Rule, RuleContext
from syncllint.checks.masks import _looks_like_mask_name
from syncllint.diagnostics import Confidence
from syncllint.prefilter import DEVICE_TENSOR_EVIDENCE


def _device_confidence(value: Value) -> Confidence | None:
    if value.place is Place.DEVICE:
        return Confidence.HIGH
    if value.place is Place.TENSOR:
        return Confidence.MEDIUM
    return None


def _known_device(value: Value) -> Confidence | None:
    """Only a tensor the code shows on a device: host buffers are usually filled from host data."""
    return Confidence.HIGH if value.place is Place.DEVICE else None


def _is_python_number(expr: cst.BaseExpression, ctx: RuleContext) -> bool:
    if isinstance(expr, cst.UnaryOperation):
        expr = expr.expression
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    value = ctx.inference.infer(expr)
    return value.place is Place.PYTHON and value.zero_dim


def _host_index_kind(expr: cst.BaseExpression, ctx: RuleContext) -> str | None:
    """``"list"``, ``"int"`` (a CPU integer tensor), ``"mask"`` (a CPU bool tensor) or None."""
    if isinstance(expr, cst.List) and expr.elements:
        return "list"
    if isinstance(expr, (cst.Subscript, cst.Integer, cst.Slice)):
        return None  # ``ci[0]`` may be a 0-d tensor: a CPU 0-d index does not sync (measured)
    value = ctx.inference.infer(expr)
    if value.place is not Place.HOST_TENSOR or value.zero_dim:
        return None
    if value.dtype is DType.BOOL or _looks_like_mask_name(expr):
        return "mask"
    if value.dtype is DType.INT:
        return "int"
    return None


class DeviceDataIntoHostTensor(Rule):
    code = "SYNC105"
    triggers = DEVICE_TENSOR_EVIDENCE
    name = "device-data-into-host-tensor"
    family = "host reads"
    summary = "`torch.tensor([t0, t1])`, `cpu_t[i] = dev_t`, `cpu_t.copy_(dev_t)` copy device data to the host"

    def visit_Call(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if not isinstance(node, cst.Call):
            return
        qualified = ctx.qualify(node.func)
        if qualified in api.HOST_DATA_CONSTRUCTORS:
            self._check_constructor(node, ctx)
        elif isinstance(node.func, cst.Attribute) and node.func.attr.value == "copy_":
            self._check_copy(node, node.func, ctx)

    def _check_constructor(self, node: cst.Call, ctx: RuleContext) -> None:
        device = keyword(node, "device")
        if device is not None and ctx.inference.device_spec(device) is not DeviceLiteral.CPU:
            return  # with a device: SYNC201 reports the host round trip
        data = positional(node, 0) or keyword(node, "data")
        if not isinstance(data, (cst.List, cst.Tuple)):
            return
        best = max(
            (c for el in data.elements if (c := _known_device(ctx.inference.infer(el.value))) is not None),
            default=None,
        )
        if best is None:
            return
        ctx.report(
            self,
            node,
            "building a tensor from a list of device tensors reads each one back to the host (a sync per "
            "element); use `torch.stack([...])`, which stays on the device",
            best,
        )

    def _check_copy(self, node: cst.Call, func: cst.Attribute, ctx: RuleContext) -> None:
        non_blocking = keyword(node, "non_blocking")
        if may_be_set(non_blocking):
            return  # an async copy (or a flag we cannot read): a race hazard if read early (SYNC8xx)
        if ctx.inference.infer(func.value).place is not Place.HOST_TENSOR:
            return
        source = positional(node, 0) or keyword(node, "src")
        confidence = _known_device(ctx.inference.infer(source)) if source is not None else None
        if confidence is None:
            return
        ctx.report(
            self,
            node,
            "`host.copy_(device_tensor)` is a blocking device->host copy: the host waits for the GPU; copy "
            "into pinned memory with `non_blocking=True` and wait on an event before reading",
            confidence,
        )

    def visit_Assign(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if not isinstance(node, cst.Assign):
            return
        confidence = _known_device(ctx.inference.infer(node.value))
        if confidence is None:
            return
        for target in node.targets:
            subscript = target.target
            if isinstance(subscript, cst.Subscript) and _keyed_by_name(subscript, ctx):
                continue  # ``ranges[t.dtype] = t``: an entry of a dict of host tensors, no copy
            if isinstance(subscript, cst.Subscript) and ctx.inference.infer(subscript.value).place is Place.HOST_TENSOR:
                ctx.report(
                    self,
                    subscript,
                    "storing a device tensor into a host tensor is a blocking device->host copy: the host waits "
                    "for the GPU; keep the destination on the device, or copy asynchronously into pinned memory",
                    confidence,
                )
                return


class HostTensorIntoDeviceOp(Rule):
    code = "SYNC203"
    triggers = DEVICE_TENSOR_EVIDENCE
    name = "host-index-into-device-tensor"
    family = "host->device copies"
    summary = "indexing a device tensor with a CPU index tensor or a list (or writing through one) copies it with a blocking copy"

    def visit_Subscript(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if not isinstance(node, cst.Subscript) or ctx.is_store(node):
            return
        confidence = _device_confidence(ctx.inference.infer(node.value))
        if confidence is None:
            return
        for element in node.slice:
            if isinstance(element.slice, cst.Index) and _host_index_kind(element.slice.value, ctx) in ("list", "int"):
                self._report(node, "indexing a device tensor with a CPU index tensor or a list", confidence, ctx)
                return

    def visit_Assign(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if not isinstance(node, cst.Assign):
            return
        scalar = _is_python_number(node.value, ctx)
        for target in node.targets:
            subscript = target.target
            if not isinstance(subscript, cst.Subscript):
                continue
            confidence = _device_confidence(ctx.inference.infer(subscript.value))
            if confidence is None:
                continue
            for element in subscript.slice:
                if not isinstance(element.slice, cst.Index):
                    continue
                kind = _host_index_kind(element.slice.value, ctx)
                # ``x[cpu_idx] = 0.0`` is SYNC403's; a CPU mask syncs only with a Python scalar value.
                if kind == "list" or (kind == "int" and not scalar) or (kind == "mask" and scalar):
                    self._report(subscript, "writing into a device tensor through a CPU index, mask or list", confidence, ctx)
                    return

    def visit_Call(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if not isinstance(node, cst.Call):
            return
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("index_put_", "index_put"):
            confidence = _device_confidence(ctx.inference.infer(node.func.value))
            indices, values = positional(node, 0) or keyword(node, "indices"), positional(node, 1) or keyword(node, "values")
            host_indices = isinstance(indices, (cst.Tuple, cst.List)) and any(
                _host_index_kind(el.value, ctx) in ("int", "mask") for el in indices.elements
            )
            host_values = values is not None and ctx.inference.infer(values).place is Place.HOST_TENSOR
            if confidence is not None and (host_indices or host_values):
                self._report(node, "`index_put_` with CPU indices or a CPU value tensor", confidence, ctx)
        elif ctx.qualify(node.func) == "torch.where" and len(node.args) == 3:
            operands = [ctx.inference.infer(a.value) for a in node.args]
            # A CPU operand of one or more dimensions beside CUDA ones makes ``where`` raise, not copy:
            # only a 0-d one (or one of unknown rank) is taken over as a scalar, with a blocking copy.
            hosts = [
                a.value for a, v in zip(node.args[1:], operands[1:])
                if v.place is Place.HOST_TENSOR and not (v.rank is not None and v.rank >= 1)
            ]
            if hosts:
                best = max((c for v in operands if (c := _device_confidence(v)) is not None), default=None)
                if best is Confidence.MEDIUM and all(_built_on_a_device_variable(h) for h in hosts):
                    # ``torch.full((), v, device=device)`` beside tensors of unknown device: the code
                    # builds its operands on one ``device``; a ``"cpu"`` default says only where that
                    # device is when the caller names none.
                    return
                if best is not None:
                    self._report(node, "`torch.where` with a CPU tensor operand", best, ctx)

    def _report(self, node: cst.CSTNode, what: str, confidence: Confidence, ctx: RuleContext) -> None:
        ctx.report(
            self,
            node,
            f"{what} copies the host data to the GPU with a blocking copy from pageable memory, so the host "
            "waits for the GPU; keep index tensors on the device (or pass a Python scalar)",
            confidence,
        )


def _keyed_by_name(subscript: cst.Subscript, ctx: RuleContext) -> bool:
    """A key no tensor takes as an index: a string or a dtype (``x.dtype``, ``torch.float16``)."""
    key = sole_index(subscript)
    if key is None:
        return False
    if is_string_literal(key) or isinstance(key, cst.Attribute) and key.attr.value == "dtype":
        return True
    return ctx.inference.names_a_dtype(key)


def _built_on_a_device_variable(expr: cst.BaseExpression) -> bool:
    device = keyword(expr, "device") if isinstance(expr, cst.Call) else None
    return isinstance(device, (cst.Name, cst.Attribute))


RULES = (DeviceDataIntoHostTensor, HostTensorIntoDeviceOp)
