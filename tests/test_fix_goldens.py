"""Whole-file goldens: ``fixtures/fix/NAME.in.py`` fixed with --unsafe-fixes is ``NAME.out.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from syncllint.config import Settings, settings_from_mapping
from syncllint.fixer import fix_source

GOLDENS = sorted((Path(__file__).resolve().parent.parent / "fixtures" / "fix").glob("*.in.py"))


def _settings(path: Path) -> Settings:
    # ``vllm_*`` goldens run with vLLM's preset (its h2d helper and allowed context).
    if path.name.startswith("vllm_"):
        return settings_from_mapping({"preset": "vllm", "select": ["ALL"]}, "golden")
    return Settings(select=("ALL",))


def test_there_are_goldens() -> None:
    assert len(GOLDENS) >= 2


@pytest.mark.parametrize("path", GOLDENS, ids=[p.name for p in GOLDENS])
def test_golden(path: Path) -> None:
    expected = path.with_name(path.name.replace(".in.py", ".out.py")).read_text(encoding="utf-8")
    outcome = fix_source(path.read_text(encoding="utf-8"), str(path), _settings(path), unsafe=True)
    assert outcome.error is None
    assert outcome.fixed == expected
    compile(outcome.fixed, str(path), "exec")
    again = fix_source(outcome.fixed, str(path), _settings(path), unsafe=True)
    assert again.fixed == outcome.fixed and not again.fixed_counts


def test_comments_on_fixed_lines_are_kept() -> None:
    path = next(p for p in GOLDENS if p.name == "engine_step.in.py")
    fixed = fix_source(path.read_text(encoding="utf-8"), str(path), _settings(path), unsafe=True).fixed
    for comment in ("# keep: ids", "# named host tensor: unsafe fix", "# lower bound", "# last slot"):
        line = next(line for line in fixed.splitlines() if comment in line)
        assert "non_blocking=True" in line or "min=scale," in line or ".fill_(" in line, line


def test_safe_only_leaves_unsafe_fixes() -> None:
    path = next(p for p in GOLDENS if p.name == "engine_step.in.py")
    outcome = fix_source(path.read_text(encoding="utf-8"), str(path), _settings(path), unsafe=False)
    assert "self.seq_lens_cpu.to(\"cuda\")" in outcome.fixed  # a named host tensor: unsafe
    assert "bounded[greedy] = scale" in outcome.fixed  # SYNC401: unsafe
    assert "bounded[0].fill_(1.0)" in outcome.fixed
    assert {d.code for d in outcome.remaining} >= {"SYNC202", "SYNC401", "SYNC101"}


def test_readme_before_after_example() -> None:
    import re

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Fixing: `--fix`") :]
    before, after = re.findall(r"```python\n(.*?)```", section, re.DOTALL)[:2]
    outcome = fix_source(before, "example.py", Settings())
    assert outcome.fixed == after
