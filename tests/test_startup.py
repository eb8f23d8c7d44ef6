"""`syncllint check one.py` imports only what it needs: never torch, rich only to draw a bar,
and not even libcst when every file is answered from the cache."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _imported(args: list[str], cwd: Path) -> set[str]:
    """Top-level names of the modules a `python -m syncllint ...` run imported."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "syncllint", *args],
        cwd=cwd, capture_output=True, text=True, check=False,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode in (0, 1), done.stderr[-2000:]
    names = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


def test_one_file_check_imports_neither_torch_nor_rich(tmp_path: Path) -> None:
    target = tmp_path / "one.py"
    target.write_text("import torch\n\ndef step(x):\n    return x.sum().item()\n")
    args = ["check", str(target), "--isolated", "--cache-dir", str(tmp_path / "cache"), "-q"]
    cold = _imported(args, tmp_path)
    assert "libcst" in cold
    assert "torch" not in cold and "rich" not in cold and "numpy" not in cold
    warm = _imported(args, tmp_path)
    assert "libcst" not in warm
    assert "torch" not in warm and "rich" not in warm
