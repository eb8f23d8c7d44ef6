"""``sync_check``: report every GPU<->CPU sync made on this thread / task while it is active."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from functools import cache
from types import TracebackType
from typing import Any, TypeVar

from syncllint.runtime.context import CURRENT_CHECK, MODES, ActiveCheck
from syncllint.runtime.events import SyncReport

F = TypeVar("F", bound=Callable[..., Any])
ENV_VAR = "SYNCLLINT_SYNC_CHECK"
REPORT_ENV_VAR = "SYNCLLINT_SYNC_REPORT"  # record mode appends one JSON line per event here


def env_mode() -> str | None:
    """``SYNCLLINT_SYNC_CHECK``: None when unset, "off", or a mode."""
    value = os.environ.get(ENV_VAR, "").strip().lower()
    if not value:
        return None
    if value not in (*MODES, "off"):
        raise ValueError(f"{ENV_VAR}={value!r}: expected off, warn, error or record")
    return value


@cache
def cuda_available() -> bool:
    import torch

    return bool(torch.cuda.is_available())


class sync_check:
    """Check for GPU<->CPU syncs on the current thread / asyncio task.

    ``with sync_check(mode="record") as report:`` then ``report.events``. As a decorator,
    ``@sync_check()`` (no mode) checks only when ``SYNCLLINT_SYNC_CHECK`` names a mode; an explicit
    mode always checks unless the variable is ``off``. ``emulate=None`` emulates CUDA on the CPU
    when no CUDA device is available.
    """

    def __init__(self, mode: str | None = None, emulate: bool | None = None) -> None:
        if callable(mode):
            raise TypeError("use @sync_check() with parentheses")
        if mode is not None and mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.mode = mode
        self.emulate = emulate
        self._active: list[tuple[Any, ...]] = []

    def __enter__(self) -> SyncReport:
        from_env = env_mode()
        mode = self.mode or (from_env if from_env not in (None, "off") else "error")
        return self._start(mode)

    def _start(self, mode: str) -> SyncReport:
        emulate = self.emulate if self.emulate is not None else not cuda_available()
        report = SyncReport(mode=mode, emulated=emulate)
        check = ActiveCheck(mode=mode, emulate=emulate, report=report)
        token = CURRENT_CHECK.set(check)
        try:
            if emulate:
                from syncllint.runtime.emulation import Emulation

                guard: Any = Emulation(check)
                guard.__enter__()
            else:
                from syncllint.runtime.cuda_hooks import DEVICE_HOOKS

                DEVICE_HOOKS.acquire()
                guard = DEVICE_HOOKS
        except BaseException:
            CURRENT_CHECK.reset(token)
            raise
        self._active.append((token, guard, report))
        return report

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        token, guard, report = self._active.pop()
        try:
            if hasattr(guard, "release"):
                guard.release()
            else:
                guard.__exit__(exc_type, exc, tb)
        finally:
            CURRENT_CHECK.reset(token)
            _write_report(report)

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            from_env = env_mode()
            if from_env == "off" or (self.mode is None and from_env is None):
                return fn(*args, **kwargs)
            self._start(self.mode or str(from_env))
            try:
                return fn(*args, **kwargs)
            finally:
                self.__exit__(None, None, None)

        return wrapper  # type: ignore[return-value]


def _write_report(report: SyncReport) -> None:
    """In record mode with ``SYNCLLINT_SYNC_REPORT`` set, append the events as JSON lines."""
    path = os.environ.get(REPORT_ENV_VAR)
    if not path or report.mode != "record" or not report.events:
        return
    import dataclasses
    import json

    with open(path, "a", encoding="utf-8") as out:
        out.writelines(json.dumps(dataclasses.asdict(event)) + "\n" for event in report.events)
