"""Running one example snippet: fresh namespace, fixed seed, source registered for tracebacks."""

from __future__ import annotations

import contextlib
import io
import linecache
import time
from dataclasses import dataclass
from typing import Any

SEED = 0
SLEEP_CYCLES = int(2e8)  # ~100 ms of torch.cuda._sleep on an H200 (1.98 GHz)
ORACLE_THRESHOLD_MS = 50.0  # the host waited for at least half of the queued sleep: a sync


@dataclass(frozen=True)
class Snippet:
    rule: str
    kind: str  # flag / ok / fixed
    line: int  # opening fence line in the page
    code: str
    raises: str = ""  # ```python flag raises=TypeError: the example is a bug on a GPU, it must raise

    @property
    def filename(self) -> str:
        return f"<rules/{self.rule}.md:{self.line}>"

    @property
    def label(self) -> str:
        return f"{self.kind}@{self.line}"


def run(snippet: Snippet) -> dict[str, Any]:
    """Execute the snippet in a fresh namespace after seeding every generator; the namespace."""
    import torch

    linecache.cache[snippet.filename] = (len(snippet.code), None, snippet.code.splitlines(True), snippet.filename)
    torch.manual_seed(SEED)
    namespace: dict[str, Any] = {"__name__": "__syncllint_example__"}
    # Examples may print or log tensors (that is what SYNC503 is about): keep their output out of the report.
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        exec(compile(snippet.code, snippet.filename, "exec"), namespace)  # noqa: S102 - our own rule pages
    return namespace


def detector(snippet: Snippet, emulate: bool) -> tuple[dict[str, Any], list[Any]]:
    """Run under ``sync_check(mode="record")``: (namespace, events)."""
    from syncllint.runtime import sync_check

    with sync_check(mode="record", emulate=emulate) as report:
        namespace = run(snippet)
    return namespace, list(report.events)


def raised(snippet: Snippet, emulate: bool) -> tuple[str, list[Any]]:
    """Run under the detector, catching what it raises: (exception type name or "", events)."""
    from syncllint.runtime import sync_check

    name = ""
    with sync_check(mode="record", emulate=emulate) as report:
        try:
            run(snippet)
        except Exception as err:  # noqa: BLE001 - which exception is the claim
            name = type(err).__name__
    return name, list(report.events)


def run_unchecked(snippet: Snippet, emulate: bool) -> dict[str, Any]:
    """Run for its results only (under emulation the device tensors still need the modes)."""
    if not emulate:
        return run(snippet)
    return detector(snippet, emulate=True)[0]


def oracle_ms(snippet: Snippet, repeats: int = 2) -> float:
    """Host time of the snippet while a ~100 ms sleep kernel is queued (best of ``repeats``)."""
    import torch

    best = float("inf")
    for _ in range(repeats):
        torch.cuda.synchronize()
        torch.cuda._sleep(SLEEP_CYCLES)  # type: ignore[no-untyped-call]
        start = time.perf_counter()
        run(snippet)
        best = min(best, (time.perf_counter() - start) * 1e3)
        torch.cuda.synchronize()
    return best


def sleep_kernel_ms() -> float:
    """How long the sleep kernel really takes here (the oracle's scale)."""
    import torch

    torch.cuda.synchronize()
    start = time.perf_counter()
    torch.cuda._sleep(SLEEP_CYCLES)  # type: ignore[no-untyped-call]
    torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1e3
