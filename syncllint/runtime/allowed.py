"""``gpu_sync_allowed``: mark a sync as accepted, on this thread / asyncio task only."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from types import TracebackType
from typing import TypeVar

from syncllint.runtime.context import ALLOWED, AllowedScope, _compiling, current_check

F = TypeVar("F", bound=Callable[..., object])

# Call sites whose first checked entry was allowed (``first_only``), process-wide as in vLLM:
# a hot loop allows its first step (warm-up, lazy init) and reports every later one.
_FIRST_SEEN: set[tuple[str, int]] = set()


def reset_first_only() -> None:
    """Forget which ``first_only`` call sites were entered (for tests)."""
    _FIRST_SEEN.clear()


class gpu_sync_allowed:
    """Context manager and decorator: syncs inside are recorded as ``allowed`` and not raised.

    A no-op while nothing is being checked on this thread/task and while torch.compile traces.
    ``first_only=True`` allows only the first checked entry per call site (filename, line).
    """

    __slots__ = ("first_only", "reason")

    def __init__(self, first_only: bool = False, reason: str | None = None) -> None:
        if callable(first_only):
            raise TypeError("use @gpu_sync_allowed() with parentheses")
        self.first_only = first_only
        self.reason = reason

    def _scope(self, site: tuple[str, int]) -> AllowedScope | None:
        if current_check() is None or _compiling():
            return None
        if self.first_only:
            if site in _FIRST_SEEN:
                return None
            _FIRST_SEEN.add(site)
        return AllowedScope(self.reason)

    def _enter(self, site: tuple[str, int]) -> None:
        ALLOWED.set((*ALLOWED.get(), self._scope(site)))

    def __enter__(self) -> None:
        caller = sys._getframe(1)
        self._enter((caller.f_code.co_filename, caller.f_lineno))

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        ALLOWED.set(ALLOWED.get()[:-1])

    def __call__(self, fn: F) -> F:
        site = (fn.__code__.co_filename, fn.__code__.co_firstlineno) if hasattr(fn, "__code__") else (repr(fn), 0)

        @functools.wraps(fn)
        def wrapper(*args: object, **kwargs: object) -> object:
            self._enter(site)
            try:
                return fn(*args, **kwargs)
            finally:
                ALLOWED.set(ALLOWED.get()[:-1])

        return wrapper  # type: ignore[return-value]
