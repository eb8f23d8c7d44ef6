"""Render diagnostics: concise, full, grouped, json, sarif, github, junit, and statistics."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from syncllint.diagnostics import Diagnostic
from syncllint.report.formats import OUTPUT_FORMATS
from syncllint.report.github import render_github
from syncllint.report.grouped import render_grouped
from syncllint.report.json_format import render_json
from syncllint.report.junit import render_junit
from syncllint.report.sarif import render_sarif
from syncllint.report.text import render_concise, render_full, render_statistics


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
    elif output_format == "sarif":
        render_sarif(diagnostics, out)
    elif output_format == "github":
        render_github(diagnostics, out)
    elif output_format == "junit":
        render_junit(diagnostics, out)
    elif output_format == "grouped":
        render_grouped(diagnostics, out, color=color, quiet=quiet)
    elif output_format == "full":
        render_full(hot_first(diagnostics), out, color=color, sources=sources, quiet=quiet)
    else:
        render_concise(hot_first(diagnostics), out, color=color, quiet=quiet)


def hot_first(diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    """For people reading a terminal: syncs on hot paths (loops, forward, step, ...) come first;
    machine formats keep file order."""
    return sorted(diagnostics, key=lambda d: not d.hot_path)


__all__ = ["OUTPUT_FORMATS", "render", "render_statistics"]
