"""Human-readable output: ruff-like concise and full formats, and --statistics."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TextIO

from syncllint.diagnostics import Applicability, Diagnostic, Severity

_BOLD, _RED, _YELLOW, _CYAN, _DIM, _RESET = "\x1b[1m", "\x1b[31m", "\x1b[33m", "\x1b[36m", "\x1b[2m", "\x1b[0m"


def _paint(text: str, style: str, color: bool) -> str:
    return f"{style}{text}{_RESET}" if color else text


def _fix_marker(d: Diagnostic) -> str:
    return "[*] " if d.fix is not None and d.fix.applicability is Applicability.SAFE else ""


def _header(d: Diagnostic, color: bool) -> str:
    where = f"{_paint(d.filename, _BOLD, color)}{d.where[len(d.filename):]}:"
    style = _RED if d.severity is Severity.ERROR else _YELLOW if d.severity is Severity.WARNING else _CYAN
    code = _paint(d.code, _BOLD + style, color)
    detail = _paint(f"[{d.confidence.label}]", _DIM, color)
    return f"{where} {code} {_fix_marker(d)}{d.message} {detail}"


def summary(diagnostics: Sequence[Diagnostic]) -> str:
    if not diagnostics:
        return "All checks passed!"
    n = len(diagnostics)
    safe = sum(1 for d in diagnostics if d.fix is not None and d.fix.applicability is Applicability.SAFE)
    unsafe = sum(1 for d in diagnostics if d.fix is not None and d.fix.applicability is Applicability.UNSAFE)
    lines = [f"Found {n} finding{'s' if n != 1 else ''}."]
    if safe:
        lines.append(f"[*] {safe} fixable with the `--fix` option.")
    if unsafe:
        lines.append(f"{unsafe} hidden fix{'es' if unsafe != 1 else ''} can be enabled with the `--unsafe-fixes` option.")
    return "\n".join(lines)


def render_concise(diagnostics: Sequence[Diagnostic], out: TextIO, *, color: bool, quiet: bool) -> None:
    for d in diagnostics:
        out.write(_header(d, color) + "\n")
    if not quiet:
        out.write(summary(diagnostics) + "\n")


def render_full(
    diagnostics: Sequence[Diagnostic], out: TextIO, *, color: bool, sources: dict[str, str], quiet: bool
) -> None:
    for d in diagnostics:
        out.write(_header(d, color) + "\n")
        lines = sources.get(d.source_key, "").splitlines()
        if 0 < d.start.row <= len(lines):
            gutter = len(str(d.end.row))
            pad = " " * gutter
            out.write(f"{pad} |\n")
            last = min(d.end.row, len(lines), d.start.row + 4)
            for row in range(d.start.row, last + 1):
                out.write(f"{row:>{gutter}} | {lines[row - 1]}\n")
            line = lines[d.start.row - 1]
            end_col = d.end.column if d.end.row == d.start.row else len(line) + 1
            width = max(1, end_col - d.start.column)
            caret = " " * (d.start.column - 1) + "^" * width
            out.write(f"{pad} | {_paint(caret, _RED, color)} {_paint(d.code, _BOLD, color)}\n")
            out.write(f"{pad} |\n")
        out.write("\n")
    if not quiet:
        out.write(summary(diagnostics) + "\n")


def render_statistics(diagnostics: Sequence[Diagnostic], out: TextIO, *, as_json: bool = False) -> None:
    counts = Counter((d.code, d.name) for d in diagnostics)
    fixable = Counter(d.code for d in diagnostics if d.fix is not None and d.fix.applicability is Applicability.SAFE)
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0]))
    if as_json:
        import json

        json.dump(
            [{"code": c, "name": n, "count": k, "fixable": fixable[c] > 0} for (c, n), k in rows], out, indent=2
        )
        out.write("\n")
        return
    width = max((len(str(k)) for _, k in rows), default=1)
    for (code, name), count in rows:
        marker = "[*]" if fixable[code] else "[ ]"
        out.write(f"{count:>{width}}\t{code}\t{marker} {name}\n")
