"""The machine-readable outputs: SARIF (validated against the official schema), GitHub
annotations, JUnit XML and ruff's grouped format, through the real command line."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from syncllint.checks import all_rules
from syncllint.cli import cli
from syncllint.report.formats import OUTPUT_FORMATS

REPO = Path(__file__).resolve().parent.parent
# In CI the repository is cloned with shared/ beside it; here shared/ is a sibling of the worktree.
SARIF_SCHEMA = REPO.parent / "shared" / "schemas" / "sarif-schema-2.1.0.json"

SYNCING = 'import torch\n\ndef step(x: torch.Tensor) -> float:\n    for _ in range(3):\n        y = x.sum().item()\n    return y\n'
MESSY_NAME = "we,ird:name%.py"


def _check(tmp_path: Path, fmt: str, files: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["check", ".", "--isolated", "--output-format", fmt, "-j", "1"])
    return result.exit_code, result.output


def test_every_format_is_a_cli_choice() -> None:
    result = CliRunner().invoke(cli, ["check", "--help"])
    for fmt in ("concise", "full", "json", "sarif", "github", "junit", "grouped"):
        assert fmt in OUTPUT_FORMATS
        assert fmt in result.output


def test_sarif_is_valid_and_carries_rules_with_help(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, output = _check(tmp_path, "sarif", {"a.py": SYNCING, "broken.py": "def f(:\n"}, monkeypatch)
    assert code == 1
    log = json.loads(output)
    if not SARIF_SCHEMA.is_file():
        pytest.skip(f"the SARIF schema is not at {SARIF_SCHEMA} (shared/ is not checked out beside the repo)")
    jsonschema = pytest.importorskip("jsonschema", reason="install the `test` extra for jsonschema")
    jsonschema.validate(log, json.loads(SARIF_SCHEMA.read_text()))
    run = log["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert {r.code for r in all_rules()} | {"SYNC001"} == set(rules)
    assert "## Why is this bad" in rules["SYNC101"]["help"]["markdown"]
    assert rules["SYNC101"]["helpUri"].endswith("/rules/SYNC101.md")
    by_rule = {r["ruleId"]: r for r in run["results"]}
    item = by_rule["SYNC101"]
    assert item["level"] == "error"  # inside a loop: a hot path
    assert run["tool"]["driver"]["rules"][item["ruleIndex"]]["id"] == "SYNC101"
    location = item["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "a.py"
    assert location["region"] == {"startLine": 5, "startColumn": 13, "endLine": 5, "endColumn": 27}
    assert by_rule["SYNC001"]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "broken.py"


def test_sarif_without_findings_is_valid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, output = _check(tmp_path, "sarif", {"clean.py": "x = 1\n"}, monkeypatch)
    assert code == 0
    assert json.loads(output)["runs"][0]["results"] == []


def test_github_annotations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, output = _check(tmp_path, "github", {MESSY_NAME: SYNCING}, monkeypatch)
    assert code == 1
    [line] = output.splitlines()
    assert line.startswith("::error file=we%2Cird%3Aname%25.py,line=5,col=13,endLine=5,endColumn=27,title=SYNC101::")
    assert "item-on-tensor" in line and "\n" not in line


def test_github_escapes_newlines_in_messages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from syncllint.diagnostics import Confidence, Diagnostic, Location, Severity
    from syncllint.report.github import annotation

    d = Diagnostic("SYNC001", "syntax-error", "bad\nthing 100%", "a.py", Location(1, 1), Location(1, 2),
                   Confidence.HIGH, Severity.WARNING)
    assert annotation(d).endswith("::bad%0Athing 100%25 (syntax-error, confidence high)")
    assert annotation(d).startswith("::warning ")


def test_junit_is_xml_with_one_failure_per_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, output = _check(tmp_path, "junit", {"a.py": SYNCING, "b.py": SYNCING, "nul.py": "x = '\x01'\n"}, monkeypatch)
    assert code == 1
    root = ET.fromstring(output)
    assert root.tag == "testsuites" and root.get("tests") == root.get("failures") == "2"
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {"a.py", "b.py"}
    [case] = suites["a.py"].iter("testcase")
    assert case.get("name") == "org.syncllint.SYNC101" and case.get("line") == "5"
    assert case.find("failure") is not None


def test_junit_without_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, output = _check(tmp_path, "junit", {"clean.py": "x = 1\n"}, monkeypatch)
    assert code == 0
    root = ET.fromstring(output)
    assert root.get("failures") == "0"
    assert [c.get("name") for c in root.iter("testcase")] == ["No errors found"]


def test_junit_survives_control_characters_in_messages() -> None:
    import io

    from syncllint.diagnostics import Confidence, Diagnostic, Location, Severity
    from syncllint.report.junit import render_junit

    d = Diagnostic("SYNC001", "syntax-error", "bad \x00\x1b byte", "a.py", Location(1, 1), Location(1, 1),
                   Confidence.HIGH, Severity.ERROR)
    out = io.StringIO()
    render_junit([d], out)
    assert ET.fromstring(out.getvalue()).find(".//failure") is not None


def test_grouped_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, output = _check(tmp_path, "grouped", {"a.py": SYNCING, "b.py": "x = 1\n"}, monkeypatch)
    assert code == 1
    lines = output.splitlines()
    assert lines[0] == "a.py:"
    assert lines[1].startswith("  5:13 SYNC101 `.item()`")
    assert lines[2] == ""
    assert lines[-1] == "Found 1 finding."
