"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` annotation per finding."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from syncllint.diagnostics import Diagnostic, Severity

_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _escape_data(text: str) -> str:
    # The escaping of GitHub's toolkit (core/command.ts): message text.
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    # Property values also reserve the separators of the command line.
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(d: Diagnostic) -> str:
    properties = [("file", d.filename)]
    if d.cell is None:
        properties += [
            ("line", str(d.start.row)),
            ("col", str(d.start.column)),
            ("endLine", str(d.end.row)),
            ("endColumn", str(d.end.column)),
        ]
        where = ""
    else:
        # Rows inside a notebook cell do not match lines of the .ipynb file: name the cell instead.
        where = f"cell {d.cell}:{d.start.row}:{d.start.column}: "
    properties.append(("title", d.code))
    fields = ",".join(f"{key}={_escape_property(value)}" for key, value in properties)
    message = f"{where}{d.message} ({d.name}, confidence {d.confidence.label})"
    return f"::{_COMMAND[d.severity]} {fields}::{_escape_data(message)}"


def render_github(diagnostics: Sequence[Diagnostic], out: TextIO) -> None:
    out.writelines(annotation(d) + "\n" for d in diagnostics)
