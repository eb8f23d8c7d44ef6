"""Jupyter notebooks: lint the code cells of an ``.ipynb`` file as one program.

The code cells are joined in order (so ``import torch`` in the first cell informs the last),
IPython magics are blanked out line for line, and every location is mapped back to the cell it
came from: ``Diagnostic.cell`` is the cell's 1-based position in the notebook (markdown cells
count, as in an editor), rows are relative to the cell. When the joined program does not parse
(one broken cell), each cell is linted on its own so the others still get checked.
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from bisect import bisect_right
from dataclasses import dataclass, replace

from syncllint.config import Settings
from syncllint.diagnostics import PARSE_ERROR_CODE, Diagnostic, Edit, Fix, Location
from syncllint.results import FileResult, parse_error

NOTEBOOK_SUFFIX = ".ipynb"

# Cell magics whose body is still Python; any other (%%bash, %%html, ...) makes a cell non-Python.
_PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug", "memit", "mprun", "autoreload"})
# A line magic or shell escape, alone or assigned: ``%time f()``, ``!ls``, ``x = !ls``, ``%%time``.
_MAGIC_LINE = re.compile(r"^(?P<indent>[ \t]*)(?:[\w.,\[\]() \t*]+=[ \t]*)?(?:%|!)")
_HELP_LINE = re.compile(r"^[ \t]*(?:\?\??[\w.]+|[\w.]+\?\??)[ \t]*$")


@dataclass(frozen=True)
class CodeCell:
    number: int  # 1-based position among all cells
    source: str  # magics blanked, always ends with a newline


class NotebookError(ValueError):
    pass


def code_cells(data: bytes) -> tuple[CodeCell, ...]:
    """The Python code cells of a notebook; raise NotebookError for anything not a v4 notebook."""
    try:
        notebook = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise NotebookError(f"invalid notebook JSON: {err}") from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise NotebookError("not a Jupyter notebook (nbformat 4 with a `cells` list expected)")
    if not _is_python(notebook.get("metadata")):
        return ()
    cells: list[CodeCell] = []
    for number, cell in enumerate(notebook["cells"], start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        text = _cell_text(cell.get("source", ""))
        if text is None:
            raise NotebookError(f"cell {number}: `source` must be a string or a list of strings")
        python = neutralize_magics(text)
        if python is not None:
            cells.append(CodeCell(number, python if python.endswith("\n") else python + "\n"))
    return tuple(cells)


def _is_python(metadata: object) -> bool:
    if not isinstance(metadata, dict):
        return True
    for key, field in (("language_info", "name"), ("kernelspec", "language")):
        section = metadata.get(key)
        if isinstance(section, dict) and isinstance(section.get(field), str):
            return bool(section[field].lower() == "python")
    return True


def _cell_text(source: object) -> str | None:
    if isinstance(source, str):
        return source
    if isinstance(source, list) and all(isinstance(part, str) for part in source):
        return "".join(source)
    return None


def neutralize_magics(text: str) -> str | None:
    """The cell with each magic line replaced by ``pass`` (same rows); None for a non-Python cell."""
    lines = text.splitlines(keepends=True)
    if lines and lines[0].startswith("%%"):
        name = lines[0][2:].split(maxsplit=1)[0] if lines[0][2:].strip() else ""
        if name not in _PYTHON_CELL_MAGICS:
            return None
        lines[0] = "pass\n"
    starts = _logical_line_rows(text)
    for index, line in enumerate(lines):
        if starts is not None and index + 1 not in starts:
            continue  # inside brackets or a string: `% 5` there is an operator, not a magic
        magic = _MAGIC_LINE.match(line)
        if magic is not None or _HELP_LINE.match(line):
            indent = line[: len(line) - len(line.lstrip(" \t"))]
            lines[index] = f"{indent}pass\n"
    return "".join(lines)


def _logical_line_rows(text: str) -> set[int] | None:
    """Rows on which a logical line starts; None when the cell cannot be tokenized."""
    rows: set[int] = set()
    at_start = True
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.NEWLINE, tokenize.NL):
                at_start = token.type == tokenize.NEWLINE or at_start
                continue
            if token.type in (tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT):
                continue
            if at_start:
                rows.add(token.start[0])
                at_start = False
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    return rows


def lint_notebook(data: bytes, filename: str, settings: Settings) -> FileResult:
    from syncllint.engine import lint_source  # libcst: only when a notebook is linted

    try:
        cells = code_cells(data)
    except NotebookError as err:
        return FileResult(filename, (parse_error(filename, str(err)),))
    if not cells:
        return FileResult(filename, ())
    joined = _lint_joined(cells, filename, settings)
    if joined is not None:
        return FileResult(filename, joined)
    # A broken cell: report it on its own, and lint the other cells together without it.
    broken: list[Diagnostic] = []
    good: list[CodeCell] = []
    for cell in cells:
        errors = [d for d in lint_source(cell.source, filename, settings).diagnostics if d.code == PARSE_ERROR_CODE]
        broken.extend(replace(d, cell=cell.number) for d in errors)
        if not errors:
            good.append(cell)
    rest = _lint_joined(tuple(good), filename, settings) if good else ()
    if rest is None:  # cells that parse alone but not together: lint each alone
        rest = tuple(
            replace(d, cell=cell.number) for cell in good for d in lint_source(cell.source, filename, settings).diagnostics
        )
    return FileResult(filename, tuple(sorted((*broken, *rest), key=lambda d: d.sort_key)))


def _lint_joined(cells: tuple[CodeCell, ...], filename: str, settings: Settings) -> tuple[Diagnostic, ...] | None:
    """Findings of the cells linted as one program, mapped to cells; None when it does not parse."""
    from syncllint.engine import lint_source  # libcst: only when a notebook is linted

    result = lint_source("".join(cell.source for cell in cells), filename, settings)
    if any(d.code == PARSE_ERROR_CODE for d in result.diagnostics):
        return None
    starts = _start_rows(cells)
    return tuple(_to_cell(d, cells, starts) for d in result.diagnostics)


def _start_rows(cells: tuple[CodeCell, ...]) -> list[int]:
    starts, row = [], 1
    for cell in cells:
        starts.append(row)
        row += cell.source.count("\n")
    return starts


def _to_cell(d: Diagnostic, cells: tuple[CodeCell, ...], starts: list[int]) -> Diagnostic:
    index = max(bisect_right(starts, d.start.row) - 1, 0)
    offset = starts[index] - 1

    def move(loc: Location) -> Location:
        return Location(max(loc.row - offset, 1), loc.column)

    fix = d.fix
    if fix is not None:
        fix = Fix(fix.applicability, fix.message, tuple(Edit(e.content, move(e.start), move(e.end)) for e in fix.edits))
    first, last = d.statement_rows
    return replace(
        d,
        cell=cells[index].number,
        start=move(d.start),
        end=move(d.end),
        fix=fix,
        statement_rows=(max(first - offset, 0), max(last - offset, 0)),
    )


def cell_sources(data: bytes) -> dict[int, str]:
    """Cell number -> the cell's (neutralized) text, for the ``full`` output format."""
    try:
        return {cell.number: cell.source for cell in code_cells(data)}
    except NotebookError:
        return {}
