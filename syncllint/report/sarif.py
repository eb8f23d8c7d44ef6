"""SARIF 2.1.0 (what GitHub code scanning uploads): every rule with its help page, one result per finding."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

from syncllint import __version__
from syncllint.catalogue import load_catalogue, page_url
from syncllint.checks import all_rules
from syncllint.diagnostics import (
    PARSE_ERROR_CODE,
    PARSE_ERROR_NAME,
    Diagnostic,
    Severity,
)

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
PROJECT_URL = "https://github.com/syncllint/syncllint"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
_PARSE_ERROR_HELP = (
    "The file cannot be parsed (a syntax error, an undecodable or unreadable file, or nesting deeper "
    "than CPython allows), so it was not checked for synchronizations. The other files are still linted."
)


def help_uri(code: str) -> str:
    return f"{PROJECT_URL}/blob/main/{page_url(code)}"


def rule_descriptors() -> list[dict[str, Any]]:
    """``reportingDescriptor`` objects: SYNC001 first, then every rule with its catalogue page."""
    pages = load_catalogue()
    descriptors: list[dict[str, Any]] = [
        {
            "id": PARSE_ERROR_CODE,
            "name": PARSE_ERROR_NAME,
            "shortDescription": {"text": "a file that cannot be parsed"},
            "fullDescription": {"text": _PARSE_ERROR_HELP},
            "help": {"text": _PARSE_ERROR_HELP, "markdown": _PARSE_ERROR_HELP},
            "defaultConfiguration": {"level": "error"},
        }
    ]
    for rule in all_rules():
        page = pages.get(rule.code)
        full = page.section("What it does") if page else rule.summary
        help_text = page.text if page else rule.summary
        descriptors.append(
            {
                "id": rule.code,
                "name": rule.name,
                "shortDescription": {"text": rule.summary},
                "fullDescription": {"text": full or rule.summary},
                "help": {"text": help_text, "markdown": help_text},
                "helpUri": help_uri(rule.code),
                "defaultConfiguration": {"level": "note" if rule.fixed_severity is Severity.INFO else "warning", "enabled": rule.enabled_by_default},
                "properties": {"tags": [rule.family]},
            }
        )
    return descriptors


def artifact_uri(filename: str) -> str:
    """Relative to the working directory when below it (GitHub resolves those against the checkout)."""
    if filename == "-":
        return "stdin"
    path = Path(os.path.abspath(filename))
    try:
        return quote(path.relative_to(Path.cwd()).as_posix())
    except ValueError:
        return path.as_uri()


def _result(d: Diagnostic, index: dict[str, int]) -> dict[str, Any]:
    region = {"startLine": d.start.row, "startColumn": d.start.column, "endLine": d.end.row, "endColumn": d.end.column}
    properties: dict[str, Any] = {"name": d.name, "confidence": d.confidence.label, "hotPath": d.hot_path}
    if d.cell is not None:
        properties["cell"] = d.cell  # rows and columns are then relative to that notebook cell
    result: dict[str, Any] = {
        "ruleId": d.code,
        "level": _LEVEL[d.severity],
        "message": {"text": d.message},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": artifact_uri(d.filename)}, "region": region}}],
        "properties": properties,
    }
    if d.code in index:
        result["ruleIndex"] = index[d.code]
    return result


def sarif_log(diagnostics: Sequence[Diagnostic]) -> dict[str, Any]:
    rules = rule_descriptors()
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    driver = {
        "name": "syncllint",
        "version": __version__,
        "semanticVersion": __version__,
        "informationUri": PROJECT_URL,
        "rules": rules,
    }
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": driver},
                # Our columns count characters, not UTF-16 units (SARIF's default).
                "columnKind": "unicodeCodePoints",
                "results": [_result(d, index) for d in diagnostics],
            }
        ],
    }


def render_sarif(diagnostics: Sequence[Diagnostic], out: TextIO) -> None:
    json.dump(sarif_log(diagnostics), out, indent=2)
    out.write("\n")
