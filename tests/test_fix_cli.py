"""``syncllint check`` with the fix and adoption flags, as a user runs it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from syncllint.cli import cli

ROOT = Path(__file__).resolve().parent.parent
UPLOAD = 'import torch\n\nids = torch.tensor([1, 2], device="cuda")\n'
UPLOADED = 'import torch\n\nids = torch.tensor([1, 2], pin_memory=True).to("cuda", non_blocking=True)\n'
READ = "import torch\n\nx = torch.randn(4, device='cuda')\nn = x.sum().item()\n"


def _check(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["check", "--isolated", *args], input=stdin)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def upload(tmp_path: Path) -> Path:
    path = tmp_path / "up.py"
    path.write_text(UPLOAD)
    return path


def test_fix_writes_and_exits_zero_when_nothing_is_left(upload: Path) -> None:
    code, out, _ = _check("--fix", str(upload))
    assert upload.read_text() == UPLOADED
    assert code == 0 and "1 fixed, 0 remaining" in out


def test_fix_exits_one_when_findings_remain(tmp_path: Path) -> None:
    path = tmp_path / "r.py"
    path.write_text(UPLOAD + READ.split("\n", 2)[2])
    code, out, _ = _check("--fix", str(path))
    assert code == 1 and "SYNC101" in out and "1 fixed, 1 remaining" in out


def test_exit_non_zero_on_fix(upload: Path) -> None:
    assert _check("--fix", "--exit-non-zero-on-fix", str(upload))[0] == 1
    assert _check("--fix", "--exit-non-zero-on-fix", str(upload))[0] == 0  # nothing left to change


def test_diff_writes_nothing_and_exits_one(upload: Path) -> None:
    code, out, err = _check("--diff", str(upload))
    assert code == 1 and upload.read_text() == UPLOAD
    assert f"--- {upload}" in out and '+ids = torch.tensor([1, 2], pin_memory=True).to("cuda", non_blocking=True)' in out
    assert "Would fix 1 finding." in err
    upload.write_text(UPLOADED)
    assert _check("--diff", str(upload))[:2] == (0, "")


def test_fix_only_reports_nothing_left_and_exits_zero(tmp_path: Path) -> None:
    path = tmp_path / "r.py"
    path.write_text(UPLOAD + READ.split("\n", 2)[2])
    code, out, _ = _check("--fix-only", str(path))
    assert code == 0 and "SYNC101" not in out and "Fixed 1 finding." in out


def test_show_fixes_lists_rules(upload: Path) -> None:
    _, out, _ = _check("--fix", "--show-fixes", str(upload))
    assert "Fixed 1 finding:" in out and "1 × SYNC201 (tensor-from-host-data)" in out


def test_unsafe_fixes_flag(tmp_path: Path) -> None:
    path = tmp_path / "u.py"
    path.write_text('import torch\n\ncpu_t = torch.ones(4)\ndev = cpu_t.to("cuda")\n')
    code, out, _ = _check("--fix", str(path))
    assert code == 1 and "1 hidden fix can be enabled with the `--unsafe-fixes` option." in out
    assert _check("--fix", "--unsafe-fixes", str(path))[0] == 0
    assert 'cpu_t.pin_memory().to("cuda", non_blocking=True)' in path.read_text()


def test_stdin_fix_prints_the_fixed_code() -> None:
    code, out, _ = _check("--fix", "-", "--stdin-filename", "x.py", stdin=UPLOAD)
    assert out == UPLOADED and code == 0
    code, out, err = _check("--fix", "-", stdin=UPLOAD + READ.split("\n", 2)[2])
    assert out.startswith(UPLOADED) and "SYNC101" in err and code == 1


def test_json_output_after_fix_lists_what_is_left(tmp_path: Path) -> None:
    path = tmp_path / "r.py"
    path.write_text(UPLOAD + READ.split("\n", 2)[2])
    _, out, _ = _check("--fix", "--output-format", "json", str(path))
    assert [d["code"] for d in json.loads(out)] == ["SYNC101"]


def test_add_noqa_then_clean(tmp_path: Path) -> None:
    path = tmp_path / "r.py"
    path.write_text(READ)
    assert _check("--add-noqa", str(path))[0] == 0
    assert path.read_text().endswith("n = x.sum().item()  # noqa: SYNC101\n")
    assert _check(str(path))[0] == 0


def test_add_allow_uses_the_vllm_module_with_the_preset(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.syncllint]\npreset = "vllm"\n')
    path = tmp_path / "r.py"
    path.write_text(READ)
    result = CliRunner().invoke(cli, ["check", "--add-allow", str(path)])
    assert result.exit_code == 0, result.output
    text = path.read_text()
    assert "from vllm.utils.gpu_sync_debug import gpu_sync_allowed\n" in text
    assert "with gpu_sync_allowed():  # TODO(syncllint): justify or remove\n    n = x.sum().item()\n" in text


def test_baseline_reports_only_new_findings_and_stale_entries(tmp_path: Path) -> None:
    path = tmp_path / "r.py"
    path.write_text("import torch\n\n\ndef f(x):\n    x = x.cuda()\n    return x.sum().item()\n")
    base = tmp_path / "baseline.json"
    code, _, err = _check("--write-baseline", str(base), str(path))
    assert code == 0 and "Wrote 1 finding" in err
    # Moving the statement keeps its key; a new finding is reported.
    path.write_text("import torch\n\n\n\ndef f(x):\n    x = x.cuda()\n    y = x.max().item()\n    return x.sum().item()\n")
    code, out, err = _check("--baseline", str(base), str(path))
    assert code == 1 and out.count("SYNC101") == 1 and ":7:" in out and "stale" not in err
    path.write_text("import torch\n")
    code, out, err = _check("--baseline", str(base), str(path))
    assert code == 0 and "stale baseline entry" in err and "SYNC101 in f" in err


def test_bad_baseline_is_a_usage_error(tmp_path: Path) -> None:
    bad = tmp_path / "b.json"
    bad.write_text("[]")
    path = tmp_path / "r.py"
    path.write_text(READ)
    code, _, err = _check("--baseline", str(bad), str(path))
    assert code == 2 and "not a syncllint baseline" in err


def test_demo_fix_on_a_copy_and_diff_without_writing(tmp_path: Path) -> None:
    demo = tmp_path / "demo"
    shutil.copytree(ROOT / "fixtures" / "demo", demo)
    before = {p.name: p.read_text() for p in demo.glob("*.py")}
    proc = subprocess.run(
        [sys.executable, "-m", "syncllint", "check", "--diff", str(demo)], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert proc.returncode == 1 and "+++ " in proc.stdout and "pin_memory=True" in proc.stdout
    assert {p.name: p.read_text() for p in demo.glob("*.py")} == before
    proc = subprocess.run(
        [sys.executable, "-m", "syncllint", "check", "--fix", str(demo)], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert proc.returncode == 1  # the demo keeps findings that have no fix
    after = {p.name: p.read_text() for p in demo.glob("*.py")}
    assert after != before and "pin_memory=True).to(\"cuda\", non_blocking=True)" in after["batch.py"]
    for text in after.values():
        compile(text, "demo.py", "exec")
    again = subprocess.run(
        [sys.executable, "-m", "syncllint", "check", "--diff", str(demo)], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert again.returncode == 0 and again.stdout == ""
