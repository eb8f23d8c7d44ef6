"""The lint path reads code as text: it never imports or runs what it lints, nor torch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

PAYLOAD = """\
import pathlib
pathlib.Path({marker!r}).write_text("ran")
import torch
x = torch.ones(1, device="cuda").item()
"""


def _plant(folder: Path, marker: Path) -> None:
    # Files whose mere import would leave the marker: plain modules, a package, names that
    # shadow the standard library, a conftest and a sitecustomize; enough to use the process pool.
    names = [f"mod{i}.py" for i in range(20)] + ["json.py", "typing.py", "conftest.py", "sitecustomize.py", "setup.py"]
    for name in names:
        (folder / name).write_text(PAYLOAD.format(marker=str(marker)))
    (folder / "pkg").mkdir()
    (folder / "pkg" / "__init__.py").write_text(PAYLOAD.format(marker=str(marker)))
    cell = {"cell_type": "code", "source": PAYLOAD.format(marker=str(marker))}
    (folder / "nb.ipynb").write_text(json.dumps({"cells": [cell]}))


def test_linting_never_imports_or_runs_the_linted_code(tmp_path: Path) -> None:
    target = tmp_path / "project"
    target.mkdir()
    marker = tmp_path / "MARKER"
    _plant(target, marker)
    script = (
        "import sys\n"
        "from syncllint.cli import main\n"
        "sys.argv = ['syncllint', 'check', sys.argv[1], '--isolated', '-j', '2', '-q']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as done:\n"
        "    assert 'torch' not in sys.modules, 'the lint path imported torch'\n"
        "    raise\n"
    )
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    in_process = subprocess.run(
        [sys.executable, "-c", script, str(target)], cwd=tmp_path, check=False, capture_output=True, text=True, timeout=600, env=env
    )
    assert in_process.returncode == 1, in_process.stderr  # findings, and no "imported torch" assertion
    assert in_process.stdout.count("SYNC101") == 27  # every planted file was linted
    # `python -m syncllint` from inside the project: its json.py must not shadow the standard library.
    as_module = subprocess.run(
        [sys.executable, "-m", "syncllint", "check", ".", "--isolated", "-j", "2", "-q"],
        cwd=target, check=False, capture_output=True, text=True, timeout=600, env=env,
    )
    assert as_module.returncode == 1, as_module.stderr
    assert as_module.stdout.count("SYNC101") == 27
    assert not marker.exists(), "linting ran the linted code"


FIXABLE = 'import torch\n\nids = torch.tensor([1, 2], device="cuda")\n'


def _check_fix(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-m", "syncllint", "check", "--fix", "--unsafe-fixes", "--isolated", *args],
        cwd=cwd, check=False, capture_output=True, text=True, timeout=600, env=env,
    )


def test_fix_never_imports_or_runs_the_fixed_code(tmp_path: Path) -> None:
    target = tmp_path / "project"
    target.mkdir()
    marker = tmp_path / "MARKER"
    _plant(target, marker)
    (target / "fixable.py").write_text(PAYLOAD.format(marker=str(marker)) + FIXABLE)
    done = _check_fix(str(target), "-j", "2", cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # the .item() findings have no fix and remain
    assert "pin_memory=True" in (target / "fixable.py").read_text()  # the fixer did run and write
    assert not marker.exists(), "--fix ran the code it fixed"


def test_fix_writes_nothing_reached_through_a_symlink_out_of_the_tree(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "lib").mkdir(parents=True)
    (outside / "victim.py").write_text(FIXABLE)
    (outside / "lib" / "deep.py").write_text(FIXABLE)
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "own.py").write_text(FIXABLE)
    (project / "pkg" / "inner.py").write_text(FIXABLE)
    (project / "pkg" / "alias.py").symlink_to(project / "own.py")  # a link inside the tree is fine
    (project / "escape.py").symlink_to(outside / "victim.py")
    (project / "lib").symlink_to(outside / "lib", target_is_directory=True)
    before = {p: p.read_bytes() for p in outside.rglob("*.py")}

    done = _check_fix(str(project), cwd=tmp_path)
    assert {p: p.read_bytes() for p in outside.rglob("*.py")} == before
    assert "pin_memory=True" in (project / "own.py").read_text()
    assert "pin_memory=True" in (project / "pkg" / "inner.py").read_text()
    assert "not fixing" in done.stderr and "escape.py" in done.stderr
    assert "escape.py:3:7: SYNC201" in done.stdout  # still linted and reported, only not written
    assert sorted(p.name for p in outside.rglob("*")) == ["deep.py", "lib", "victim.py"]  # no temp files
    # Named on its own, a link out of the tree is not written either; a plain file named is.
    # (A path named explicitly, even through a linked folder, is the user's choice.)
    done = _check_fix(str(project / "escape.py"), str(project / "lib" / "deep.py"), cwd=tmp_path)
    assert (outside / "victim.py").read_bytes() == before[outside / "victim.py"]
    assert "not fixing" in done.stderr and "escape.py" in done.stderr
    assert "pin_memory=True" in (outside / "lib" / "deep.py").read_text()
    (outside / "lib" / "deep.py").write_text(FIXABLE)
    # The same from inside the project, with the default target `.`.
    (project / "own.py").write_text(FIXABLE)
    _check_fix(cwd=project)
    assert {p: p.read_bytes() for p in outside.rglob("*.py")} == before
    assert "pin_memory=True" in (project / "own.py").read_text()
