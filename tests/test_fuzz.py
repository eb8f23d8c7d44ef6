"""Fuzzing: generated and mutated programs never make the linter raise.

A few hundred examples here; benchmarks/fuzz_long.py runs the same properties for as long as
you like (>= 10,000 examples).
"""

from __future__ import annotations

import importlib.util
import json

import pytest
from fuzzing import (
    EVERYTHING,
    fix_is_sound,
    generated_programs,
    line_mutated_programs,
    lint_never_raises,
    mutated_programs,
    notebook_fix_is_sound,
    seeds,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from syncllint.notebook import lint_notebook

FAST = settings(deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


@settings(FAST, max_examples=300)
@given(mutated_programs())
def test_mutated_seeds_never_raise(source: str) -> None:
    lint_never_raises(source)


@pytest.mark.skipif(importlib.util.find_spec("hypothesmith") is None, reason="hypothesmith is not installed")
@settings(FAST, max_examples=60)
@given(generated_programs())
def test_generated_programs_never_raise(source: str) -> None:
    lint_never_raises(source)


@settings(FAST, max_examples=50)
@given(st.lists(mutated_programs(), min_size=1, max_size=4))
def test_notebooks_of_mutated_cells_never_raise(cells: list[str]) -> None:
    text = json.dumps({"cells": [{"cell_type": "code", "source": c} for c in cells]})
    assert lint_notebook(text.encode(), "fuzzed.ipynb", EVERYTHING).internal_error is None


@settings(FAST, max_examples=120)
@given(mutated_programs())
def test_fixing_mutated_seeds_is_sound(source: str) -> None:
    fix_is_sound(source)


@settings(FAST, max_examples=150)
@given(line_mutated_programs())
def test_fixing_line_mutated_seeds_is_sound(source: str) -> None:
    # These mostly parse, so this is where the fixes actually fire.
    fix_is_sound(source)


@pytest.mark.skipif(importlib.util.find_spec("hypothesmith") is None, reason="hypothesmith is not installed")
@settings(FAST, max_examples=30)
@given(generated_programs())
def test_fixing_generated_programs_is_sound(source: str) -> None:
    fix_is_sound(source)


def test_the_fix_fuzzing_reaches_fixes() -> None:
    # Guard against a vacuous property: some seeds must have fixes that fire.
    changed = [s for s in seeds() if fix_is_sound(s).changed]
    assert len(changed) >= 10


@settings(FAST, max_examples=60)
@given(st.lists(line_mutated_programs(), min_size=1, max_size=3))
def test_fixing_notebooks_of_mutated_cells_is_sound(cells: list[str]) -> None:
    notebook_fix_is_sound(cells)
