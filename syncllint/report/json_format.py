"""JSON output in ruff's shape, plus ``name``, ``confidence``, ``severity`` and ``hot_path``."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any, TextIO

from syncllint.catalogue import page_url
from syncllint.diagnostics import Diagnostic, Fix, Location


def _location(loc: Location) -> dict[str, int]:
    return {"column": loc.column, "row": loc.row}


def fix_to_json(fix: Fix | None) -> dict[str, Any] | None:
    if fix is None:
        return None
    return {
        "applicability": fix.applicability.value,
        "message": fix.message,
        "edits": [
            {"content": e.content, "location": _location(e.start), "end_location": _location(e.end)} for e in fix.edits
        ],
    }


def diagnostic_to_json(d: Diagnostic) -> dict[str, Any]:
    return {
        "cell": d.cell,
        "code": d.code,
        "name": d.name,
        "message": d.message,
        "filename": os.path.abspath(d.filename) if d.filename != "-" else d.filename,
        "location": _location(d.start),
        "end_location": _location(d.end),
        "noqa_row": d.statement_rows[1] or d.start.row,
        "fix": fix_to_json(d.fix),
        "url": page_url(d.code),
        "confidence": d.confidence.label,
        "severity": d.severity.value,
        "hot_path": d.hot_path,
    }


def render_json(diagnostics: Sequence[Diagnostic], out: TextIO) -> None:
    json.dump([diagnostic_to_json(d) for d in diagnostics], out, indent=2)
    out.write("\n")
