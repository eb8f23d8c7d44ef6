"""Baselines: accept today's findings, report only new ones.

A finding is keyed by its file (relative to the project root), its enclosing function (``Class.method``),
its code and its statement's text with whitespace collapsed, so moving code up or down a file keeps
the key. Keys are counted: two identical statements need two entries.
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from syncllint.diagnostics import PARSE_ERROR_CODE, Diagnostic

VERSION = 1
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, order=True)
class BaselineKey:
    path: str
    scope: str
    code: str
    statement: str


class BaselineError(Exception):
    """An unreadable baseline file: one line, exit code 2."""


def relative_path(filename: str, root: str) -> str:
    path = Path(filename)
    try:
        return path.resolve().relative_to(Path(root).resolve()).as_posix()
    except (ValueError, OSError):
        return path.as_posix()


def _scopes(source: str) -> list[tuple[int, int, str]]:
    """``(first row, last row, qualified name)`` of every function and class, outer ones first."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found: list[tuple[int, int, str]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                found.append((child.lineno, child.end_lineno or child.lineno, name))
                walk(child, name + ".")
            else:
                walk(child, prefix)

    walk(tree, "")
    return found


def keys_for(diagnostics: Sequence[Diagnostic], source: str, root: str) -> list[BaselineKey]:
    lines = source.splitlines()
    scopes = _scopes(source)
    keys: list[BaselineKey] = []
    for d in diagnostics:
        first, last = d.statement_rows if d.statement_rows[0] else (d.start.row, d.end.row)
        text = _SPACE.sub(" ", " ".join(lines[first - 1 : last]).strip())
        inner = [name for lo, hi, name in scopes if lo <= d.start.row <= hi]
        keys.append(BaselineKey(relative_path(d.filename, root), inner[-1] if inner else "<module>", d.code, text))
    return keys


def load(path: Path) -> Counter[BaselineKey]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        entries = data["entries"]
        return Counter(
            {BaselineKey(e["path"], e["scope"], e["code"], e["statement"]): int(e.get("count", 1)) for e in entries}
        )
    except FileNotFoundError:
        raise BaselineError(f"{path}: baseline file not found") from None
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise BaselineError(f"{path}: not a syncllint baseline ({type(err).__name__}: {err})") from None


def write(path: Path, keys: Sequence[BaselineKey]) -> int:
    counts = Counter(k for k in keys if k.code != PARSE_ERROR_CODE)
    entries = [
        {"path": k.path, "scope": k.scope, "code": k.code, "statement": k.statement, "count": n}
        for k, n in sorted(counts.items())
    ]
    path.write_text(json.dumps({"version": VERSION, "entries": entries}, indent=2) + "\n", encoding="utf-8")
    return sum(counts.values())


def filter_new(
    diagnostics: Sequence[Diagnostic], keys: Sequence[BaselineKey], baseline: Counter[BaselineKey]
) -> tuple[list[Diagnostic], Counter[BaselineKey]]:
    """The findings the baseline does not cover, and what is left of the baseline (its stale entries)."""
    left = Counter(baseline)
    new: list[Diagnostic] = []
    for d, key in zip(diagnostics, keys):
        if left[key] > 0:
            left[key] -= 1
        else:
            new.append(d)
    return new, +left
