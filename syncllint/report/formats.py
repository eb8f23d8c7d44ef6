"""The names of the output formats (kept apart so the CLI can list them without importing reporters)."""

from __future__ import annotations

OUTPUT_FORMATS = ("concise", "full", "grouped", "json", "sarif", "github", "junit")
