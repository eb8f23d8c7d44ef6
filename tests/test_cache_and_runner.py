"""The result cache, the process pool and the CLI flags around them."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from syncllint import runner
from syncllint.cache import _decode, _encode, clean, open_cache
from syncllint.cli import cli
from syncllint.config import Settings
from syncllint.diagnostics import (
    Applicability,
    Confidence,
    Diagnostic,
    Edit,
    Fix,
    Location,
    Severity,
)
from syncllint.runner import _chunks, lint_files

REPO = Path(__file__).resolve().parent.parent
SETTINGS = Settings(select=("ALL",), min_confidence=Confidence.LOW)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "fixtures" / "demo", tmp_path / "demo")
    return tmp_path / "demo"


@pytest.fixture
def linted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the files the engine really lints (serial runs only)."""
    seen: list[str] = []
    real = runner.lint_bytes

    def counting(data: bytes, path: str, settings: Settings, *rest: Any) -> runner.FileResult:
        seen.append(Path(path).name)
        return real(data, path, settings, *rest)

    monkeypatch.setattr(runner, "lint_bytes", counting)
    return seen


def _files(root: Path) -> list[Path]:
    return sorted(root.rglob("*.py"))


def test_unchanged_tree_is_answered_from_the_cache(tree: Path, tmp_path: Path, linted: list[str]) -> None:
    cache = open_cache(tmp_path / "cache", SETTINGS)
    first = lint_files(_files(tree), SETTINGS, jobs=1, cache=cache)
    assert len(linted) == len(_files(tree))
    linted.clear()
    second = lint_files(_files(tree), SETTINGS, jobs=1, cache=cache)
    assert linted == []
    assert second == first
    assert any(r.diagnostics for r in second)
    assert second == lint_files(_files(tree), SETTINGS, jobs=1)  # and equal to an uncached run


def test_one_edited_file_costs_one_file(tree: Path, tmp_path: Path, linted: list[str]) -> None:
    cache = open_cache(tmp_path / "cache", SETTINGS)
    lint_files(_files(tree), SETTINGS, jobs=1, cache=cache)
    linted.clear()
    edited = tree / "decode.py"
    edited.write_text(edited.read_text() + "\nextra = 1\n")
    results = lint_files(_files(tree), SETTINGS, jobs=1, cache=cache)
    assert linted == ["decode.py"]
    assert results == lint_files(_files(tree), SETTINGS, jobs=1)


def test_other_settings_do_not_share_entries(tree: Path, tmp_path: Path, linted: list[str]) -> None:
    lint_files(_files(tree), SETTINGS, jobs=1, cache=open_cache(tmp_path / "cache", SETTINGS))
    linted.clear()
    stricter = Settings(select=("ALL",), min_confidence=Confidence.HIGH)
    results = lint_files(_files(tree), stricter, jobs=1, cache=open_cache(tmp_path / "cache", stricter))
    assert len(linted) == len(_files(tree))
    assert all(d.confidence is Confidence.HIGH for r in results for d in r.diagnostics)


def test_a_corrupt_entry_is_a_miss(tree: Path, tmp_path: Path, linted: list[str]) -> None:
    cache = open_cache(tmp_path / "cache", SETTINGS)
    expected = lint_files(_files(tree), SETTINGS, jobs=1, cache=cache)
    for entry in (tmp_path / "cache").rglob("*"):
        if entry.is_file() and entry.stat().st_size > 0 and entry.parent.name != "cache":
            entry.write_text("{not json")
    linted.clear()
    assert lint_files(_files(tree), SETTINGS, jobs=1, cache=cache) == expected
    assert linted  # the files with findings were linted again


def test_diagnostics_round_trip_through_json() -> None:
    fix = Fix(Applicability.UNSAFE, "use where", (Edit("torch.where(m, x, 0)", Location(3, 5), Location(3, 12)),))
    diagnostic = Diagnostic(
        "SYNC301", "boolean-mask-index", "msg", "a.py", Location(3, 5), Location(3, 12),
        Confidence.MEDIUM, Severity.ERROR, fix=fix, hot_path=True, statement_rows=(3, 4),
    )
    assert _decode(Diagnostic, _encode(diagnostic)) == diagnostic
    plain = Diagnostic("SYNC101", "item-on-tensor", "m", "b.py", Location(1, 1), Location(1, 9), Confidence.LOW, Severity.INFO)
    assert _decode(Diagnostic, _encode(plain)) == plain


def test_cache_folder_is_git_ignored_and_clean_removes_only_caches(tmp_path: Path) -> None:
    folder = tmp_path / "c"
    open_cache(folder, SETTINGS)
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "*"
    other = tmp_path / "not-a-cache"
    other.mkdir()
    assert not clean(other)
    assert other.exists()
    assert clean(folder)
    assert not folder.exists()


def test_pool_gives_the_serial_results_in_the_same_order(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(6):
        shutil.copy(tree / "decode.py", tree / f"copy{i}.py")
    serial = lint_files(_files(tree), SETTINGS, jobs=1)
    monkeypatch.setattr(runner, "POOL_MIN_BYTES", 0)
    pooled = lint_files(reversed(_files(tree)), SETTINGS, jobs=2)
    assert pooled == serial
    assert [r.filename for r in pooled] == sorted(str(p) for p in _files(tree))


def test_chunks_start_with_the_biggest_files_and_cover_each_file_once() -> None:
    sizes = {f"f{i}.py": size for i, size in enumerate([10, 5_000, 20, 300, 7, 90_000, 40])}
    chunks = _chunks(list(sizes), sizes, workers=2)
    assert chunks[0][0] == "f5.py"
    flat = [name for chunk in chunks for name in chunk]
    assert sorted(flat) == sorted(sizes)
    assert len(chunks) > 2


def test_cli_cache_flags_and_clean(tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SYNCLLINT_NO_CACHE")
    runner_ = CliRunner()
    folder = tmp_path / "here"
    args = ["check", str(tree), "--isolated", "-q", "--cache-dir", str(folder)]
    first = runner_.invoke(cli, args)
    assert folder.is_dir()
    second = runner_.invoke(cli, args)
    assert first.exit_code == second.exit_code == 1
    assert first.output == second.output
    no_cache = tmp_path / "unused"
    runner_.invoke(cli, ["check", str(tree), "--isolated", "-q", "--no-cache", "--cache-dir", str(no_cache)])
    assert not no_cache.exists()
    removed = runner_.invoke(cli, ["clean", "--cache-dir", str(folder)])
    assert removed.exit_code == 0
    assert not folder.exists()


def test_relative_and_absolute_spellings_share_entries(tree: Path, tmp_path: Path, linted: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    cache = open_cache(tmp_path / "cache", SETTINGS)
    absolute = lint_files([tree / "decode.py"], SETTINGS, jobs=1, cache=cache)
    monkeypatch.chdir(tree)
    linted.clear()
    relative = lint_files([Path("decode.py")], SETTINGS, jobs=1, cache=cache)
    assert linted == []
    assert relative[0].diagnostics
    assert {d.filename for d in relative[0].diagnostics} == {"decode.py"}
    assert [(d.code, d.start) for d in relative[0].diagnostics] == [(d.code, d.start) for d in absolute[0].diagnostics]


def test_no_cache_environment_variable(tree: Path, tmp_path: Path) -> None:
    folder = tmp_path / "env"
    result = CliRunner().invoke(cli, ["check", str(tree), "--isolated", "-q", "--cache-dir", str(folder)])
    assert result.exit_code == 1  # SYNCLLINT_NO_CACHE=1 comes from conftest
    assert not folder.exists()
