"""Device tensors on a CPU-only torch: CPU tensors tagged as living on ``cuda:0``.

A tensor created "on cuda" under emulation is a ``DeviceTensor``: a plain CPU tensor (the data is
real, so results are right) whose ``.device`` / ``.is_cuda`` answer as a CUDA tensor would. The
emulation's TorchFunctionMode tags the results of every op that takes a device tensor.
"""

from __future__ import annotations

import weakref
from typing import Any

import torch
from torch.utils._pytree import tree_map_only

CUDA = torch.device("cuda", 0)


class DeviceTensor(torch.Tensor):
    """A CPU tensor that stands for a CUDA tensor."""

    # Ops on it return plain tensors; the emulation mode re-tags them (one place decides).
    __torch_function__ = torch._C._disabled_torch_function_impl  # type: ignore[assignment]

    @property
    def device(self) -> torch.device:  # type: ignore[override]
        return CUDA

    @property
    def is_cuda(self) -> bool:  # type: ignore[override]
        return True

    @property
    def is_cpu(self) -> bool:  # type: ignore[override]
        return False

    def __repr__(self, *, tensor_contents: Any = None) -> str:  # type: ignore[override]
        # Printing a CUDA tensor copies it to the host (measured: str(x[:4]) synced 14 times).
        from syncllint.runtime.context import report_sync
        from syncllint.runtime.events import SCALAR_READ

        report_sync(SCALAR_READ, "__repr__", emulated=True)
        text = repr(self.as_subclass(torch.Tensor))
        return text[:-1] + ", device='cuda:0')" if text.endswith(")") else text


def is_device(value: object) -> bool:
    return isinstance(value, DeviceTensor)


def tag(tensor: torch.Tensor) -> torch.Tensor:
    """The same data, as a device tensor (a leaf stays a leaf)."""
    if isinstance(tensor, DeviceTensor) or not isinstance(tensor, torch.Tensor):
        return tensor
    if tensor.grad_fn is None:
        return torch.Tensor._make_subclass(DeviceTensor, tensor, tensor.requires_grad)
    return tensor.as_subclass(DeviceTensor)


def tag_all(result: Any) -> Any:
    return tree_map_only(torch.Tensor, tag, result)


def untag(tensor: torch.Tensor) -> torch.Tensor:
    """A plain-tensor view of a device tensor's data (no copy)."""
    if isinstance(tensor, DeviceTensor):
        return tensor.as_subclass(torch.Tensor)
    return tensor


def _collect(value: Any, out: list[torch.Tensor]) -> None:
    if isinstance(value, torch.Tensor):
        out.append(value)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _collect(item, out)
    elif isinstance(value, dict):
        for item in value.values():
            _collect(item, out)


def tensors_in(args: Any, kwargs: Any) -> list[torch.Tensor]:
    """Every tensor in the call's arguments (hand-rolled: pytree costs ~50 us a call)."""
    out: list[torch.Tensor] = []
    _collect(args, out)
    _collect(kwargs, out)
    return out


def parse_device(value: object) -> torch.device | None:
    """``device=`` as torch would read it; an int means a CUDA ordinal."""
    if value is None:
        return None
    if isinstance(value, torch.device):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return torch.device("cuda", value)
    if isinstance(value, str):
        return torch.device(value)
    return None


def is_cuda_device(value: object) -> bool:
    device = parse_device(value)
    return device is not None and device.type == "cuda"


class PinnedRegistry:
    """Which host tensors are pinned: CPU-only torch cannot pin, so emulation remembers."""

    def __init__(self) -> None:
        # id -> weak reference; an entry dies with its tensor (ids are checked against the referent).
        self._pinned: dict[int, weakref.ref[torch.Tensor]] = {}

    def add(self, tensor: torch.Tensor) -> torch.Tensor:
        key = id(tensor)
        self._pinned[key] = weakref.ref(tensor, lambda _ref: self._pinned.pop(key, None))
        return tensor

    def __contains__(self, tensor: object) -> bool:
        ref = self._pinned.get(id(tensor))
        return ref is not None and ref() is tensor


PINNED = PinnedRegistry()


def nbytes(tensor: torch.Tensor) -> int:
    return tensor.numel() * tensor.element_size()
