"""Shared helpers for the test suite."""

from __future__ import annotations

import textwrap

import pytest

from syncllint.config import Settings
from syncllint.diagnostics import Confidence, Diagnostic
from syncllint.engine import lint_source


def lint(source: str, *, select: tuple[str, ...] | None = ("ALL",), **changes: object) -> list[Diagnostic]:
    """Lint a snippet with every rule on and all confidences shown unless told otherwise."""
    settings = Settings(select=select, min_confidence=changes.pop("min_confidence", Confidence.LOW), **changes)  # type: ignore[arg-type]
    return list(lint_source(textwrap.dedent(source), "snippet.py", settings).diagnostics)


def codes(source: str, **kwargs: object) -> list[str]:
    return [d.code for d in lint(source, **kwargs)]


@pytest.fixture
def lint_snippet():  # type: ignore[no-untyped-def]
    return lint


@pytest.fixture(autouse=True)
def _no_result_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """CLI runs in tests neither read nor write `.syncllint_cache/`, so a cached result never hides
    a monkeypatched engine; a test of the cache itself removes the variable."""
    monkeypatch.setenv("SYNCLLINT_NO_CACHE", "1")
