"""SYNC1xx: reading device data on the host (``.item()``, ``.tolist()``, ``.cpu()``)."""

from __future__ import annotations

import libcst as cst

from syncllint.analysis.arguments import (
    is_string_literal,
    is_tensor_to,
    keyword,
    may_be_set,
    positional,
)
from syncllint.analysis.factories import names_the_meta_device
from syncllint.analysis.imports import dotted_name
from syncllint.analysis.module_state import holds_only_host_data
from syncllint.analysis.values import DeviceLiteral, Place
from syncllint.checks.base import (
    Rule,
    RuleContext,
    names_an_import,
    receiver_confidence,
)
from syncllint.checks.item_args import ItemArgumentFixes
from syncllint.diagnostics import Applicability, Confidence
from syncllint.prefilter import HOST_NAMES

_NOT_TENSORS = ("self", "cls", "super")


def _method_call(node: cst.CSTNode, method: str) -> cst.Attribute | None:
    """The ``recv.method`` of a ``recv.method(...)`` call, else None."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == method:
        receiver = node.func.value
        if isinstance(receiver, cst.Name) and receiver.value in _NOT_TENSORS:
            return None
        if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Name) and receiver.func.value == "super":
            return None
        return node.func
    return None


class ItemOnTensor(Rule):
    code = "SYNC101"
    fix_applicability = Applicability.SAFE
    name = "item-on-tensor"
    family = "host reads"
    summary = "`.item()` copies a device scalar to the host and waits for the GPU"
    triggers = ("item",)

    def __init__(self) -> None:
        self._item_fixes = ItemArgumentFixes()  # fill_(t.item()) / clamp(min=t.item()) -> pass t

    def visit_Call(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if isinstance(node, cst.Call):
            self._item_fixes.note_call(node, ctx)
        fix = self._item_fixes.take(node)
        func = _method_call(node, "item")
        if func is None or not isinstance(node, cst.Call) or node.args:
            return
        confidence = receiver_confidence(ctx.inference.infer(func.value), ctx)
        if confidence is None:
            return
        ctx.report(
            self,
            node,
            "`.item()` waits for the GPU to finish all queued work, then copies one value to the host; "
            "keep the value on the device (pass the 0-d tensor on) or read it where a sync is already paid",
            confidence,
            fix=fix,
        )


class TolistOnTensor(Rule):
    code = "SYNC102"
    name = "tolist-on-tensor"
    family = "host reads"
    summary = "`.tolist()` copies a device tensor to the host and waits for the GPU"
    triggers = ("tolist",)

    def visit_Call(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        func = _method_call(node, "tolist")
        if func is None or not isinstance(node, cst.Call) or node.args:
            return
        receiver = ctx.inference.infer(func.value)
        confidence = receiver_confidence(receiver, ctx)
        if confidence is None:
            return
        if receiver.place is Place.UNKNOWN:
            # Measured on labelled vLLM/sglang/transformers code: an unknown ``.tolist()`` receiver is
            # a host tensor, an ndarray or a multimodal field kept on the CPU more often than not.
            confidence = Confidence.LOW
        ctx.report(
            self,
            node,
            "`.tolist()` waits for the GPU, then copies the tensor to host memory; keep the data on the "
            "device, or keep a host mirror (e.g. `*_cpu`) up to date instead of reading it back",
            confidence,
        )


class CopyToHost(Rule):
    code = "SYNC103"
    name = "blocking-copy-to-host"
    family = "host reads"
    summary = "`.cpu()` / `.to(\"cpu\")` without `non_blocking=True` waits for the GPU"
    # ``.cpu()``, a "cpu" device, or ``.to(t.device)`` with ``t`` a host tensor (named so, made by
    # a torch factory, or pinned).
    triggers = ("cpu", "torch", "pin_memory", HOST_NAMES)

    def visit_Call(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
            return
        method = node.func.attr.value
        target: cst.BaseExpression | None = None
        if method == "cpu":
            if _method_call(node, "cpu") is None or node.args or names_an_import(node.func.value, ctx):
                return
            what = "`.cpu()`"
        elif method == "to":
            if _method_call(node, "to") is None or not is_tensor_to(node):
                return
            target = keyword(node, "device") or positional(node, 0)
            if target is None or ctx.inference.device_spec(target) is not DeviceLiteral.CPU or names_the_meta_device(target):
                return
            # Name the device the code holds (``.to(self.device)``), which only inference says is the host.
            named = None if is_string_literal(target) else dotted_name(target)
            what = f"`.to({named})`, a host device here," if named else "`.to(\"cpu\")`"
        else:
            return
        non_blocking = keyword(node, "non_blocking")
        if may_be_set(non_blocking):
            return  # non_blocking=True (or a flag we cannot see): no sync
        if (target is None or is_string_literal(target)) and holds_only_host_data(node.func.value, ctx.inference):
            # ``model = Net(...)`` above, not moved since: already on the host. (``.to(device)`` of
            # one, with a ``device`` that reads as the CPU here, is mostly an upload on other paths.)
            return
        receiver = ctx.inference.infer(node.func.value)
        confidence = receiver_confidence(receiver, ctx)
        if confidence is None:
            return
        if target is not None and ctx.inference.infer(target).assumed and receiver.place is not Place.DEVICE:
            # ``t.to(device=device)`` where every caller passes "cpu": a helper that moves data where
            # its callers keep it, which is the host more often than not (vLLM's LoRA loader).
            confidence = Confidence.LOW
        ctx.report(
            self,
            node,
            f"{what} is a blocking device->host copy: the host waits for all queued GPU work; copy into "
            "pinned memory with `non_blocking=True` and wait on an event before reading, or keep the data on the device",
            confidence,
        )




_NUMPY_CONVERTERS = frozenset(
    "numpy." + n for n in "asarray array asanyarray ascontiguousarray asfortranarray".split()
)


class NumpyOfDeviceTensor(Rule):
    code = "SYNC104"
    triggers = ("numpy", "array")
    name = "numpy-of-device-tensor"
    family = "host reads"
    summary = "`.numpy(force=True)` copies a device tensor to the host; `.numpy()` / `np.asarray(t)` of one raises"

    def visit_Call(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if not isinstance(node, cst.Call):
            return
        func = _method_call(node, "numpy")
        if func is not None:
            value = ctx.inference.infer(func.value)
            force = keyword(node, "force")
            if may_be_set(force):
                # ``force=True`` is ``.detach().cpu()...numpy()``: a blocking copy (measured: 101 ms
                # behind a 100 ms kernel).
                confidence = receiver_confidence(value, ctx)
                if confidence is None or value.place is Place.UNKNOWN:
                    return
                ctx.report(
                    self,
                    node,
                    "`.numpy(force=True)` of a device tensor is a blocking device->host copy: the host waits "
                    "for all queued GPU work; keep the data on the device, or copy into pinned memory with "
                    "`non_blocking=True` and wait on an event before reading",
                    confidence,
                )
                return
            argument: cst.BaseExpression = func.value
            what = "`.numpy()`"
        elif ctx.qualify(node.func) in _NUMPY_CONVERTERS and node.args and node.args[0].keyword is None:
            argument = node.args[0].value
            what = f"`np.{ctx.qualify(node.func).rsplit('.', 1)[-1]}(t)`"  # type: ignore[union-attr]
        else:
            return
        # Without ``force`` a device tensor cannot become an array (measured: TypeError), so only
        # a tensor the code shows on a device is reported; a tensor of unknown place must then be
        # a host tensor whenever the line runs at all.
        if ctx.inference.infer(argument).place is not Place.DEVICE:
            return
        ctx.report(
            self,
            node,
            f"{what} of a device tensor raises TypeError (`Tensor.__array__` needs host memory); the usual "
            "fix, `.cpu().numpy()`, is a blocking copy that waits for the GPU: keep the data on the device, "
            "or copy into pinned memory with `non_blocking=True` and wait on an event before reading",
            Confidence.HIGH,
        )


RULES = (ItemOnTensor, TolistOnTensor, CopyToHost, NumpyOfDeviceTensor)

