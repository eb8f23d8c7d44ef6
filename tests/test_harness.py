"""``syncllint verify``: claims, result comparison, the CLI command (CPU emulation), ``--fix``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from click.testing import CliRunner

from syncllint.harness import fixrun
from syncllint.harness.command import verify
from syncllint.harness.compare import same_results
from syncllint.harness.snippets import Snippet
from syncllint.harness.verify import check_claim

FLAG = Snippet("SYNC999", "flag", 1, 'import torch\nx = torch.arange(8, device="cuda")\nv = x.sum().item()\n')
FIXED_SAME = Snippet("SYNC999", "fixed", 2, 'import torch\nx = torch.arange(8, device="cuda")\nv = x.sum()\n')
FIXED_WRONG = Snippet("SYNC999", "fixed", 3, 'import torch\nx = torch.arange(8, device="cuda")\nv = x.sum() + 1\n')
OK_THAT_SYNCS = Snippet("SYNC999", "ok", 4, 'import torch\nx = torch.ones(2, device="cuda")\nx.cpu()\n')


def test_flag_claim_holds_when_the_example_syncs() -> None:
    claim = check_claim(FLAG, None, gpu=False)
    assert claim.passed and claim.detector is True and claim.oracle is None
    assert claim.detector_events == ["SYNC101 scalar read: item (line 3)"]


def test_ok_claim_fails_when_the_example_syncs() -> None:
    claim = check_claim(OK_THAT_SYNCS, None, gpu=False)
    assert not claim.passed and "detector says sync" in claim.why


def test_fixed_claim_needs_no_sync_and_the_same_results() -> None:
    same = check_claim(FIXED_SAME, FLAG, gpu=False)
    wrong = check_claim(FIXED_WRONG, FLAG, gpu=False)
    assert same.passed and same.equal is True
    assert not wrong.passed and wrong.equal is False and "v:" in wrong.equal_detail


def test_a_broken_example_is_a_failed_claim() -> None:
    claim = check_claim(Snippet("SYNC999", "flag", 5, "import torch\nundefined_name\n"), None, gpu=False)
    assert not claim.passed and claim.error.startswith("NameError")


RACE = 'import torch\nx = torch.randn(8, device="cuda")\nstaged = x.to("cpu", non_blocking=True)\n'
RACE_FLAG = Snippet("SYNC899", "flag", 6, RACE + "first = staged[0]\n")
RACE_OK = Snippet("SYNC899", "ok", 7, RACE + "torch.cuda.synchronize()\nfirst = staged[0]\n")
NOT_A_RACE = Snippet("SYNC899", "flag", 8, 'import torch\nfirst = torch.randn(8, device="cuda").cpu()[0]\n')
NUMPY_OF_DEVICE = 'import numpy as np\nimport torch\narray = np.asarray(torch.ones(2, device="cuda"))\n'


def test_race_pages_claim_races_not_syncs() -> None:
    flag, ok, blocking = (check_claim(s, None, gpu=False) for s in (RACE_FLAG, RACE_OK, NOT_A_RACE))
    assert flag.expected == "race" and flag.race is True and flag.passed, flag.why
    assert ok.expected == "no race" and ok.race is False and ok.detector is True and ok.passed, ok.why
    assert not blocking.passed and "emulation says no race" in blocking.why and "detector says sync" in blocking.why


def test_an_example_marked_raises_must_raise_that_exception() -> None:
    right = check_claim(Snippet("SYNC999", "flag", 9, NUMPY_OF_DEVICE, raises="TypeError"), None, gpu=False)
    wrong = check_claim(Snippet("SYNC999", "flag", 10, NUMPY_OF_DEVICE, raises="ValueError"), None, gpu=False)
    silent = check_claim(Snippet("SYNC999", "flag", 11, "x = 1\n", raises="TypeError"), None, gpu=False)
    assert right.passed and right.raised == "TypeError" and right.expected == "raises TypeError"
    assert not wrong.passed and wrong.why == "expected raises ValueError, raised TypeError"
    assert not silent.passed and silent.why == "expected raises TypeError, raised nothing"


def test_collect_reads_raises_from_the_fence_info_string() -> None:
    from syncllint.harness.verify import collect

    raising = [s for s, _ in collect(("SYNC104",)) if s.raises]
    assert [(s.kind, s.raises) for s in raising] == [("flag", "TypeError")]
    assert "np.asarray(logits)" in raising[0].code


def test_same_results_compares_numpy_arrays_by_value() -> None:
    np = pytest.importorskip("numpy")
    assert same_results({"a": np.arange(8)}, {"a": np.arange(8)})[0] is True
    assert same_results({"a": np.arange(8)}, {"a": np.arange(1, 9)})[0] is False


def test_same_results_is_exact_for_integers_and_close_for_floats() -> None:
    assert same_results({"a": torch.tensor([1, 2])}, {"a": torch.tensor([1, 2])})[0] is True
    assert same_results({"a": torch.tensor([1, 2])}, {"a": torch.tensor([1, 3])})[0] is False
    assert same_results({"f": torch.tensor([1.0])}, {"f": torch.tensor([1.0 + 1e-9])})[0] is True
    assert same_results({"n": 3}, {"n": torch.tensor(3)})[0] is True
    assert same_results({"a": 1}, {"b": 1})[0] is None


def test_verify_command_in_emulation_says_so_first_and_passes_on_the_catalogue() -> None:
    result = CliRunner().invoke(verify, ["--emulate"])
    first = result.output.splitlines()[0]
    assert "CPU emulation" in first
    assert result.exit_code == 0, result.output


def test_verify_json_lists_every_claim() -> None:
    result = CliRunner().invoke(verify, ["--emulate", "--json", "--rule", "SYNC101"])
    report = json.loads(result.output)
    assert report["emulated"] is True and report["failed"] == 0
    assert {c["rule"] for c in report["claims"]} == {"SYNC101"}
    assert {c["kind"] for c in report["claims"]} >= {"flag", "ok"}


USER_TEST = """
import torch
from syncllint.runtime import sync_check

def test_step():
    with sync_check(mode="record", emulate=True):
        x = torch.arange(8, device="cuda")
    with sync_check(emulate=True):
        total = x.sum().item()
"""


def _fake_fixer(root: Path) -> tuple[bool, str]:
    target = root / "test_user.py"
    target.write_text(target.read_text().replace("total = x.sum().item()", "total = x.sum()"))
    return True, "fixed 1 finding"


def test_verify_fix_runs_the_command_before_and_after_on_copies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_user.py").write_text(USER_TEST)
    monkeypatch.setattr(fixrun, "apply_fixes", _fake_fixer)
    report = fixrun.verify_fix(project, [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_user.py"])
    assert report.changed == ["test_user.py"]
    assert report.before is not None and report.after is not None
    assert (report.before.syncs, report.after.syncs) == (1, 0), report.before.output_tail
    assert report.before.by_rule == {"SYNC101": 1}
    assert report.after.passed and report.ok
    assert "x.sum().item()" in (project / "test_user.py").read_text()  # the user's tree is untouched
