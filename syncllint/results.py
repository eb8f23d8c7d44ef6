"""Per-file results, kept apart from the engine so cache hits never import libcst."""

from __future__ import annotations

from dataclasses import dataclass

from syncllint.diagnostics import (
    PARSE_ERROR_CODE,
    PARSE_ERROR_NAME,
    Confidence,
    Diagnostic,
    Location,
    Severity,
)


@dataclass(frozen=True)
class FileResult:
    filename: str
    diagnostics: tuple[Diagnostic, ...]
    # Set when linting this file failed inside syncllint (a bug): the run goes on, exit code 2.
    internal_error: str | None = None


def parse_error(filename: str, message: str, row: int = 1, column: int = 1) -> Diagnostic:
    where = Location(max(row, 1), max(column, 1))
    return Diagnostic(
        code=PARSE_ERROR_CODE,
        name=PARSE_ERROR_NAME,
        message=f"cannot parse file: {message}",
        filename=filename,
        start=where,
        end=where,
        confidence=Confidence.HIGH,
        severity=Severity.ERROR,
    )
