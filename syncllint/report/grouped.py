"""ruff's ``grouped`` format: findings under a header per file, then the summary."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby
from typing import TextIO

from syncllint.diagnostics import Applicability, Diagnostic
from syncllint.report.text import summary

_BOLD, _RESET = "\x1b[1m", "\x1b[0m"


def render_grouped(diagnostics: Sequence[Diagnostic], out: TextIO, *, color: bool, quiet: bool) -> None:
    for filename, group in groupby(diagnostics, key=lambda d: d.filename):
        findings = list(group)
        out.write((f"{_BOLD}{filename}{_RESET}" if color else filename) + ":\n")
        places = [_place(d) for d in findings]
        row_width = max(len(p[0]) for p in places)
        column_width = max(len(p[1]) for p in places)
        for d, (row, column) in zip(findings, places):
            fixable = "[*] " if d.fix is not None and d.fix.applicability is Applicability.SAFE else ""
            out.write(
                f"  {row:>{row_width}}:{column:<{column_width}} {d.code} {fixable}{d.message} [{d.confidence.label}]\n"
            )
        out.write("\n")
    if not quiet:
        out.write(summary(diagnostics) + "\n")


def _place(d: Diagnostic) -> tuple[str, str]:
    row = f"cell {d.cell}:{d.start.row}" if d.cell is not None else str(d.start.row)
    return row, str(d.start.column)
