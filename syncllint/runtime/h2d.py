"""``async_tensor_h2d``: host data -> device without making the host wait."""

from __future__ import annotations

from typing import Any

from syncllint.runtime.context import INTERNAL


def async_tensor_h2d(data: Any, device: Any, dtype: Any = None) -> Any:
    """Stage ``data`` in pinned memory and upload it with one ``non_blocking`` copy.

    Equivalent to ``torch.tensor(data, dtype=dtype, device=device)`` (measured: that form blocks the
    host behind queued kernels; this one returns at once). Pins only where CUDA is available.
    The staging tensor is fresh, so nothing can modify it while the copy is in flight.
    """
    import torch

    pin = torch.cuda.is_available()
    token = INTERNAL.set(True)  # the staging tensor is host-only: nothing to report
    try:
        staged = torch.tensor(data, dtype=dtype, device="cpu", pin_memory=pin)
    finally:
        INTERNAL.reset(token)
    return staged.to(device, non_blocking=True)
