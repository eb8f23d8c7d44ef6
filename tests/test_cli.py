"""The command line as a user runs it: exit codes, formats, config errors, stdin, excludes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "fixtures" / "demo"

SYNCING = "import torch\n\nx = torch.ones(3, device='cuda')\nv = x.sum().item()\n"
CLEAN = "import torch\n\nx = torch.ones(3)\nv = x.sum().item()\n"


def run(*args: str, cwd: Path | None = None, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "syncllint", *args], cwd=cwd, input=stdin, capture_output=True, text=True, env=env
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "bad.py").write_text(SYNCING)
    (tmp_path / "good.py").write_text(CLEAN)
    return tmp_path


def test_exit_zero_without_findings(project: Path) -> None:
    result = run("check", "good.py", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "All checks passed!" in result.stdout


def test_exit_one_with_findings_and_concise_format(project: Path) -> None:
    result = run("check", cwd=project)
    assert result.returncode == 1
    assert "bad.py:4:5: SYNC101" in result.stdout
    assert "good.py" not in result.stdout
    assert "Found 1 finding." in result.stdout


def test_exit_zero_flag(project: Path) -> None:
    assert run("check", "--exit-zero", cwd=project).returncode == 0


def test_usage_error_exits_two(project: Path) -> None:
    result = run("check", "--output-format", "yaml", cwd=project)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr


def test_missing_path_exits_two(project: Path) -> None:
    result = run("check", "nope.py", cwd=project)
    assert result.returncode == 2
    assert "nope.py" in result.stderr and "Traceback" not in result.stderr


def test_unknown_selector_exits_two(project: Path) -> None:
    result = run("check", "--select", "SYNC999", cwd=project)
    assert result.returncode == 2
    assert "SYNC999" in result.stderr


def test_json_output_has_ruff_shape(project: Path) -> None:
    result = run("check", "--output-format", "json", cwd=project)
    assert result.returncode == 1
    [item] = json.loads(result.stdout)
    assert item["code"] == "SYNC101"
    assert item["location"] == {"row": 4, "column": 5}
    assert item["end_location"] == {"row": 4, "column": 19}
    assert item["filename"] == str(project / "bad.py")
    assert item["fix"] is None
    assert item["url"].endswith("SYNC101.md")
    assert item["confidence"] == "high"
    assert item["severity"] in ("warning", "error")
    assert "message" in item and "noqa_row" in item


def test_full_output_shows_source_and_caret(project: Path) -> None:
    result = run("check", "--output-format", "full", cwd=project)
    assert "v = x.sum().item()" in result.stdout
    caret_line = next(line for line in result.stdout.splitlines() if "^" in line)
    assert caret_line.split("|", 1)[1].index("^") == len(" v = ")
    assert caret_line.count("^") == len("x.sum().item()")


def test_statistics(project: Path) -> None:
    (project / "more.py").write_text(SYNCING + "w = x.tolist()\n")
    result = run("check", "--statistics", cwd=project)
    assert result.returncode == 1
    lines = result.stdout.strip().splitlines()
    assert lines[0].split("\t")[:2] == ["2", "SYNC101"]
    assert lines[1].split("\t")[:2] == ["1", "SYNC102"]


def test_select_and_ignore(project: Path) -> None:
    assert run("check", "--select", "SYNC2", cwd=project).returncode == 0
    assert run("check", "--ignore", "SYNC101", cwd=project).returncode == 0
    assert run("check", "--select", "SYNC1", "--ignore", "SYNC10", cwd=project).returncode == 0
    assert run("check", "--select", "SYNC2", "--extend-select", "SYNC101", cwd=project).returncode == 1
    assert run("check", "--ignore", "SYNC1", "--extend-select", "SYNC101", cwd=project).returncode == 1


def test_quiet_prints_findings_only(project: Path) -> None:
    result = run("check", "-q", cwd=project)
    assert result.stdout.strip().splitlines() == [line for line in result.stdout.strip().splitlines() if "SYNC" in line]
    assert "Found" not in result.stdout


def test_stdin(project: Path) -> None:
    result = run("check", "-", "--stdin-filename", "mod.py", stdin=SYNCING, cwd=project)
    assert result.returncode == 1
    assert "mod.py:4:5: SYNC101" in result.stdout
    assert run("check", "-", stdin=CLEAN, cwd=project).returncode == 0


def test_unparsable_file_is_reported_and_others_still_linted(project: Path) -> None:
    (project / "broken.py").write_text("def f(:\n    pass\n")
    result = run("check", "--output-format", "json", cwd=project)
    assert result.returncode == 1
    found = {(Path(d["filename"]).name, d["code"]) for d in json.loads(result.stdout)}
    assert found == {("broken.py", "SYNC001"), ("bad.py", "SYNC101")}


def test_non_utf8_file_is_reported_not_crashed(project: Path) -> None:
    (project / "latin.py").write_bytes(b"x = '\xe9'\n")
    result = run("check", "latin.py", cwd=project)
    assert result.returncode == 1
    assert "SYNC001" in result.stdout and "Traceback" not in result.stderr


def test_gitignore_and_excludes(project: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / ".gitignore").write_text("generated/\n")
    (project / "generated").mkdir()
    (project / "generated" / "gen.py").write_text(SYNCING)
    (project / "vendor").mkdir()
    (project / "vendor" / "v.py").write_text(SYNCING)
    out = run("check", "--extend-exclude", "vendor", cwd=project).stdout
    assert "gen.py" not in out and "v.py" not in out and "bad.py" in out
    out = run("check", "--no-respect-gitignore", cwd=project).stdout
    assert "gen.py" in out
    # Explicit paths are linted even when excluded, unless --force-exclude (pre-commit passes files).
    assert run("check", "--extend-exclude", "vendor", "vendor/v.py", cwd=project).returncode == 1
    assert run("check", "--extend-exclude", "vendor", "--force-exclude", "vendor/v.py", cwd=project).returncode == 0


def test_pyi_files_are_linted(project: Path) -> None:
    (project / "stub.pyi").write_text(SYNCING)
    assert "stub.pyi:4:5: SYNC101" in run("check", cwd=project).stdout


def test_rule_command(project: Path) -> None:
    page = run("rule", "SYNC101", cwd=project)
    assert page.returncode == 0 and "item-on-tensor" in page.stdout
    table = run("rule", "--all", "--output-format", "json", cwd=project)
    codes = [row["code"] for row in json.loads(table.stdout)]
    assert "SYNC101" in codes and codes == sorted(codes)
    assert run("rule", "SYNC999", cwd=project).returncode == 2


def test_demo_lists_exactly_the_expected_syncs() -> None:
    result = run("check", str(DEMO), "--output-format", "json", "-q")
    assert result.returncode == 1, result.stderr
    found = [
        {"code": d["code"], "file": Path(d["filename"]).name, "row": d["location"]["row"], "column": d["location"]["column"]}
        for d in json.loads(result.stdout)
    ]
    expected = json.loads((DEMO / "expected.json").read_text())
    assert found == expected


def test_check_never_imports_torch(project: Path) -> None:
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "import syncllint.cli\n"
        "assert 'torch' not in sys.modules, 'import syncllint.cli imported torch'\n"
        f"result = CliRunner().invoke(syncllint.cli.cli, ['check', {str(project)!r}, '--output-format', 'full'])\n"
        "assert result.exit_code == 1, result.output\n"
        "assert 'torch' not in sys.modules, 'a check run imported torch'\n"
        "print('ok')\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.stdout.strip() == "ok", result.stderr


def test_python_dash_m_and_version() -> None:
    result = run("--version")
    assert result.returncode == 0 and "syncllint" in result.stdout


def test_hot_path_findings_are_listed_first(project: Path) -> None:
    (project / "a_cold.py").write_text(SYNCING)
    (project / "z_hot.py").write_text(SYNCING + "\ndef decode_step():\n    return x.tolist()\n")
    lines = [line for line in run("check", "-q", cwd=project).stdout.splitlines() if "SYNC" in line]
    assert lines[0].startswith("z_hot.py:7:12: SYNC102")
    assert [line.split(":")[0] for line in lines[1:]] == ["a_cold.py", "bad.py", "z_hot.py"]
