"""The progress bar: silent off a terminal and with -q; shown on a terminal once a run is slow."""

from __future__ import annotations

import io

from syncllint.progress import TerminalProgress, progress_for


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_silent_when_not_a_terminal_or_quiet() -> None:
    assert progress_for(io.StringIO(), quiet=False) is None
    assert progress_for(_Tty(), quiet=True) is None
    assert isinstance(progress_for(_Tty(), quiet=False), TerminalProgress)


def test_fast_runs_draw_nothing() -> None:
    out = _Tty()
    bar = TerminalProgress(out, show_after_s=60)
    bar.start(3, 300)
    bar.advance(2, 200)
    bar.advance(1, 100)
    bar.stop()
    assert out.getvalue() == ""


def test_slow_runs_draw_a_bar() -> None:
    out = _Tty()
    bar = TerminalProgress(out, show_after_s=0)
    bar.start(3, 300)
    bar.advance(1, 100)
    bar.stop()
    assert "checking" in out.getvalue()
