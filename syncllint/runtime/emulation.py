"""CPU emulation: report the syncs code would make on CUDA while it runs on a CPU-only torch.

``Emulation`` is entered by ``sync_check(emulate=True)`` on the checking thread: a TorchFunctionMode
keeps "cuda" tensors on the CPU as ``DeviceTensor``s and applies the Python-level rules, a
TorchDispatchMode watches the aten ops of calls that take a device tensor. ``torch.cuda``'s
synchronize / streams / events are replaced by host fakes while an emulated check runs (explicit
waits are reported). Every event says ``emulated``.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from syncllint.analysis.torch_api import VIEW_METHODS
from syncllint.runtime import emulation_rules as rules
from syncllint.runtime.context import INTERNAL, ActiveCheck, current_check
from syncllint.runtime.emulation_cuda import CUDA_FAKES, report
from syncllint.runtime.emulation_cuda import emulating as _emulating
from syncllint.runtime.emulation_tensors import (
    PINNED,
    is_device,
    tag,
    tag_all,
    tensors_in,
    untag,
)
from syncllint.runtime.events import D2H, RACE, SCALAR_READ

_NUMPY_ERROR = "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first."
# Reading metadata of a tensor whose copy is still in flight is fine; reading its values is not.
_METADATA = frozenset({"size", "dim", "numel", "is_pinned", "data_ptr", "element_size", "__len__", "shape", "dtype", "__get__"})
# Views of a tensor whose copy is in flight read nothing; they are in flight themselves.
_VIEWS = VIEW_METHODS


@dataclass
class _Watch:
    """The call being watched at the aten level (one event per Python-level call at most)."""

    active: bool = False
    reported: bool = False
    host_storages: set[int] = field(default_factory=set)


class _DispatchWatcher(TorchDispatchMode):  # type: ignore[no-untyped-call]
    def __init__(self, watch: _Watch) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.watch = watch

    def _on_host(self, value: object) -> bool:
        if not isinstance(value, torch.Tensor) or is_device(value):
            return False
        return value.untyped_storage().data_ptr() in self.watch.host_storages

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        watch = self.watch
        if not watch.reported:
            sync = rules.dispatch_sync(func.overloadpacket.__name__, args, kwargs, self._on_host)
            if sync is not None:
                watch.reported = True
                report(*sync)
        return func(*args, **kwargs)


class _FunctionRules(TorchFunctionMode):
    def __init__(self, check: ActiveCheck, watch: _Watch) -> None:
        super().__init__()
        self.check = check
        self.watch = watch

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = dict(kwargs or {})
        if INTERNAL.get() or current_check() is not self.check:
            return func(*args, **kwargs)
        name = getattr(func, "__name__", "")
        if self.check.in_flight and name in _VIEWS and args and id(args[0]) in self.check.in_flight:
            view = func(*args, **kwargs)  # no read: the view is as unfinished as its base
            if isinstance(view, torch.Tensor):
                self.check.in_flight[id(view)] = view
            return view
        if self.check.in_flight and name not in _METADATA:
            self._race_check(args, kwargs)
        handler = _HANDLERS.get(name)
        if handler is not None and (args and isinstance(args[0], torch.Tensor)):
            return handler(func, args, kwargs)
        pinned_out = kwargs.get("pin_memory") is True
        if pinned_out:
            kwargs["pin_memory"] = False
        to_device = rules.wants_device(kwargs)
        if to_device:
            kwargs["device"] = "cpu"
            if name in ("tensor", "as_tensor", "asarray") and args and not is_device(args[0]) and rules.copies_data(args[0]):
                report(rules.H2D, "torch.tensor" if name == "tensor" else "as_tensor")
        elif name in ("tensor", "as_tensor", "asarray"):
            sync = rules.host_tensor_sync(args, kwargs)
            if sync is not None:
                report(*sync)
                return func(*args, **kwargs)  # a host tensor: not tagged
        tensors = tensors_in(args, kwargs)
        if not to_device and not any(is_device(t) for t in tensors):
            result = func(*args, **kwargs)
            return PINNED.add(result) if pinned_out and isinstance(result, torch.Tensor) else result
        sync = rules.scalar_read(name, args)
        call_rule = rules.CALL_RULES.get(name)
        if sync is None and call_rule is not None:
            sync = call_rule(args, kwargs)
        watched_rule = rules.WATCHED_CALL_RULES.get(name)
        if sync is None and watched_rule is not None:
            sync = watched_rule(args, kwargs)
        if sync is not None:
            report(*sync)
        decided = sync is not None or call_rule is not None or name in rules.DECIDED_WITHOUT_ATEN
        result = func(*args, **kwargs) if decided else self._watched(func, args, kwargs, tensors)
        return tag(result) if type(result) is torch.Tensor else tag_all(result)

    def _watched(self, func: Any, args: Any, kwargs: Any, tensors: list[torch.Tensor]) -> Any:
        watch = self.watch
        saved = (watch.active, watch.reported, watch.host_storages)
        watch.active, watch.reported = True, False
        watch.host_storages = {t.untyped_storage().data_ptr() for t in tensors if not is_device(t)}
        try:
            # Pushed per call, not for the whole check: a mode that sees every aten op of
            # host-only code would slow it for nothing.
            with _DispatchWatcher(watch):
                return func(*args, **kwargs)
        finally:
            watch.active, watch.reported, watch.host_storages = saved

    def _race_check(self, args: Any, kwargs: Any) -> None:
        for tensor in tensors_in(args, kwargs):
            if self.check.in_flight.pop(id(tensor), None) is tensor:
                report(RACE, "read before copy done")


# ---- Python-level handlers: moves between host and device, pinning, numpy ---------------------


def _in_flight(tensor: torch.Tensor) -> torch.Tensor:
    check = _emulating()
    if check is not None:
        check.in_flight[id(tensor)] = tensor
    return tensor


def _to(func: Any, args: Any, kwargs: Any) -> Any:
    self = args[0]
    device, dtype, non_blocking, copy = rules.parse_to(self, args[1:], kwargs)
    extra = {"memory_format": kwargs["memory_format"]} if "memory_format" in kwargs else {}
    going_to_cuda = device is not None and device.type == "cuda"
    if is_device(self) and device is not None and device.type == "cpu":
        if not non_blocking:
            report(D2H, "to(cpu)")
        result = rules.download(self).to(dtype=dtype or self.dtype, **extra)
        return _in_flight(PINNED.add(result)) if non_blocking else result
    if not is_device(self) and going_to_cuda:
        sync = rules.upload_sync(self, non_blocking, "to(cuda)")
        if sync is not None:
            report(*sync)
        return tag(untag(self).to(dtype=dtype or self.dtype, copy=True, **extra))
    if is_device(self):
        if (dtype is None or dtype == self.dtype) and not copy and not extra:
            return self
        return tag(untag(self).to(dtype=dtype or self.dtype, copy=copy, **extra))
    return func(*args, **kwargs)


def _cuda(func: Any, args: Any, kwargs: Any) -> Any:
    self = args[0]
    if is_device(self):
        return self
    non_blocking = bool(kwargs.get("non_blocking", args[2] if len(args) > 2 else False))
    sync = rules.upload_sync(self, non_blocking, "cuda")
    if sync is not None:
        report(*sync)
    return rules.upload(self)


def _cpu(func: Any, args: Any, kwargs: Any) -> Any:
    if not is_device(args[0]):
        return func(*args, **kwargs)
    report(D2H, "cpu")
    return rules.download(args[0])


def _copy_(func: Any, args: Any, kwargs: Any) -> Any:
    dst, src = args[0], args[1]
    non_blocking = bool(args[2] if len(args) > 2 else kwargs.get("non_blocking", False))
    if is_device(dst) and isinstance(src, torch.Tensor) and not is_device(src):
        sync = rules.upload_sync(src, non_blocking, "copy_(H2D)")
        if sync is not None:
            report(*sync)
    elif not is_device(dst) and is_device(src):
        if non_blocking and dst in PINNED:
            _in_flight(dst)
        else:
            report(D2H, "copy_(D2H)")
    untag(dst).copy_(untag(src) if isinstance(src, torch.Tensor) else src)
    return dst


def _pin_memory(func: Any, args: Any, kwargs: Any) -> Any:
    if is_device(args[0]):
        raise RuntimeError("cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors can be pinned")
    return PINNED.add(args[0].clone())


def _is_pinned(func: Any, args: Any, kwargs: Any) -> Any:
    return (not is_device(args[0])) and args[0] in PINNED


def _numpy(func: Any, args: Any, kwargs: Any) -> Any:
    if not is_device(args[0]):
        return func(*args, **kwargs)
    if getattr(func, "__name__", "") == "numpy" and bool(kwargs.get("force", args[1] if len(args) > 1 else False)):
        report(D2H, "numpy(force=True)")  # x.detach().cpu().numpy(): a blocking copy
        return rules.download(args[0]).detach().numpy()
    raise TypeError(_NUMPY_ERROR)


def _format(func: Any, args: Any, kwargs: Any) -> Any:
    if not is_device(args[0]):
        return func(*args, **kwargs)
    # f"{loss:.4f}" reads the value (a 0-d tensor formats its item()); other specs print it.
    report(SCALAR_READ, "__format__")
    return format(untag(args[0]), *args[1:])


def _record_stream(func: Any, args: Any, kwargs: Any) -> Any:
    return None if is_device(args[0]) else func(*args, **kwargs)


def _get_device(func: Any, args: Any, kwargs: Any) -> Any:
    return 0 if is_device(args[0]) else func(*args, **kwargs)


def _new_tensor(func: Any, args: Any, kwargs: Any) -> Any:
    self, data = args[0], args[1] if len(args) > 1 else kwargs.pop("data")
    device = kwargs.pop("device", None)
    on_device = rules.is_cuda_device(device) if device is not None else is_device(self)
    kwargs.pop("pin_memory", None)
    result = untag(self).new_tensor(untag(data) if isinstance(data, torch.Tensor) else data, **kwargs)
    if not on_device:
        return result
    if not is_device(data):
        report(rules.H2D, "new_tensor")
    return tag(result)


_HANDLERS = {
    "to": _to,
    "cuda": _cuda,
    "cpu": _cpu,
    "copy_": _copy_,
    "pin_memory": _pin_memory,
    "is_pinned": _is_pinned,
    "numpy": _numpy,
    "__array__": _numpy,
    "__format__": _format,
    "record_stream": _record_stream,
    "get_device": _get_device,
    "new_tensor": _new_tensor,
}


class Emulation:
    """The modes of one emulated check, entered and left on the checking thread."""

    def __init__(self, check: ActiveCheck) -> None:
        self._watch = _Watch()
        self._stack = contextlib.ExitStack()
        self._check = check

    def __enter__(self) -> Emulation:
        CUDA_FAKES.acquire()
        self._stack.callback(CUDA_FAKES.release)
        self._stack.enter_context(_FunctionRules(self._check, self._watch))
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()
