"""Reference-counted global state: armed by the first check, restored by the last one to end."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

_MISSING = object()


@dataclass
class Patch:
    """``setattr(owner, name, replacement)`` that can be undone exactly (own attribute or inherited)."""

    owner: object
    name: str
    replacement: object
    _saved: object = _MISSING

    def apply(self) -> None:
        self._saved = vars(self.owner).get(self.name, _MISSING) if hasattr(self.owner, "__dict__") else _MISSING
        setattr(self.owner, self.name, self.replacement)

    def restore(self) -> None:
        if self._saved is _MISSING:
            try:
                delattr(self.owner, self.name)
            except AttributeError:
                pass
        else:
            setattr(self.owner, self.name, self._saved)


class RefCounted:
    """Runs ``arm`` when the count goes 0 -> 1 and ``disarm`` when it goes back to 0."""

    def __init__(self, arm: Callable[[], None], disarm: Callable[[], None]) -> None:
        self._arm, self._disarm = arm, disarm
        self._count = 0
        self._lock = threading.Lock()

    @property
    def count(self) -> int:
        return self._count

    def acquire(self) -> None:
        with self._lock:
            if self._count == 0:
                self._arm()
            self._count += 1

    def release(self) -> None:
        with self._lock:
            self._count -= 1
            if self._count == 0:
                self._disarm()
