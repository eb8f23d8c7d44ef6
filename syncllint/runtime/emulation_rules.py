"""The measured sync rules (H200, torch 2.11), applied to emulated device tensors.

Two levels. Python-level calls (``Tensor.item``, ``__setitem__``, ``.to``, factories with
``device=``) are decided by ``CALL_RULES`` in the TorchFunctionMode, where the arguments are still
what the user wrote (a Python scalar value, a boolean mask). Everything else that takes a device
tensor runs with the TorchDispatchMode watching its aten ops (``DISPATCH_RULES``): a scalar read
(``_local_scalar_dense``) or a data-dependent output shape (``nonzero``, ``_unique2``, ...).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from syncllint.runtime.cuda_hooks import PAGEABLE_NON_BLOCKING_LIMIT_BYTES
from syncllint.runtime.emulation_tensors import (
    PINNED,
    is_cuda_device,
    is_device,
    nbytes,
    parse_device,
    tag,
    untag,
)
from syncllint.runtime.events import D2H, H2D, SCALAR_READ, SHAPE_READ

__all__ = ["CALL_RULES", "H2D", "WATCHED_CALL_RULES", "dispatch_sync", "download", "host_tensor_sync", "is_cuda_device", "parse_to", "scalar_read", "upload", "upload_sync", "wants_device"]

Sync = tuple[str, str]  # (kind, op)

# ---- Python-level rules: fn(args, kwargs) -> the sync it makes, or None ---------------------

_SCALAR_READS = {
    "item": "item",
    "__int__": "__int__",
    "__float__": "__float__",
    "__complex__": "__float__",
    "__bool__": "__bool__",
    "is_nonzero": "__bool__",
    "__index__": "__index__",
    "__format__": "__format__",
}


def _self_is_device(args: tuple[Any, ...]) -> bool:
    return bool(args) and is_device(args[0])


def _python_scalar(value: object) -> bool:
    return isinstance(value, (bool, int, float, complex))


def _index_parts(index: object) -> tuple[object, ...]:
    return index if isinstance(index, tuple) else (index,)


def _is_bool_tensor(value: object) -> bool:
    return isinstance(value, torch.Tensor) and value.dtype in (torch.bool, torch.uint8)


def setitem_sync(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Sync | None:
    """``x[index] = value`` on a device tensor (measured row by row in the ground truth)."""
    target, index, value = args
    if not is_device(target):
        # ``cpu_t[i] = g[i]``: a blocking device -> host copy (cpu_setitem_from_device_0dim, 101 ms).
        return (D2H, "setitem (device value into host tensor)") if is_device(value) else None
    parts = _index_parts(index)
    device_mask = any(is_device(p) and _is_bool_tensor(p) for p in parts)
    if _python_scalar(value):
        if device_mask:
            return None  # masked_fill_ path: no sync
        if any(isinstance(p, (torch.Tensor, list)) for p in parts):
            return (H2D, "setitem")  # advanced indexing copies the scalar from the host
        # Basic indexing syncs only when it lands on one element (measured: ``x[3] = 0.0`` and
        # ``x2d[0, 1] = 5`` sync; a row ``x2d[3] = 0.0`` or ``x2d[:, 0] = 5`` takes the fill path).
        ints = sum(1 for p in parts if isinstance(p, int) and not isinstance(p, bool))
        added = sum(1 for p in parts if p is None)
        one_element = ints > 0 and target.dim() - ints + added == 0
        return (H2D, "setitem") if one_element else None
    if is_device(value):
        return (SHAPE_READ, "masked write") if device_mask else None
    if device_mask and isinstance(value, torch.Tensor) and value.dim() == 0:
        return None  # a 0-d host tensor is read as a scalar: the masked_fill_ path (measured, no wait)
    return (H2D, "setitem")  # a host tensor or list value is uploaded with a blocking copy


def index_put_sync(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Sync | None:
    indices = args[1] if len(args) > 1 else kwargs.get("indices", ())
    values = args[2] if len(args) > 2 else kwargs.get("values")
    if isinstance(values, torch.Tensor) and not is_device(values):
        return (H2D, "copy_(H2D)")
    if any(is_device(i) and _is_bool_tensor(i) for i in indices if i is not None):
        return (SHAPE_READ, "masked write")
    return None


def masked_fill_sync(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Sync | None:
    value = args[2] if len(args) > 2 else kwargs.get("value")
    return (SCALAR_READ, "masked_fill_") if is_device(value) else None


def one_hot_sync(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Sync | None:
    num_classes = args[1] if len(args) > 1 else kwargs.get("num_classes", -1)
    return (SHAPE_READ, "one_hot") if num_classes == -1 else None


def repeat_interleave_sync(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Sync | None:
    repeats = args[1] if len(args) > 1 else kwargs.get("repeats", args[0] if len(args) == 1 else None)
    if kwargs.get("output_size") is not None or (len(args) > 3 and args[3] is not None):
        return None
    return (SHAPE_READ, "repeat_interleave") if is_device(repeats) else None


def equal_sync(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Sync | None:
    other = args[1] if len(args) > 1 else kwargs.get("other")
    return None if other is args[0] else (SCALAR_READ, "equal")  # identical arguments short-circuit


def host_index_sync(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Sync | None:
    """``g[cpu_idx]`` / ``g[[1, 2]]``: integer indices on the host are uploaded with a blocking copy.

    Measured (H200): ``g[cpu_long_idx]`` and ``g[[1, 2]]`` waited 101 ms; a CPU bool mask and a
    CPU 0-d index did not (the mask is read on the host, the 0-d index is a host integer)."""
    if not _self_is_device(args) or len(args) < 2:
        return None
    for part in _index_parts(args[1]):
        if isinstance(part, list) and part and not any(isinstance(p, bool) for p in part):
            return (H2D, "index (host list)")
        if isinstance(part, torch.Tensor) and not is_device(part) and part.dim() > 0 and not _is_bool_tensor(part):
            return (H2D, "index (host tensor)")
    return None


def where_sync(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Sync | None:
    """``torch.where(c, g, torch.tensor(0.0))``: a host tensor operand is uploaded (101.2 ms measured)."""
    operands = [*args[1:3], kwargs.get("input"), kwargs.get("other")]
    if any(isinstance(t, torch.Tensor) and not is_device(t) for t in operands):
        return (H2D, "where (host tensor)")
    return None


def copies_data(data: object) -> bool:
    """Whether building a device tensor from ``data`` copies anything: ``torch.tensor([], device=d)``
    copies nothing (measured on an H200: no wait, benchmarks/probes/construction_probe.py)."""
    if isinstance(data, (list, tuple)):
        return len(data) > 0
    size = getattr(data, "size", None)
    return not (isinstance(size, int) and size == 0)  # an empty numpy array


def host_tensor_sync(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Sync | None:
    """``torch.tensor([g0, g1])`` with no device: each device element is copied to the host."""
    data = args[0] if args else kwargs.get("data")
    if isinstance(data, (list, tuple)) and any(is_device(t) for t in _flatten(data)):
        return (D2H, "torch.tensor(device tensors)")
    return None


def _flatten(data: list[Any] | tuple[Any, ...]) -> list[Any]:
    out: list[Any] = []
    for item in data:
        out.extend(_flatten(item) if isinstance(item, (list, tuple)) else [item])
    return out


# Rules that can only find a sync: when they find none, the aten-level watch still decides
# (``g[device_mask]`` is a nonzero, ``torch.where(mask)`` too).
WATCHED_CALL_RULES: dict[str, Callable[[tuple[Any, ...], dict[str, Any]], Sync | None]] = {
    "__getitem__": host_index_sync,
    "where": where_sync,
}

CALL_RULES: dict[str, Callable[[tuple[Any, ...], dict[str, Any]], Sync | None]] = {
    "__setitem__": setitem_sync,
    "index_put_": index_put_sync,
    "index_put": index_put_sync,
    "masked_fill_": masked_fill_sync,
    "masked_fill": masked_fill_sync,
    "one_hot": one_hot_sync,
    "repeat_interleave": repeat_interleave_sync,
    "equal": equal_sync,
}


def scalar_read(name: str, args: tuple[Any, ...]) -> Sync | None:
    if name == "tolist" and _self_is_device(args):
        return (D2H, "tolist")
    op = _SCALAR_READS.get(name)
    return (SCALAR_READ, op) if op is not None and _self_is_device(args) else None


# Calls whose operands are all used as tensors (never read as sizes or indices on the host): on
# CUDA they only queue kernels, so the aten-level watch is skipped for them (it costs ~10x).
_ELEMENTWISE = (
    "add sub mul div true_divide floor_divide remainder pow neg abs exp log log1p sqrt rsqrt sin cos tanh "
    "sigmoid relu gelu silu softmax log_softmax matmul mm bmm addmm addcmul addcdiv lerp clamp "
    "clamp_min clamp_max maximum minimum eq ne lt le gt ge logical_and logical_or logical_not bitwise_and "
    "bitwise_or bitwise_not reciprocal square sign floor ceil round trunc erf baddbmm"
).split()
NEVER_SYNC = frozenset(
    [*_ELEMENTWISE, *(f"{n}_" for n in _ELEMENTWISE)]
    + [f"__{n}__" for n in "add radd iadd sub rsub isub mul rmul imul truediv rtruediv itruediv matmul rmatmul neg pow rpow and or xor invert eq ne lt le gt ge abs".split()]
    + ["__get__", "dim", "size", "numel", "element_size", "is_floating_point", "is_complex", "contiguous", "clone", "detach", "requires_grad_"]
)
DECIDED_WITHOUT_ATEN = frozenset(["tolist", *_SCALAR_READS]) | NEVER_SYNC


# ---- copies between host and device ---------------------------------------------------------


def upload_sync(source: torch.Tensor, non_blocking: bool, op: str) -> Sync | None:
    """A host -> device copy: async only from pinned memory, or small pageable non_blocking copies;
    a copy of no elements transfers nothing (measured on an H200: no wait)."""
    if nbytes(source) == 0:
        return None
    if not non_blocking:
        return (H2D, op)
    if source in PINNED or nbytes(source) <= PAGEABLE_NON_BLOCKING_LIMIT_BYTES:
        return None
    return (H2D, op)


def upload(source: torch.Tensor) -> torch.Tensor:
    return tag(untag(source).clone())


def download(source: torch.Tensor) -> torch.Tensor:
    return untag(source).clone()


def parse_to(self: torch.Tensor, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[torch.device | None, torch.dtype | None, bool, bool]:
    """``Tensor.to``'s overloads -> (device, dtype, non_blocking, copy)."""
    rest = list(args)
    device = parse_device(kwargs.get("device"))
    dtype = kwargs.get("dtype")
    if rest and isinstance(rest[0], torch.Tensor):
        other = rest.pop(0)
        device, dtype = other.device, other.dtype
    else:
        if rest and not isinstance(rest[0], torch.dtype):
            device = parse_device(rest.pop(0))
        if rest and isinstance(rest[0], torch.dtype):
            dtype = rest.pop(0)
    non_blocking = bool(rest[0]) if rest else bool(kwargs.get("non_blocking", False))
    copy = bool(rest[1]) if len(rest) > 1 else bool(kwargs.get("copy", False))
    return device, dtype, non_blocking, copy


# ---- aten-level rules (inside a call that involves a device tensor) ---------------------------

_DATA_DEPENDENT = {
    "nonzero": "nonzero",
    "masked_select": "masked_select",
    "_unique2": "unique",
    "_unique": "unique",
    "unique_dim": "unique",
    "unique_consecutive": "unique",
    "bincount": "bincount",
}
_CHECKED = {"allclose": "allclose", "_linalg_check_errors": "linalg check", "equal": "equal"}


def dispatch_sync(name: str, args: tuple[Any, ...], kwargs: dict[str, Any], on_host: Callable[[object], bool]) -> Sync | None:
    """The sync an aten op makes on a CUDA tensor; ``on_host`` says whether an argument was host data."""
    if name == "_local_scalar_dense":
        return None if on_host(args[0]) else (SCALAR_READ, "item")
    if name in _DATA_DEPENDENT:
        return (SHAPE_READ, _DATA_DEPENDENT[name])
    if name in _CHECKED:
        return (SCALAR_READ, _CHECKED[name])
    if name == "histc":
        low = args[2] if len(args) > 2 else kwargs.get("min", 0)
        high = args[3] if len(args) > 3 else kwargs.get("max", 0)
        return (SHAPE_READ, "histc") if low == high else None  # range read from the data
    if name == "repeat_interleave":
        return (SHAPE_READ, "repeat_interleave") if kwargs.get("output_size") is None else None
    if name in ("index", "index_put", "index_put_", "_index_put_impl_"):
        indices = args[1] if len(args) > 1 else ()
        if any(_is_bool_tensor(i) and not on_host(i) for i in indices if i is not None):
            return (SHAPE_READ, "mask index")
    return None


def wants_device(kwargs: dict[str, Any]) -> bool:
    return is_cuda_device(kwargs.get("device"))
