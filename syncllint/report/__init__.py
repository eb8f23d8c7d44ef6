"""Render diagnostics: concise, full, json (ruff's shapes) and statistics."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from syncllint.diagnostics import Diagnostic
from syncllint.report.json_format import render_json
from syncllint.report.text import render_concise, render_full, render_statistics

OUTPUT_FORMATS = ("concise", "full", "json")


def render(
    diagnostics: Sequence[Diagnostic],
    output_format: str,
    out: TextIO,
    *,
    color: bool,
    sources: dict[str, str],
    quiet: bool = False,
) -> None:
    if output_format == "json":
        render_json(diagnostics, out)
    elif output_format == "full":
        render_full(diagnostics, out, color=color, sources=sources, quiet=quiet)
    else:
        render_concise(diagnostics, out, color=color, quiet=quiet)


__all__ = ["OUTPUT_FORMATS", "render", "render_statistics"]
