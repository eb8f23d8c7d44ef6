"""``--fix`` on Jupyter notebooks: fix the code cells, write back the same notebook.

The code cells are linted together, as ``lint_notebook`` does, and every edit is mapped back to
the cell it falls in and applied to that cell's own text. Only the ``source`` of changed cells is
replaced; outputs, metadata, other cells and key order are kept, and the JSON is written again
with the file's own indentation, ASCII escaping and final newline (nbformat's defaults when
unknown). A fix is taken whole or not at all; one touching a magic line (``%time``, ``!ls``),
or a notebook whose cells do not parse together, is left alone. The result must compile, else
the notebook is left unchanged and an error says why.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass
from typing import Any

from syncllint.config import Settings
from syncllint.diagnostics import PARSE_ERROR_CODE, Fix, Location
from syncllint.fixer import (
    MAX_ROUNDS,
    FixOutcome,
    _Offsets,
    _overlaps,
    invalid_reason,
    is_applicable,
)
from syncllint.notebook import code_cells, lint_notebook, neutralize_magics

_Span = tuple[int, int, str]  # start offset, end offset, new text: in one cell's own text


@dataclass(frozen=True)
class _Cell:
    number: int  # 1-based position among all cells, as in diagnostics
    text: str  # the cell's real source (magics and all)
    python: str  # magics blanked, ends with a newline: what is linted


def _cell(number: int, text: str) -> _Cell | None:
    python = neutralize_magics(text)
    if python is None:
        return None
    return _Cell(number, text, python if python.endswith("\n") else python + "\n")


def _cell_spans(fix: Fix, cells: list[_Cell], starts: list[int]) -> dict[int, list[_Span]] | None:
    """The fix's edits as spans per cell index; None when an edit crosses cells or touches a magic."""
    spans: dict[int, list[_Span]] = {}
    for edit in fix.edits:
        index = max(bisect_right(starts, edit.start.row) - 1, 0)
        cell = cells[index]
        offset = starts[index] - 1
        rows = cell.python.count("\n")
        start = Location(edit.start.row - offset, edit.start.column)
        end = Location(edit.end.row - offset, edit.end.column)
        if end.row > rows + 1 or (end.row == rows + 1 and end.column > 1):
            return None  # runs into the next cell
        real, linted = cell.text.splitlines(), cell.python.splitlines()
        for row in range(start.row, min(end.row, rows) + 1):
            if row <= len(real) and real[row - 1] != linted[row - 1]:
                return None  # a blanked magic line: its text is not what was linted
        offsets = _Offsets(cell.text)
        spans.setdefault(index, []).append((offsets(start), offsets(end), edit.content))
    return spans


def _fix_round(cells: list[_Cell], filename: str, settings: Settings, unsafe: bool) -> tuple[list[str], list[str]] | None:
    """One round over all cells: their new texts and the codes applied; None when nothing applies."""
    from syncllint.engine import lint_source

    result = lint_source("".join(c.python for c in cells), filename, settings)
    if any(d.code == PARSE_ERROR_CODE for d in result.diagnostics):
        return None  # cells that do not parse together: fixing blind is not worth the risk
    starts, row = [], 1
    for cell in cells:
        starts.append(row)
        row += cell.python.count("\n")
    taken: dict[int, dict[_Span, None]] = {}
    applied: list[str] = []
    fixes = [(d.code, d.fix) for d in result.diagnostics if d.fix is not None and is_applicable(d.fix, unsafe)]
    for code, fix in sorted(fixes, key=lambda cf: min((e.start, e.end) for e in cf[1].edits)):
        per_cell = _cell_spans(fix, cells, starts)
        if per_cell is None:
            continue
        new = {i: [s for s in spans if s not in taken.get(i, {})] for i, spans in per_cell.items()}
        clash = any(
            _overlaps(a[:2], b[:2])
            for i, spans in new.items()
            for k, a in enumerate(spans)
            for b in [*taken.get(i, {}), *spans[k + 1 :]]
        )
        if clash:
            continue
        for i, spans in new.items():
            taken.setdefault(i, {}).update(dict.fromkeys(spans))
        applied.append(code)
    if not applied:
        return None
    texts = [c.text for c in cells]
    for i, chosen in taken.items():
        for start, end, content in sorted(chosen, key=lambda s: (s[0], s[1]), reverse=True):
            texts[i] = texts[i][:start] + content + texts[i][end:]
    return texts, applied


def _dump_like(notebook: Any, original: str) -> str:
    """``notebook`` as JSON in the original's layout (indent, escaping, final newline)."""
    indent_match = re.match(r"\{\r?\n([ \t]+)\"", original)
    indent: str | None = indent_match.group(1) if indent_match else (None if original.lstrip().startswith("{\"") else " ")
    ascii_only = original.isascii() and "\\u" in original
    text = json.dumps(notebook, indent=indent, ensure_ascii=ascii_only)
    if "\r\n" in original:
        text = text.replace("\n", "\r\n")
    return text + ("\r\n" if original.endswith("\r\n") else "\n" if original.endswith("\n") else "")


def fix_notebook_text(text: str, filename: str, settings: Settings, *, unsafe: bool = False) -> FixOutcome:
    """Fix the code cells of the notebook JSON ``text``; a broken notebook comes back unchanged."""
    data = text.encode("utf-8")
    try:
        code_cells(data)  # validates the notebook (and its language) the way linting does
        notebook = json.loads(text)
    except (ValueError, TypeError):
        return FixOutcome(text, text, Counter(), lint_notebook(data, filename, settings).diagnostics)
    raw = notebook.get("cells", [])
    if not code_cells(data):
        return FixOutcome(text, text, Counter(), lint_notebook(data, filename, settings).diagnostics)
    cells = [
        c for n, cell in enumerate(raw, start=1)
        if isinstance(cell, dict) and cell.get("cell_type") == "code"
        for c in [_cell(n, _source_text(cell.get("source", "")))] if c is not None
    ]
    counts: Counter[str] = Counter()
    for _ in range(MAX_ROUNDS):
        step = _fix_round(cells, filename, settings, unsafe)
        if step is None:
            break
        texts, applied = step
        new_cells = [_cell(c.number, t) for c, t in zip(cells, texts, strict=True)]
        reason = None if all(new_cells) else "a fixed cell became a non-Python cell"
        joined = "".join(c.python for c in new_cells if c is not None)
        reason = reason or invalid_reason(joined, filename)
        if reason is not None:
            message = f"fixes of {', '.join(sorted(set(applied)))} made {filename} invalid ({reason}); it was left unchanged"
            return FixOutcome(text, text, Counter(), lint_notebook(data, filename, settings).diagnostics, message)
        counts.update(applied)
        cells = [c for c in new_cells if c is not None]
    if not counts:
        return FixOutcome(text, text, Counter(), lint_notebook(data, filename, settings).diagnostics)
    for cell in cells:
        entry = raw[cell.number - 1]
        if _source_text(entry.get("source", "")) != cell.text:
            entry["source"] = cell.text.splitlines(keepends=True) if isinstance(entry.get("source"), list) else cell.text
    fixed = _dump_like(notebook, text)
    return FixOutcome(text, fixed, counts, lint_notebook(fixed.encode("utf-8"), filename, settings).diagnostics)


def _source_text(source: object) -> str:
    return source if isinstance(source, str) else "".join(source) if isinstance(source, list) else ""
