"""The pytest plugin, driven through pytester."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from syncllint.harness.fixrun import plugin_registered
from syncllint.runtime import sync_check

pytest_plugins = ["pytester"]
# Through the pytest11 entry point once installed; `-p` as well would register the module twice.
PLUGIN = () if plugin_registered() else ("-p", "syncllint.pytest_plugin")


def _import_lazy_torch_modules() -> None:
    """pytester's in-process runs drop modules first imported inside them; torch cannot import
    some of its own twice (operator registration), so the emulation's lazy imports happen here."""
    with sync_check(mode="record", emulate=True):
        x = torch.randn(4, device="cuda")
        x.sum().item()
        x.tolist()
        torch.where(x > 0, x, 0.0).mul_(2)


_import_lazy_torch_modules()

TESTS = """
import pytest
import torch

def test_syncs():
    x = torch.randn(4, device="cuda")
    assert x.sum().item() != 1234.5

def test_clean():
    x = torch.randn(4, device="cuda")
    y = torch.where(x > 0, x, 0.0).sum()

@pytest.mark.sync_free
def test_marked_syncs():
    x = torch.randn(4, device="cuda")
    x.tolist()

@pytest.mark.sync_free
def test_marked_clean():
    x = torch.randn(4, device="cuda")
    x.mul_(2)
"""


def test_error_mode_fails_the_syncing_tests_and_names_frame_and_rule(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=TESTS)
    result = pytester.runpytest(*PLUGIN, "--sync-check=error", "--sync-emulate")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(["*test_user.py:6: SYNC101 GPU->CPU sync (scalar read): item*"])
    result.stdout.fnmatch_lines(["*test_user.py:15: SYNC102 GPU->CPU sync (D2H): tolist*"])


def test_without_the_option_only_marked_tests_are_checked(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_user="""
import pytest
import torch
from syncllint.runtime import sync_check

def test_unmarked_syncs():
    with sync_check(mode="record", emulate=True):
        x = torch.randn(4, device="cuda")
    x.sum().item()  # not checked: the test is not marked

@pytest.mark.sync_free
def test_marked_syncs():
    with sync_check(mode="record", emulate=True):
        x = torch.randn(4, device="cuda")
    x.sum().item()
"""
    )
    result = pytester.runpytest(*PLUGIN, "--sync-emulate")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*test_user.py:14: SYNC101*"])


def test_record_mode_passes_and_reports_in_a_section(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=TESTS)
    result = pytester.runpytest(*PLUGIN, "--sync-check=record", "--sync-emulate", "-rA")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*1 GPU<->CPU sync(s) (record mode):*"])


def test_environment_variable_turns_checking_on(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYNCLLINT_SYNC_CHECK", "error")
    pytester.makepyfile(test_user=TESTS)
    result = pytester.runpytest(*PLUGIN, "--sync-emulate")
    result.assert_outcomes(passed=2, failed=2)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_error_mode_on_a_real_device(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=TESTS)
    result = pytester.runpytest(*PLUGIN, "--sync-check=error")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(["*test_user.py:6: SYNC101 GPU->CPU sync (scalar read): item*"])
