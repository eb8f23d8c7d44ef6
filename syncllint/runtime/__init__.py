"""Runtime checks for GPU<->CPU syncs (imports torch lazily; torch >= 2.1).

- ``sync_check(mode="error"|"warn"|"record", emulate=None)``: context manager and decorator.
- ``gpu_sync_allowed(first_only=False, reason=None)``: mark accepted syncs.
- ``async_tensor_h2d(data, device, dtype=None)``: pinned staging + one non_blocking upload.
"""

from syncllint.runtime.allowed import gpu_sync_allowed, reset_first_only
from syncllint.runtime.check import ENV_VAR, REPORT_ENV_VAR, sync_check
from syncllint.runtime.events import (
    KINDS,
    SyncCheckError,
    SyncEvent,
    SyncReport,
    SyncWarning,
)
from syncllint.runtime.h2d import async_tensor_h2d

__all__ = [
    "ENV_VAR",
    "KINDS",
    "REPORT_ENV_VAR",
    "SyncCheckError",
    "SyncEvent",
    "SyncReport",
    "SyncWarning",
    "async_tensor_h2d",
    "gpu_sync_allowed",
    "reset_first_only",
    "sync_check",
]
