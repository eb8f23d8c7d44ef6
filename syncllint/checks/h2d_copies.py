"""SYNC202: blocking host->device copies of existing host tensors (``.to(dev)``, ``.cuda()``, ``copy_``)."""

from __future__ import annotations

import libcst as cst

from syncllint.analysis import torch_api as api
from syncllint.analysis.arguments import is_tensor_to, keyword, positional
from syncllint.analysis.host_regions import names_a_lazy_device
from syncllint.analysis.module_state import is_fresh_module
from syncllint.analysis.ranks import factory_size_arguments
from syncllint.analysis.values import DeviceLiteral, Place, Value
from syncllint.checks.base import (
    FixProposal,
    Rule,
    RuleContext,
    holds_no_elements,
    variable_device_confidence,
)
from syncllint.diagnostics import Applicability, Confidence
from syncllint.fixbuild import (
    is_fresh_tensor_call,
    method,
    pinned_async_copy,
    true,
    with_keyword,
)

_DTYPE_NAMES = ("float", "bfloat", "int", "uint", "bool", "complex", "half")


def _target_confidence(call: cst.Call, ctx: RuleContext) -> Confidence | None:
    """How sure we are that ``.to(...)`` moves to an accelerator (None: CPU, a dtype, or a host tensor)."""
    target = keyword(call, "device") or positional(call, 0)
    if target is None or _names_a_dtype(target, ctx):
        return None
    named = ctx.qualify(target.func if isinstance(target, cst.Call) else target) or ""
    if any(names_a_lazy_device(part) for part in named.split(".")):
        return Confidence.LOW  # ``.to(xm.xla_device())``: an upload to XLA is queued, nothing waits
    spec = ctx.inference.device_spec(target)
    if spec is DeviceLiteral.ACCELERATOR:
        return Confidence.HIGH
    if isinstance(target, cst.IfExp) and DeviceLiteral.CPU in (
        ctx.inference.device_spec(target.body), ctx.inference.device_spec(target.orelse)
    ):
        return Confidence.LOW  # ``device="cpu" if low_memory else rank``: the CPU on one of two paths
    target_value = ctx.inference.infer(target)
    if spec is not DeviceLiteral.CPU and target_value.is_tensor and not target_value.assumed:
        # ``torch.as_tensor(value).to(self.raw_noise)``: to another tensor's device (and dtype).
        return {Place.DEVICE: Confidence.HIGH, Place.TENSOR: Confidence.MEDIUM}.get(target_value.place)
    if spec is DeviceLiteral.CPU or target_value.place not in (Place.UNKNOWN, Place.PYTHON):
        return None  # the CPU, a host tensor
    leaf = named.rsplit(".", 1)[-1]
    if not leaf and isinstance(target, cst.Attribute):
        leaf = target.attr.value  # ``.to(next(mlp.parameters()).dtype)``: no dotted name, still a dtype
    if isinstance(target, cst.SimpleString) or "dtype" in leaf or leaf.lower().startswith(_DTYPE_NAMES):
        # A string we cannot read; a dtype in a variable or ``torch.get_default_dtype()``; another
        # framework's type (``fx.Float32(a).to(fx.BFloat16)`` in a kernel DSL).
        return None
    return variable_device_confidence(target, ctx)  # ``.to(device)`` / ``.to(self.device)``


def _names_a_dtype(target: cst.BaseExpression, ctx: RuleContext) -> bool:
    """``torch.float32``, a name bound to one (``F32, F64 = torch.float32, torch.float64``),
    ``torch.float32 if device.type == "mps" else torch.float64``, ``getattr(torch, name)``."""
    return ctx.inference.names_a_dtype(target)


def _builds_an_empty_tensor(receiver: cst.BaseExpression, ctx: RuleContext) -> bool:
    """``torch.tensor([])``, ``torch.Tensor()``, ``torch.empty(0)``: a tensor with no elements,
    made right there (a copy of no elements moves nothing: measured, no wait)."""
    if not isinstance(receiver, cst.Call):
        return False
    data = positional(receiver, 0)
    qualified = ctx.qualify(receiver.func) or ""
    sizes = factory_size_arguments(qualified, receiver) if qualified in api.SIZED_FACTORIES else None
    if sizes:
        # ``torch.empty(0)``, ``torch.zeros(0, 4)``, ``torch.empty((0,))``: a literal zero among the sizes.
        if len(sizes) == 1 and isinstance(sizes[0], (cst.Tuple, cst.List)):
            sizes = [el.value for el in sizes[0].elements]
        return any(isinstance(size, cst.Integer) and size.evaluated_value == 0 for size in sizes)
    if qualified in api.LEGACY_CONSTRUCTORS and not receiver.args:
        return True  # ``torch.Tensor()``: a placeholder of no elements to ``torch.cat`` onto
    builds_from_data = qualified in api.HOST_DATA_CONSTRUCTORS or (
        qualified in api.LEGACY_CONSTRUCTORS  # ``torch.Tensor(data)``
    )
    return builds_from_data and data is not None and holds_no_elements(data)


def _is_pageable_host(value: Value) -> bool:
    return value.place is Place.HOST_TENSOR and not value.pinned


class BlockingCopyToDevice(Rule):
    code = "SYNC202"
    kept_in_host_code = True
    uploads_to_the_device = True
    fix_applicability = Applicability.SAFE
    triggers = ("cuda", ".to", "copy_")
    name = "blocking-copy-to-device"
    family = "host->device copies"
    summary = "`.to(dev)` / `.cuda()` / `dev.copy_(host)` of a host tensor without pinned memory and `non_blocking=True`"

    def visit_Call(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
            return
        method_name = node.func.attr.value
        if method_name == "cuda" or is_tensor_to(node):
            self._check_move(node, node.func, method_name, ctx)
        elif method_name == "copy_":
            self._check_copy_into(node, node.func, ctx)

    def _check_move(self, node: cst.Call, func: cst.Attribute, method_name: str, ctx: RuleContext) -> None:
        if keyword(node, "non_blocking") is not None and not _is_false(node):
            return  # a non-blocking copy from pageable memory measured no debug-mode sync for small copies
        positionals = len([a for a in node.args if a.keyword is None])
        if method_name == "to":
            confidence = _target_confidence(node, ctx)
            if confidence is None or positionals > 2:  # a third positional is ``non_blocking``
                return
        elif positionals > 1:
            return
        else:
            confidence = Confidence.HIGH
        source = ctx.inference.infer(func.value)
        if source.collated:
            confidence = min(confidence, Confidence.MEDIUM)  # a loader's batch: host by how loaders work
        elif source.place is not Place.HOST_TENSOR:
            if is_fresh_module(func.value, ctx.inference):
                # A CamelCase constructor is a torch module only where the module works with torch.
                sure = Confidence.MEDIUM if ctx.module_imports_torch else Confidence.LOW
                ctx.report(
                    self,
                    node,
                    f"`.{method_name}(...)` of a module built on the host copies each of its parameters from "
                    "pageable memory, blocking the host; build it on the device (`device=` or "
                    "`with torch.device(...)`)",
                    min(sure, confidence),
                )
            return  # device tensors (a no-op move) and unknown receivers stay quiet
        if _builds_an_empty_tensor(func.value, ctx):
            return  # ``torch.Tensor([]).to(device)``: nothing to copy (measured on an H200: no wait)
        fresh = is_fresh_tensor_call(func.value)
        replacement = pinned_async_copy(func.value, node, already_pinned=source.pinned)
        what, pinning = (
            ("a DataLoader's batch (collated on the host)", " (`DataLoader(..., pin_memory=True)`)")
            if source.collated else ("a host tensor", "")
        )
        ctx.report(
            self,
            node,
            f"`.{method_name}(...)` of {what} is a blocking copy from pageable memory: the host waits for "
            f"the GPU; copy from pinned memory with `non_blocking=True`{pinning}",
            confidence,
            # A device we cannot see may be the CPU at run time, where pin_memory() raises without an accelerator.
            # A batch may come from a loader that already moved it, where pin_memory() would raise.
            fix=None if source.collated else FixProposal(
                node, replacement, _applicability(fresh and confidence is Confidence.HIGH), _MESSAGE),
        )

    def _check_copy_into(self, node: cst.Call, func: cst.Attribute, ctx: RuleContext) -> None:
        source_expr = positional(node, 0) or keyword(node, "src")
        if source_expr is None or keyword(node, "non_blocking") is not None and not _is_false(node):
            return
        if ctx.inference.infer(func.value).place is not Place.DEVICE:
            return
        source = ctx.inference.infer(source_expr)
        if source.place is not Place.HOST_TENSOR:
            return
        staged = source_expr if source.pinned else method(source_expr, "pin_memory")
        args = [a.with_changes(value=staged) if a.value is source_expr else a for a in node.args]
        replacement = with_keyword(node.with_changes(args=args), "non_blocking", true())
        ctx.report(
            self,
            node,
            "`device_tensor.copy_(host_tensor)` is a blocking copy from pageable memory: the host waits for the "
            "GPU; copy from pinned memory with `non_blocking=True`",
            Confidence.HIGH,
            fix=FixProposal(node, replacement, _applicability(is_fresh_tensor_call(source_expr)), _MESSAGE),
        )


_MESSAGE = "Copy from pinned memory with `non_blocking=True`"


def _is_false(node: cst.Call) -> bool:
    flag = keyword(node, "non_blocking")
    return isinstance(flag, cst.Name) and flag.value == "False"


def _applicability(fresh: bool) -> Applicability:
    # A named host tensor may be written by later host code while the asynchronous copy still
    # reads it (pin_memory() returns the tensor itself when it is already pinned): needs a human look.
    return Applicability.SAFE if fresh else Applicability.UNSAFE


RULES = (BlockingCopyToDevice,)
