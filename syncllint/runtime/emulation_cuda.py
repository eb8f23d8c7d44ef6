"""``torch.cuda`` on a host while an emulated check runs: synchronize, streams and events as fakes.

Explicit waits are reported (and complete every in-flight copy); everything else answers as an
idle CUDA device would. Threads without an emulated check get the real functions.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any

import torch

from syncllint.runtime.context import ActiveCheck, current_check, report_sync
from syncllint.runtime.emulation_tensors import CUDA
from syncllint.runtime.events import EXPLICIT_WAIT, RACE
from syncllint.runtime.patching import Patch, RefCounted


def emulating() -> ActiveCheck | None:
    check = current_check()
    return check if check is not None and check.emulate else None


def report(kind: str, op: str) -> None:
    check = emulating()
    if check is None:
        return
    report_sync(kind, op, emulated=True, frame=sys._getframe(1))
    if kind != RACE:
        check.in_flight.clear()  # the host waited: every queued copy is done



# ---- torch.cuda on a host: streams, events and synchronize as fakes --------------------------


def _explicit_wait(op: str) -> None:
    report(EXPLICIT_WAIT, op)


class FakeEvent:
    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> None:
        self.enable_timing = enable_timing

    def record(self, stream: object = None) -> None:
        return None

    def wait(self, stream: object = None) -> None:
        return None  # a device-side wait: the host does not block

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        _explicit_wait("Event.synchronize")

    def elapsed_time(self, end_event: object) -> float:
        return 0.0


class FakeStream(torch.Stream):
    """A host stream that answers as CUDA's current stream (a torch.Stream, so record_stream takes it)."""

    device = CUDA
    cuda_stream = 0

    def __new__(cls, *args: object, **kwargs: object) -> FakeStream:
        return super().__new__(cls, device="cpu")

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def synchronize(self) -> None:
        _explicit_wait("Stream.synchronize")

    def query(self) -> bool:
        return True

    def wait_event(self, event: object) -> None:
        return None

    def wait_stream(self, stream: object) -> None:
        return None

    def record_event(self, event: Any = None) -> Any:
        return event if event is not None else FakeEvent()


_originals: dict[str, Any] = {}


def _switch(name: str, fake: Any) -> Any:
    def chosen(*args: Any, **kwargs: Any) -> Any:
        if emulating() is not None:
            return fake(*args, **kwargs)
        return _originals[name](*args, **kwargs)

    chosen.__name__ = name
    return chosen


_FAKES: dict[str, Any] = {
    "synchronize": lambda *a, **k: _explicit_wait("torch.cuda.synchronize"),
    "current_stream": lambda *a, **k: FakeStream(),
    "default_stream": lambda *a, **k: FakeStream(),
    "Event": FakeEvent,
    "Stream": FakeStream,
    "stream": lambda *a, **k: contextlib.nullcontext(),
}
_patches: list[Patch] = []


def _arm() -> None:
    # module.cuda() / .to("cuda") must give device Parameters, not CPU ones whose .data changed.
    _originals["overwrite_params"] = torch.__future__.get_overwrite_module_params_on_conversion()
    torch.__future__.set_overwrite_module_params_on_conversion(True)
    for name, fake in _FAKES.items():
        _originals[name] = getattr(torch.cuda, name)
        _patches.append(Patch(torch.cuda, name, _switch(name, fake)))
    for patch in _patches:
        patch.apply()


def _disarm() -> None:
    while _patches:
        _patches.pop().restore()
    torch.__future__.set_overwrite_module_params_on_conversion(_originals.pop("overwrite_params"))


CUDA_FAKES = RefCounted(_arm, _disarm)
