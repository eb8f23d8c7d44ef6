"""``syncllint verify --fix PATH -- CMD``: the fixes applied to a copy, CMD run before and after.

The user's tree is never touched: both runs happen in temporary copies. CMD runs with
``SYNCLLINT_SYNC_CHECK=record`` (the pytest plugin and ``@sync_check()`` functions record) and
``SYNCLLINT_SYNC_REPORT`` pointing at a JSON-lines file that the checks append their events to.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from syncllint.runtime.check import ENV_VAR, REPORT_ENV_VAR

_IGNORED = shutil.ignore_patterns(".git", "__pycache__", ".venv", "*.pyc", ".mypy_cache", ".pytest_cache", ".syncllint_cache")
PLUGIN = "syncllint.pytest_plugin"


@dataclass
class Run:
    label: str
    returncode: int
    syncs: int = 0
    races: int = 0
    allowed: int = 0
    by_rule: dict[str, int] = field(default_factory=dict)
    output_tail: str = ""

    @property
    def passed(self) -> bool:
        return self.returncode == 0


def plugin_registered() -> bool:
    """Whether an installed ``pytest11`` entry point loads the plugin already."""
    from importlib.metadata import entry_points

    return any(ep.value.startswith(PLUGIN) for ep in entry_points(group="pytest11"))


def _environment(report: Path) -> dict[str, str]:
    env = dict(os.environ, **{ENV_VAR: "record", REPORT_ENV_VAR: str(report)})
    if not plugin_registered():
        env["PYTEST_ADDOPTS"] = f"{env.get('PYTEST_ADDOPTS', '')} -p {PLUGIN}".strip()
    # The copy must import syncllint as installed here, and the user's code from the copy.
    here = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH", ""), here) if p)
    return env


def run_command(label: str, root: Path, command: list[str]) -> Run:
    report = root.parent / f"{label}.syncs.jsonl"
    report.unlink(missing_ok=True)
    done = subprocess.run(command, cwd=root, env=_environment(report), capture_output=True, text=True, check=False)
    events: list[dict[str, Any]] = []
    if report.exists():
        events = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines() if line.strip()]
    syncs = [e for e in events if not e["allowed"] and e["kind"] != "race"]
    return Run(
        label=label,
        returncode=done.returncode,
        syncs=len(syncs),
        races=sum(1 for e in events if not e["allowed"] and e["kind"] == "race"),
        allowed=sum(1 for e in events if e["allowed"]),
        by_rule=dict(Counter(e["rule_code"] for e in syncs)),
        output_tail=(done.stdout + done.stderr)[-2000:],
    )


def apply_fixes(root: Path) -> tuple[bool, str]:
    """``syncllint check --fix --unsafe-fixes`` on the copy; (worked, message)."""
    command = [sys.executable, "-m", "syncllint", "check", "--fix", "--unsafe-fixes", "--exit-zero", "."]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)
    message = (done.stdout + done.stderr).strip()
    return done.returncode == 0, message[-2000:]


def changed_files(before: Path, after: Path) -> list[str]:
    changed = []
    for path in sorted(after.rglob("*.py")):
        twin = before / path.relative_to(after)
        if not twin.exists() or twin.read_bytes() != path.read_bytes():
            changed.append(str(path.relative_to(after)))
    return changed


@dataclass
class FixReport:
    fixes_applied: bool
    fixer_output: str
    changed: list[str]
    before: Run | None
    after: Run | None

    @property
    def ok(self) -> bool:
        if not self.fixes_applied or self.before is None or self.after is None:
            return False
        return self.after.passed and self.after.syncs <= self.before.syncs and (self.before.passed or not self.after.passed) is not None

    def as_json(self) -> dict[str, Any]:
        from dataclasses import asdict

        return {
            "fixes_applied": self.fixes_applied,
            "fixer_output": self.fixer_output,
            "changed_files": self.changed,
            "before": asdict(self.before) if self.before else None,
            "after": asdict(self.after) if self.after else None,
            "ok": self.ok,
        }


def verify_fix(path: Path, command: list[str]) -> FixReport:
    with tempfile.TemporaryDirectory(prefix="syncllint-verify-") as tmp:
        before_root, after_root = Path(tmp) / "before" / path.name, Path(tmp) / "after" / path.name
        shutil.copytree(path, before_root, ignore=_IGNORED)
        shutil.copytree(path, after_root, ignore=_IGNORED)
        applied, output = apply_fixes(after_root)
        if not applied:
            return FixReport(False, output, [], None, None)
        changed = changed_files(before_root, after_root)
        before = run_command("before", before_root, command)
        after = run_command("after", after_root, command)
        return FixReport(True, output, changed, before, after)
