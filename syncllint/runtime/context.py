"""Per-thread / per-task state of the checker (ContextVars) and the one place events are reported."""

from __future__ import annotations

import warnings
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import FrameType

from syncllint.runtime.events import (
    SyncCheckError,
    SyncEvent,
    SyncReport,
    SyncWarning,
    rule_code_for,
    source_line,
    user_site,
)

MODES = ("error", "warn", "record")


@dataclass
class ActiveCheck:
    mode: str
    emulate: bool
    report: SyncReport
    # Tensors returned by a non_blocking D2H copy that no wait has completed yet (emulation only).
    in_flight: dict[int, object] = field(default_factory=dict)


@dataclass(frozen=True)
class AllowedScope:
    reason: str | None


# The innermost check of this thread / task, and the gpu_sync_allowed scopes entered in it.
CURRENT_CHECK: ContextVar[ActiveCheck | None] = ContextVar("syncllint_check", default=None)
ALLOWED: ContextVar[tuple[AllowedScope | None, ...]] = ContextVar("syncllint_allowed", default=())
# Set while syncllint itself does work that must not be reported (staging copies, emulated moves).
INTERNAL: ContextVar[bool] = ContextVar("syncllint_internal", default=False)


def current_check() -> ActiveCheck | None:
    if INTERNAL.get():
        return None
    return CURRENT_CHECK.get()


def is_allowed() -> bool:
    return any(scope is not None for scope in ALLOWED.get())


def _compiling() -> bool:
    try:
        import torch

        return bool(torch.compiler.is_compiling())
    except (ImportError, AttributeError):
        return False


def report_sync(kind: str, op: str, *, emulated: bool, frame: FrameType | None = None) -> SyncEvent | None:
    """Record a sync on the current thread/task; raise or warn as its check's mode says."""
    __tracebackhide__ = True  # pytest: show the user's frame, not ours
    check = current_check()
    if check is None:
        return None
    import sys

    site = user_site(frame if frame is not None else sys._getframe(1))
    allowed = site.in_compile or is_allowed() or _compiling()
    event = SyncEvent(
        kind=kind,
        op=op,
        filename=site.filename,
        lineno=site.lineno,
        allowed=allowed,
        rule_code=rule_code_for(kind, op),
        emulated=emulated,
        source_line=source_line(site.filename, site.lineno),
    )
    check.report.events.append(event)
    if not allowed:
        if check.mode == "error":
            raise SyncCheckError(event)
        if check.mode == "warn":
            warnings.warn_explicit(event.describe(), SyncWarning, site.filename, site.lineno)
    return event
