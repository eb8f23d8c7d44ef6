"""Per-function tracking of host tensors still being written by a ``non_blocking`` copy.

``h = t.to("cpu", non_blocking=True)`` and ``host.copy_(t, non_blocking=True)`` return before the
data has landed; until a host wait (``event.synchronize()``, ``torch.cuda.synchronize()``, a
blocking read of a device tensor) the host memory holds stale values. Flow-ordered like the rest
of the inference, with one refinement: a block that ends in ``return`` / ``raise`` / ``break`` /
``continue`` does not pass its copies or its waits on to the code after it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from syncllint.analysis import torch_api as api
from syncllint.analysis.imports import dotted_name
from syncllint.analysis.waits import (
    async_copy_destination,
    completes_queued_work,
    is_async_copy_to_host,
)

# A view of the same memory (``.numpy()`` of a host tensor too) is as unfinished as the tensor.
_VIEWS = api.VIEW_METHODS | {"numpy"}

@dataclass
class _Frame:
    names: set[str] = field(default_factory=set)
    at_block_entry: list[set[str]] = field(default_factory=list)


class PendingCopies:
    """Mixin of DeviceInference (``infer``, ``device_spec``, ``imports`` come from there)."""

    def __init__(self) -> None:
        self._pending: list[_Frame] = [_Frame()]

    def _enter_pending_scope(self) -> None:
        self._pending.append(_Frame())

    def _exit_pending_scope(self) -> None:
        self._pending.pop()

    def is_pending(self, expr: cst.BaseExpression) -> bool:
        """Whether ``expr`` is host data that an unfinished asynchronous copy is still writing."""
        if is_async_copy_to_host(expr, self):  # type: ignore[arg-type]
            return True
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _VIEWS:
            return self.is_pending(expr.func.value)  # a view of the same memory (``.numpy()``, ``.squeeze(0)``)
        key = dotted_name(expr)
        return key is not None and key in self._pending[-1].names

    def _mark_pending(self, target: cst.BaseExpression, pending: bool) -> None:
        key = dotted_name(target)
        if key is None:
            return
        if pending:
            self._pending[-1].names.add(key)
        else:
            self._pending[-1].names.discard(key)

    def enter_block(self) -> None:
        frame = self._pending[-1]
        frame.at_block_entry.append(set(frame.names))

    def leave_block(self, ends_flow: bool) -> None:
        frame = self._pending[-1]
        before = frame.at_block_entry.pop() if frame.at_block_entry else set()
        if ends_flow:
            frame.names = before

    def note_call(self, call: cst.Call) -> None:
        """Effects of a finished call: a host wait completes every pending copy."""
        if completes_queued_work(call, self):  # type: ignore[arg-type]
            self._pending[-1].names.clear()
            return
        destination = async_copy_destination(call, self)  # type: ignore[arg-type]
        if destination is not None:
            self._mark_pending(destination, True)
