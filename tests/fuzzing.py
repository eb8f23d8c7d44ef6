"""Hypothesis strategies for fuzzing the linter; shared by tests/test_fuzz.py and benchmarks/fuzz_long.py.

Three sources of programs: hypothesmith's grammar-based generator (valid-looking Python), its
libcst-based generator (valid Python), and mutations of real seeds (the demo fixtures and every
rule page's examples) that cut, repeat, splice and sprinkle syntax-relevant fragments into them.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from hypothesis import strategies as st

from syncllint.catalogue import load_catalogue
from syncllint.config import Settings
from syncllint.diagnostics import Confidence, Diagnostic
from syncllint.engine import lint_source
from syncllint.fixer import FixOutcome, fix_source, invalid_reason

REPO = Path(__file__).resolve().parent.parent
EVERYTHING = Settings(select=("ALL",), min_confidence=Confidence.LOW)

# Fragments that stress the tokenizer, the parser and the rules' pattern matching.
FRAGMENTS = (
    "(", ")", "[", "]", "{", "}", ":", ",", ".", "\n", "\r\n", "\r", "    ", "\t", "\x0c", "\\\n", "#", "'", '"',
    '"""', "f'{", "}'", "\x00", "\ufeff", "é", "🙂", " if ", " else ", "lambda: ", "await ", "yield ", "*", "**",
    "=", ":=", "@", "->", "...", "async ", "def f(", "class C:", "return ", "del ", "global x", "nonlocal x",
    ".item()", ".tolist()", ".cpu()", ".to('cpu')", "torch.", "torch.tensor(", "device='cuda'", "non_blocking=True",
    "x[mask]", "x[mask] = y", "with gpu_sync_allowed():", "# noqa: SYNC101", "# syncllint: noqa", "import torch\n",
    "from torch import tensor\n", "import numpy as np\n", "for i in range(3):\n", "match x:\n    case 1:\n",
    "except* E:", "type T[X] = X\n", "def g[T](a: T):\n", "%", "!", "?",
)


@lru_cache(maxsize=1)
def seeds() -> tuple[str, ...]:
    found = [p.read_text() for p in sorted((REPO / "fixtures").rglob("*.py"))]
    for page in load_catalogue().values():
        found.extend(example.code for example in page.examples)
    return tuple(found)


@st.composite
def mutated_programs(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(seeds()))
    for _ in range(draw(st.integers(min_value=1, max_value=6))):
        n = len(text)
        a = draw(st.integers(min_value=0, max_value=n))
        b = draw(st.integers(min_value=a, max_value=min(n, a + 80)))
        op = draw(st.sampled_from(["delete", "repeat", "insert", "splice", "truncate", "indent", "swap-lines"]))
        if op == "delete":
            text = text[:a] + text[b:]
        elif op == "repeat":
            text = text[:b] + text[a:b] * draw(st.integers(min_value=1, max_value=5)) + text[b:]
        elif op == "insert":
            text = text[:a] + draw(st.sampled_from(FRAGMENTS) | st.text(max_size=8)) + text[a:]
        elif op == "splice":
            other = draw(st.sampled_from(seeds()))
            text = text[:a] + other[: draw(st.integers(min_value=0, max_value=len(other)))] + text[b:]
        elif op == "truncate":
            text = text[:a]
        elif op == "indent":
            text = "\n".join(("\t" if i % 2 else "   ") + line for i, line in enumerate(text.split("\n")))
        else:
            lines = text.split("\n")
            if len(lines) > 1:
                i = draw(st.integers(min_value=0, max_value=len(lines) - 2))
                lines[i], lines[i + 1] = lines[i + 1], lines[i]
            text = "\n".join(lines)
    return text


def generated_programs() -> st.SearchStrategy[str]:
    """hypothesmith's generators when it is installed, else an empty strategy set."""
    try:
        import hypothesmith
    except ImportError:
        return st.nothing()
    return hypothesmith.from_grammar() | hypothesmith.from_node()


def programs() -> st.SearchStrategy[str]:
    return mutated_programs() | generated_programs()


def lint_never_raises(source: str) -> tuple[Diagnostic, ...]:
    """Lint ``source``; fail on any exception, or on a location outside the text."""
    diagnostics = lint_source(source, "fuzzed.py", EVERYTHING).diagnostics
    rows = source.count("\n") + source.count("\r") + 2
    for d in diagnostics:
        assert 1 <= d.start.row <= d.end.row <= rows, d
        assert d.start.column >= 1 and d.end.column >= 1, d
    return diagnostics


def fix_is_sound(source: str) -> FixOutcome:
    """``--fix --unsafe-fixes`` on ``source``: never raises; a changed output parses and compiles;
    fixing the output again changes nothing (the fixer reached a fixed point)."""
    outcome = fix_source(source, "fuzzed.py", EVERYTHING, unsafe=True)
    if outcome.changed:
        assert outcome.error is None, outcome.error
        assert invalid_reason(outcome.fixed, "fuzzed.py") is None, outcome.fixed
        again = fix_source(outcome.fixed, "fuzzed.py", EVERYTHING, unsafe=True)
        assert again.fixed == outcome.fixed, (outcome.fixed, again.fixed)
    else:
        assert outcome.fixed == source
    return outcome


@st.composite
def line_mutated_programs(draw: st.DrawFn) -> str:
    """Seeds changed a whole line at a time (drop, repeat, swap, join two seeds, CRLF): most still
    parse, so the fixes fire far more often than on byte-level mutations."""
    lines = draw(st.sampled_from(seeds())).splitlines(keepends=True)
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        if not lines:
            break
        i = draw(st.integers(min_value=0, max_value=len(lines) - 1))
        op = draw(st.sampled_from(["drop", "repeat", "swap", "join", "crlf"]))
        if op == "drop":
            del lines[i]
        elif op == "repeat":
            lines.insert(i, lines[i])
        elif op == "swap" and i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        elif op == "join":
            lines += draw(st.sampled_from(seeds())).splitlines(keepends=True)
        elif op == "crlf":
            lines = [line.replace("\n", "\r\n") if line.endswith("\n") and not line.endswith("\r\n") else line for line in lines]
    return "".join(lines)


def notebook_fix_is_sound(cells: list[str]) -> bool:
    """``--fix --unsafe-fixes`` on a notebook of these cells: never raises; the result is the same
    notebook (only code cells' sources differ, each still compiles in order); a second fix is a no-op."""
    import json

    from syncllint.notebook_fix import fix_notebook_text

    entries: list[dict[str, object]] = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": c} for c in cells]
    text = json.dumps({"cells": entries, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"
    outcome = fix_notebook_text(text, "fuzzed.ipynb", EVERYTHING, unsafe=True)
    if not outcome.changed:
        return False
    assert outcome.error is None, outcome.error
    fixed = json.loads(outcome.fixed)
    assert [{**e, "source": ""} for e in fixed["cells"]] == [{**e, "source": ""} for e in entries]
    assert invalid_reason("".join(c["source"] + "\n" for c in fixed["cells"]), "fuzzed.py") is None
    again = fix_notebook_text(outcome.fixed, "fuzzed.ipynb", EVERYTHING, unsafe=True)
    assert again.fixed == outcome.fixed
    return True
