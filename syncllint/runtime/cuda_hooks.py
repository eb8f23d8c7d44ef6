"""Detection on a real CUDA device: torch's sync debug mode plus patches for its blind spots.

torch's debug mode is process-global; it is set to "warn" while any check runs, and each of its
warnings is routed to the check of the thread that raised it (warnings are issued on the thread
that made the sync). Measured blind spots (H200, torch 2.11): ``torch.cuda.synchronize()``,
``Event.synchronize()``, a large pageable ``non_blocking`` H2D copy (64 MB blocked the host,
2 MiB did not) and a ``non_blocking`` D2H ``copy_`` into pageable memory.
"""

from __future__ import annotations

import re
import sys
import warnings
from typing import Any

from syncllint.runtime.context import current_check, report_sync
from syncllint.runtime.events import (
    D2H,
    EXPLICIT_WAIT,
    H2D,
    classify_source,
    source_line,
    user_site,
)
from syncllint.runtime.patching import Patch, RefCounted

SYNC_MESSAGE = "called a synchronizing CUDA operation"
_PROTOTYPE_NOTICE = "Synchronization debug mode is a prototype feature"
# A pageable non_blocking H2D copy larger than this blocks the host. Measured (H200, torch 2.11,
# benchmarks/runtime_overhead.py --pageable-probe): up to 2 MiB returned in < 0.12 ms behind a
# 100 ms kernel, 4 MiB and more waited for it.
PAGEABLE_NON_BLOCKING_LIMIT_BYTES = 2 << 20
_state: dict[str, Any] = {}


def _route_warning(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
    text = str(message)
    if SYNC_MESSAGE in text and current_check() is not None:
        frame = sys._getframe(1)
        site = user_site(frame)
        op, kind = classify_source(source_line(site.filename, site.lineno))
        report_sync(kind, op, emulated=False, frame=frame)
        return
    if (SYNC_MESSAGE in text or _PROTOTYPE_NOTICE in text) and not _state.get("user_debug_mode"):
        return  # ours: only checked threads asked for these
    _state["showwarning"](message, category, filename, lineno, file, line)


def _checked_synchronize(*args: Any, **kwargs: Any) -> Any:
    if current_check() is not None:
        report_sync(EXPLICIT_WAIT, "torch.cuda.synchronize", emulated=False, frame=sys._getframe(1))
    return _state["synchronize"](*args, **kwargs)


def _checked_event_synchronize(self: Any) -> Any:
    if current_check() is not None:
        report_sync(EXPLICIT_WAIT, "Event.synchronize", emulated=False, frame=sys._getframe(1))
    return _state["event_synchronize"](self)


def _is_cuda(device: Any) -> bool:
    return device is not None and getattr(device, "type", str(device).split(":")[0]) == "cuda"


def _pageable_upload_blocks(src: Any) -> bool:
    return (not src.is_pinned()) and src.numel() * src.element_size() > PAGEABLE_NON_BLOCKING_LIMIT_BYTES


def _checked_to(self: Any, *args: Any, **kwargs: Any) -> Any:
    non_blocking = kwargs.get("non_blocking") or (len(args) > 1 and args[-1] is True)
    if non_blocking and current_check() is not None and self.device.type == "cpu":
        import torch

        target = args[0] if args and isinstance(args[0], torch.Tensor) else None
        device = target.device if target is not None else torch._C._nn._parse_to(*args, **kwargs)[0]
        if _is_cuda(device) and _pageable_upload_blocks(self):
            report_sync(H2D, "to(cuda)", emulated=False, frame=sys._getframe(1))
    return _state["to"](self, *args, **kwargs)


def _checked_cuda(self: Any, *args: Any, **kwargs: Any) -> Any:
    if kwargs.get("non_blocking") and current_check() is not None and self.device.type == "cpu" and _pageable_upload_blocks(self):
        report_sync(H2D, "cuda", emulated=False, frame=sys._getframe(1))
    return _state["cuda"](self, *args, **kwargs)


def _checked_copy_(self: Any, src: Any, non_blocking: bool = False) -> Any:
    if non_blocking and current_check() is not None:
        if self.device.type == "cpu" and src.is_cuda and not self.is_pinned():
            report_sync(D2H, "copy_(D2H)", emulated=False, frame=sys._getframe(1))
        elif self.is_cuda and src.device.type == "cpu" and _pageable_upload_blocks(src):
            report_sync(H2D, "copy_(H2D)", emulated=False, frame=sys._getframe(1))
    return _state["copy_"](self, src, non_blocking)


# The "always" filter for the debug mode's warnings: built once (``filterwarnings`` recompiles).
_ALWAYS = ("always", re.compile(f".*{SYNC_MESSAGE}", re.IGNORECASE), UserWarning, None, 0)


def _arm() -> None:
    import torch

    _state["user_debug_mode"] = torch.cuda.get_sync_debug_mode()
    _state["showwarning"] = warnings.showwarning
    for name, value in (
        ("synchronize", torch.cuda.synchronize),
        ("event_synchronize", torch.cuda.Event.synchronize),
        ("to", torch.Tensor.to),
        ("cuda", torch.Tensor.cuda),
        ("copy_", torch.Tensor.copy_),
    ):
        _state[name] = value
    patches = [
        Patch(torch.cuda, "synchronize", _checked_synchronize),
        Patch(torch.cuda.Event, "synchronize", _checked_event_synchronize),
        Patch(torch.Tensor, "to", _checked_to),
        Patch(torch.Tensor, "cuda", _checked_cuda),
        Patch(torch.Tensor, "copy_", _checked_copy_),
        Patch(warnings, "showwarning", _route_warning),
    ]
    for patch in patches:
        patch.apply()
    _state["patches"] = patches
    # Every sync warning must reach the hook, not only the first one per source line.
    warnings.filters.insert(0, _ALWAYS)  # type: ignore[attr-defined]
    warnings._filters_mutated()  # type: ignore[attr-defined]
    torch.cuda.set_sync_debug_mode("warn")


def _disarm() -> None:
    import torch

    torch.cuda.set_sync_debug_mode(_state["user_debug_mode"])
    for patch in reversed(_state.pop("patches")):
        patch.restore()
    for index, entry in enumerate(warnings.filters):
        if entry is _ALWAYS:
            del warnings.filters[index]  # type: ignore[attr-defined]
            warnings._filters_mutated()  # type: ignore[attr-defined]
            break  # else a catch_warnings block already dropped it


DEVICE_HOOKS = RefCounted(_arm, _disarm)
