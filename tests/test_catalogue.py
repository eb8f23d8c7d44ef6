"""Every rule page's examples agree with the linter, and every rule has a page."""

from __future__ import annotations

import pytest

from syncllint.catalogue import load_catalogue
from syncllint.checks import all_rules
from syncllint.config import Settings
from syncllint.diagnostics import Confidence
from syncllint.engine import lint_source

PAGES = load_catalogue()
ALL_ON = Settings(select=("ALL",), min_confidence=Confidence.MEDIUM)


def _examples(kind: str) -> list[tuple[str, str]]:
    return [(page.code, example.code) for page in PAGES.values() for example in page.of_kind(kind)]


def _ids(kind: str) -> list[str]:
    return [f"{page.code}:{ex.line}" for page in PAGES.values() for ex in page.of_kind(kind)]


def test_every_rule_has_a_page_with_matching_name_and_sections() -> None:
    for rule in all_rules():
        page = PAGES.get(rule.code)
        assert page is not None, f"{rule.code} has no rules/{rule.code}.md"
        assert page.name == rule.name
        for section in ("What it does", "Why is this bad", "Example", "Use instead", "Fix safety"):
            assert page.section(section), f"{rule.code}: missing section {section!r}"
        assert page.of_kind("flag"), f"{rule.code}: no must-flag example"
        assert page.of_kind("ok"), f"{rule.code}: no must-not-flag example"


def test_every_page_belongs_to_a_rule() -> None:
    codes = {r.code for r in all_rules()}
    assert set(PAGES) <= codes


@pytest.mark.parametrize(("code", "source"), _examples("flag"), ids=_ids("flag"))
def test_flag_example_is_flagged(code: str, source: str) -> None:
    found = [d.code for d in lint_source(source, "example.py", ALL_ON).diagnostics]
    assert code in found, f"{code} example not flagged; found {found}"


@pytest.mark.parametrize(("code", "source"), _examples("ok"), ids=_ids("ok"))
def test_ok_example_is_clean(code: str, source: str) -> None:
    found = [(d.code, d.start.row) for d in lint_source(source, "example.py", ALL_ON).diagnostics]
    assert found == [], f"must-not-flag example of {code} flagged: {found}"


def test_readme_rule_table_lists_every_rule() -> None:
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    table = readme.split("RULE_TABLE_START", 1)[1].split("RULE_TABLE_END", 1)[0]
    listed = [line.split("|")[1].strip() for line in table.splitlines() if line.startswith("| SYNC")]
    expected = ["SYNC001"] + [r.code for r in all_rules()]
    assert listed == expected
