"""The pre-commit hooks, run by the real ``pre-commit try-repo`` against a temporary git repository.

pre-commit builds a virtual environment from the syncllint source (pip fetches the build backend
and dependencies from PyPI, or its cache), so this is the slowest test of the suite (~30-60 s).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
HOOKS = REPO / ".pre-commit-hooks.yaml"

needs_tools = pytest.mark.skipif(
    importlib.util.find_spec("pre_commit") is None or shutil.which("git") is None,
    reason="needs pre-commit (the `test` extra) and git",
)


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", *args],
        cwd=cwd, capture_output=True, text=True, check=True,
    )
    return done.stdout


def _committed_copy_of_this_tree(into: Path) -> Path:
    """A clean repository holding this working tree: try-repo on it reuses one environment."""
    try:
        listed = _git(REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    except (subprocess.CalledProcessError, OSError):
        pytest.skip("the syncllint sources are not a git checkout")
    into.mkdir()
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    _git(into, "init", "-q")
    _git(into, "add", "-A")
    _git(into, "commit", "-q", "-m", "snapshot")
    return into


def test_hook_definitions() -> None:
    yaml = pytest.importorskip("yaml", reason="PyYAML comes with pre-commit")
    hooks = {hook["id"]: hook for hook in yaml.safe_load(HOOKS.read_text())}
    assert set(hooks) == {"syncllint", "syncllint-fix"}
    assert hooks["syncllint"]["entry"] == "syncllint check --force-exclude"
    assert hooks["syncllint-fix"]["entry"] == "syncllint check --fix --exit-non-zero-on-fix --force-exclude"
    for hook in hooks.values():
        assert hook["language"] == "python"
        assert {"python", "pyi"} <= set(hook["types_or"])
        assert hook["require_serial"] is False


@dataclass(frozen=True)
class HookRepo:
    source: Path  # a committed copy of this tree, for try-repo
    env: dict[str, str]  # one PRE_COMMIT_HOME: the hook environment is built once per module

    def try_repo(self, project: Path, hook: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "pre_commit", "try-repo", str(self.source), hook]
        return subprocess.run(command, cwd=project, check=False, capture_output=True, text=True, env=self.env, timeout=600)


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> HookRepo:
    base = tmp_path_factory.mktemp("pre-commit")
    source = _committed_copy_of_this_tree(base / "syncllint")
    env = {**os.environ, "PRE_COMMIT_HOME": str(base / "pre-commit-home"), "PRE_COMMIT_COLOR": "never"}
    return HookRepo(source, env)


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    _git(project, "init", "-q")
    return project


@pytest.mark.slow
@needs_tools
def test_try_repo_fails_on_a_sync_and_passes_clean_code(tmp_path: Path, hook_repo: HookRepo) -> None:
    project = _project(tmp_path)
    (project / "step.py").write_text("import torch\n\ndef step(x: torch.Tensor) -> float:\n    return x.sum().item()\n")
    _git(project, "add", "step.py")

    failing = hook_repo.try_repo(project, "syncllint")
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "step.py:4:12: SYNC101" in failing.stdout
    assert "Failed" in failing.stdout

    _git(project, "rm", "-q", "--cached", "step.py")
    (project / "step.py").unlink()
    (project / "clean.py").write_text("import torch\n\ndef step(x: torch.Tensor) -> torch.Tensor:\n    return x.sum()\n")
    _git(project, "add", "clean.py")
    passing = hook_repo.try_repo(project, "syncllint")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "Passed" in passing.stdout


@pytest.mark.slow
@needs_tools
def test_fix_hook_fixes_a_staged_file_fails_once_then_passes(tmp_path: Path, hook_repo: HookRepo) -> None:
    project = _project(tmp_path)
    upload = 'import torch\n\nids = torch.tensor([1, 2], device="cuda")\n'
    (project / "upload.py").write_text(upload)
    _git(project, "add", "upload.py")

    first = hook_repo.try_repo(project, "syncllint-fix")
    assert first.returncode == 1, first.stdout + first.stderr  # it changed a file: the commit must stop
    assert "Failed" in first.stdout and "files were modified by this hook" in first.stdout
    fixed = (project / "upload.py").read_text()
    assert fixed == upload.replace('device="cuda")', 'pin_memory=True).to("cuda", non_blocking=True)')

    _git(project, "add", "upload.py")  # what a user does next: stage the fix, commit again
    second = hook_repo.try_repo(project, "syncllint-fix")
    assert second.returncode == 0, second.stdout + second.stderr
    assert "Passed" in second.stdout
    assert (project / "upload.py").read_text() == fixed
