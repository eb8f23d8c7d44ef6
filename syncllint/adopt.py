"""Adoption tools: mark every remaining finding so a big codebase can turn the linter on in one commit.

``--add-noqa`` appends ``# noqa: CODE`` to the statement's last line; ``--add-allow`` wraps the
statement in ``with gpu_sync_allowed():`` marked ``# TODO(syncllint): justify or remove`` (a finding
on a compound statement's header, ``if t.any():``, gets a ``# noqa`` instead: wrapping the header
would allow its whole body).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from syncllint.config import Settings
from syncllint.diagnostics import PARSE_ERROR_CODE, Diagnostic
from syncllint.fixes import import_edits

ADOPTION_COMMENT = "# TODO(syncllint): justify or remove"
_NOQA_CODES = re.compile(r"#\s*noqa\s*:\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*)", re.IGNORECASE)
_LINE = re.compile(r"[^\r\n]*(\r\n|\r|\n|$)")


def _lines(text: str) -> list[str]:
    return [m.group(0) for m in _LINE.finditer(text) if m.group(0)]


def add_noqa(text: str, diagnostics: Sequence[Diagnostic], rows_only: set[int] | None = None) -> str:
    """Append ``# noqa: CODE[, CODE]`` to each finding's statement's last row (merged with an existing one)."""
    wanted: dict[int, set[str]] = defaultdict(set)
    for d in diagnostics:
        if d.code == PARSE_ERROR_CODE:
            continue
        row = d.statement_rows[1] or d.start.row
        if rows_only is None or row in rows_only:
            wanted[row].add(d.code)
    if not wanted:
        return text
    lines = _lines(text)
    for row, codes in wanted.items():
        if not 0 < row <= len(lines):
            continue
        line = lines[row - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        existing = _NOQA_CODES.search(body)
        if existing:
            merged = sorted({*re.split(r"[\s,]+", existing.group("codes").strip()), *codes})
            body = body[: existing.start()] + "# noqa: " + ", ".join(merged) + body[existing.end():]
        else:
            body = body.rstrip() + "  # noqa: " + ", ".join(sorted(codes))
        lines[row - 1] = body + ending
    return "".join(lines)


def allow_context(settings: Settings) -> tuple[str, str]:
    """``(module, name)`` of the context manager ``--add-allow`` writes."""
    dotted = next((c for c in settings.allowed_contexts if "." in c), None)
    if dotted is not None:
        module, _, name = dotted.rpartition(".")
        return module, name
    if settings.preset == "vllm":
        return "vllm.utils.gpu_sync_debug", "gpu_sync_allowed"
    return "syncllint.runtime", "gpu_sync_allowed"


class _Wrapper(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, rows: set[int], name: str) -> None:
        super().__init__()
        self._rows = rows
        self._name = name
        self.wrapped: set[int] = set()

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement:
        span = self.get_metadata(PositionProvider, original_node)
        rows = set(range(span.start.line, span.end.line + 1)) & self._rows
        if not rows:
            return updated_node
        self.wrapped |= rows
        header = cst.TrailingWhitespace(whitespace=cst.SimpleWhitespace("  "), comment=cst.Comment(ADOPTION_COMMENT))
        return cst.With(
            items=[cst.WithItem(item=cst.Call(func=cst.Name(self._name)))],
            body=cst.IndentedBlock(body=[updated_node.with_changes(leading_lines=())], header=header),
            leading_lines=updated_node.leading_lines,
        )


def add_allow(text: str, diagnostics: Sequence[Diagnostic], settings: Settings) -> str:
    """Wrap each finding's simple statement in ``with gpu_sync_allowed():``; ``# noqa`` for the rest."""
    findings = [d for d in diagnostics if d.code != PARSE_ERROR_CODE]
    if not findings:
        return text
    module = cst.parse_module(text)
    module_name, name = allow_context(settings)
    simple_rows = _simple_statement_rows(module)
    rows = {d.start.row for d in findings if d.start.row in simple_rows}
    wrapper = _Wrapper(rows, name)
    wrapped = MetadataWrapper(module, unsafe_skip_copy=True).visit(wrapper) if rows else module
    rest = [d for d in findings if d.start.row not in wrapper.wrapped]
    out = wrapped.code
    if wrapper.wrapped:
        edits = import_edits(wrapped, ((module_name, name),))
        if edits:
            from syncllint.fixer import _Offsets

            offsets = _Offsets(out)
            edit = edits[0]
            at = offsets(edit.start)
            out = out[:at] + edit.content + out[at:]
    if rest:
        # Row numbers of the remaining findings moved; re-anchor them on the new text.
        out = _noqa_for_rest(text, out, rest)
    return out


def _simple_statement_rows(module: cst.Module) -> set[int]:
    """Rows that belong to a SimpleStatementLine (not a compound header, not a one-line suite)."""
    rows: set[int] = set()

    class _Collect(cst.CSTVisitor):
        METADATA_DEPENDENCIES = (PositionProvider,)

        def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
            span = self.get_metadata(PositionProvider, node)
            rows.update(range(span.start.line, span.end.line + 1))

    MetadataWrapper(module, unsafe_skip_copy=True).visit(_Collect())
    return rows


def _noqa_for_rest(before: str, after: str, rest: Sequence[Diagnostic]) -> str:
    """Add ``# noqa`` for findings that could not be wrapped, found again by their line's text."""
    old_lines = _lines(before)
    new_lines = _lines(after)
    targets: dict[int, set[str]] = defaultdict(set)
    for d in rest:
        row = d.statement_rows[1] or d.start.row
        if not 0 < row <= len(old_lines):
            continue
        old = old_lines[row - 1]
        matches = [i for i, line in enumerate(new_lines, 1) if line.strip() == old.strip()]
        if matches:
            targets[min(matches, key=lambda i: abs(i - row))].add(d.code)
    from syncllint.diagnostics import Location

    shim = [
        Diagnostic(code, "", "", "", Location(row, 1), Location(row, 1), rest[0].confidence, rest[0].severity,
                   statement_rows=(row, row))
        for row, codes in targets.items() for code in codes
    ]
    return add_noqa(after, shim)
