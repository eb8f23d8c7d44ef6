"""A progress bar for long runs: rich, on a terminal only, and only once a run passes ~2 s."""

from __future__ import annotations

import time
from typing import Any, TextIO

SHOW_AFTER_S = 2.0


class TerminalProgress:
    """Implements ``runner.Progress``. Imports rich only when the bar is actually shown."""

    def __init__(self, stream: TextIO, show_after_s: float = SHOW_AFTER_S) -> None:
        self._stream = stream
        self._show_after = show_after_s
        self._began = 0.0
        self._files = self._bytes = self._done_files = self._done_bytes = 0
        self._bar: Any = None
        self._task: Any = None

    def start(self, files: int, total_bytes: int) -> None:
        self._began = time.monotonic()
        self._files, self._bytes = files, total_bytes

    def advance(self, files: int, done_bytes: int) -> None:
        self._done_files += files
        self._done_bytes += done_bytes
        if self._bar is None:
            if time.monotonic() - self._began < self._show_after or self._done_files >= self._files:
                return
            self._show()
        self._bar.update(self._task, completed=self._done_bytes, files=self._done_files)

    def _show(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._bar = Progress(
            TextColumn("checking"),
            BarColumn(),
            TextColumn("{task.fields[files]}/{task.fields[total_files]} files"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(file=self._stream),
            transient=True,
        )
        self._task = self._bar.add_task("check", total=max(self._bytes, 1), files=0, total_files=self._files)
        self._bar.start()

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def progress_for(stream: TextIO, quiet: bool) -> TerminalProgress | None:
    """A bar on an interactive terminal; None (silence) for pipes, files, CI logs and ``-q``."""
    if quiet or not stream.isatty():
        return None
    return TerminalProgress(stream)
