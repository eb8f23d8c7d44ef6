"""The text prefilter skips work, never findings: runs with and without it agree."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from syncllint.catalogue import load_catalogue
from syncllint.checks import all_rules
from syncllint.config import Settings
from syncllint.diagnostics import Confidence, Diagnostic
from syncllint.engine import lint_source
from syncllint.prefilter import DEVICE_NAMES, HOST_NAMES, build_prefilter
from syncllint.runner import decode_source

REPO = Path(__file__).resolve().parent.parent
SETTINGS = (
    Settings(select=("ALL",), min_confidence=Confidence.LOW),
    Settings(),  # the defaults: on-by-default rules, medium confidence
    Settings(select=("ALL",), min_confidence=Confidence.LOW, device_suffixes=("_acc",), host_suffixes=("_pinned",)),
)


def _both(source: str, name: str, settings: Settings) -> tuple[tuple[Diagnostic, ...], tuple[Diagnostic, ...]]:
    on = lint_source(source, name, settings, use_prefilter=True).diagnostics
    off = lint_source(source, name, settings, use_prefilter=False).diagnostics
    return on, off


def _corpus_sample(every: int = 30, budget: int = 250_000) -> list[Path]:
    """Every n-th .py file of the installed torch package (read, never imported), up to a size budget."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("torch is not installed")
    root = Path(next(iter(spec.submodule_search_locations)))
    chosen: list[Path] = []
    total = 0
    for path in sorted(root.rglob("*.py"))[::every]:
        size = path.stat().st_size
        if total + size > budget:
            continue
        chosen.append(path)
        total += size
    return chosen


def test_catalogue_examples_and_fixtures_agree() -> None:
    sources = [ex.code for page in load_catalogue().values() for ex in page.examples]
    sources += [p.read_text(encoding="utf-8") for p in sorted((REPO / "fixtures").rglob("*.py"))]
    flagged = 0
    for settings in SETTINGS:
        for index, source in enumerate(sources):
            on, off = _both(source, f"example{index}.py", settings)
            assert on == off, f"example {index} differs under {settings}"
            flagged += bool(off)
    assert flagged  # the comparison covered files with findings


def test_real_corpus_sample_agrees() -> None:
    files = _corpus_sample()
    assert len(files) > 20
    skipped = 0
    for settings in SETTINGS[:2]:
        prefilter = build_prefilter(
            tuple(r.triggers for r in all_rules()), settings.device_suffixes, settings.host_suffixes
        )
        for path in files:
            source = decode_source(path.read_bytes()).text
            on, off = _both(source, str(path), settings)
            assert on == off, f"{path} differs under {settings}"
            skipped += not prefilter.may_report(source)
    assert skipped  # some files really were skipped


def test_placeholders_expand_to_the_configured_suffixes() -> None:
    prefilter = build_prefilter((("item", DEVICE_NAMES, HOST_NAMES),), ("_ACC",), ("_pinned",))
    assert prefilter.needles is not None
    assert set(prefilter.needles) == {"item", "_acc", "_pinned"}
    assert prefilter.may_report("y = x_acc + 1")
    assert prefilter.may_report("v = X.ITEM()")  # case-insensitive
    assert not prefilter.may_report("y = x + 1")


def test_a_rule_without_triggers_turns_the_prefilter_off() -> None:
    assert build_prefilter((("item",), None), (), ()).may_report("nothing to see")
    assert build_prefilter((("item",), (" ",)), (), ()).may_report("nothing to see")


def test_every_builtin_rule_declares_triggers() -> None:
    # Not required of a rule, but a rule without them disables the prefilter for everyone.
    assert all(rule.triggers for rule in all_rules())


def test_a_skipped_file_with_a_syntax_error_still_reports_it() -> None:
    source = "def broken(:\n    pass\n"
    on, off = _both(source, "broken.py", Settings())
    assert [d.code for d in on] == ["SYNC001"]
    assert on == off


def test_file_without_triggers_is_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    import libcst

    calls: list[str] = []
    real = libcst.parse_module

    def counting(source: str, *args: object, **kwargs: object) -> libcst.Module:
        calls.append(source)
        return real(source, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("syncllint.engine.cst.parse_module", counting)
    lint_source("def add(a, b):\n    return a + b\n", "plain.py", Settings())
    assert calls == []
    lint_source("import torch\nx = torch.ones(3).item()\n", "t.py", Settings())
    assert len(calls) == 1
