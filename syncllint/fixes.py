"""Turn a rule's FixProposal (node -> replacement node) into text edits, imports included."""

from __future__ import annotations

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst._position import CodeRange

from syncllint.analysis.imports import ImportMap
from syncllint.checks.base import FixProposal
from syncllint.config import Settings
from syncllint.diagnostics import Edit, Fix, Location


def build_fix(
    module: cst.Module,
    proposal: FixProposal,
    ranges: dict[cst.CSTNode, CodeRange],
    settings: Settings,
    source: str | None = None,
) -> Fix | None:
    span = ranges.get(proposal.target)
    if span is None:
        return None
    content = _code_at(module, proposal.replacement, _line_indent(source, span.start.line) if source else "")
    edit = Edit(
        content=content,
        start=Location(span.start.line, span.start.column + 1),
        end=Location(span.end.line, span.end.column + 1),
    )
    return Fix(proposal.applicability, proposal.message, (edit, *import_edits(module, proposal.imports)))


def _line_indent(source: str, row: int) -> str:
    """The leading whitespace of 1-based ``row``."""
    start = 0
    for _ in range(row - 1):
        start = source.find("\n", start) + 1
        if start == 0:
            return ""
    line = source[start : source.find("\n", start) if source.find("\n", start) >= 0 else len(source)]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _code_at(module: cst.Module, node: cst.CSTNode, indent: str) -> str:
    """``node``'s code as it would be written at ``indent``: continuation lines inside brackets that
    libcst indents relative to the block (``ParenthesizedWhitespace(indent=True)``) keep their place."""
    state = CodegenState(default_indent=module.default_indent, default_newline=module.default_newline)
    if indent:
        state.indent_tokens = [indent]
    node._codegen(state)
    return "".join(state.tokens)


def import_statement(module_name: str, name: str | None) -> str:
    return f"import {module_name}" if name is None else f"from {module_name} import {name}"


def _is_bound(imports: ImportMap, module_name: str, name: str | None) -> bool:
    local = module_name.split(".", 1)[0] if name is None else name
    wanted = local if name is None else f"{module_name}.{name}"
    return imports.is_imported(local) and imports.qualify(cst.Name(local)) == wanted


def _top_level_imports(module: cst.Module) -> ImportMap:
    imports = ImportMap()
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    imports.record(small)
    return imports


def _is_import_line(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body
    )


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def import_anchor(module: cst.Module) -> int:
    """How many leading statements the new imports go after: the docstring and the first import block."""
    anchor = 0
    for i, statement in enumerate(module.body):
        if i == 0 and _is_docstring(statement):
            anchor = 1
        elif _is_import_line(statement):
            anchor = i + 1
        else:
            break
    return anchor


def import_edits(module: cst.Module, needed: tuple[tuple[str, str | None], ...]) -> tuple[Edit, ...]:
    """One insertion after the module's leading imports for the imports not already bound at top level."""
    if not needed:
        return ()
    bound = _top_level_imports(module)
    lines = [import_statement(m, n) for m, n in dict.fromkeys(needed) if not _is_bound(bound, m, n)]
    if not lines:
        return ()
    newline = module.default_newline
    prefix = module.with_changes(body=module.body[: import_anchor(module)], footer=()).code
    row = prefix.count("\n") + 1 if "\n" in newline else prefix.count(newline) + 1
    text = "".join(line + newline for line in lines)
    if prefix and not prefix.endswith(("\n", "\r")):
        last = prefix.splitlines()[-1] if prefix.splitlines() else ""
        return (Edit(newline + text.rstrip("\r\n"), Location(row, len(last) + 1), Location(row, len(last) + 1)),)
    return (Edit(text, Location(row, 1), Location(row, 1)),)
