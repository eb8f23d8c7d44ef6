"""pytest plugin: run tests under ``syncllint.runtime.sync_check``.

``pytest --sync-check=error|warn|record [--sync-emulate]`` checks every test;
``@pytest.mark.sync_free`` checks only marked tests (mode "error") when ``--sync-check`` is not
given. ``SYNCLLINT_SYNC_CHECK=<mode>`` in the environment acts as ``--sync-check=<mode>``
(``syncllint verify --fix`` uses it with "record"). A failing test names the user frame that
synced and the rule code.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

MODES = ("error", "warn", "record")
_REPORT_KEY = pytest.StashKey[Any]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("syncllint", "GPU<->CPU sync checks (syncllint)")
    group.addoption("--sync-check", choices=MODES, default=None, help="Check every test for GPU<->CPU syncs.")
    group.addoption("--sync-emulate", action="store_true", default=False, help="Emulate CUDA on the CPU (default without a GPU).")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "sync_free: the test must make no GPU<->CPU sync (checked by syncllint)")


def _mode_for(item: pytest.Item) -> str | None:
    from syncllint.runtime.check import env_mode

    option = item.config.getoption("--sync-check")
    if option:
        return str(option)
    from_env = env_mode()
    if from_env == "off":
        return None
    if from_env is not None:
        return from_env
    return "error" if item.get_closest_marker("sync_free") is not None else None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    mode = _mode_for(item)
    if mode is None:
        yield
        return
    from syncllint.runtime import sync_check

    emulate = True if item.config.getoption("--sync-emulate") else None
    with sync_check(mode=mode, emulate=emulate) as report:
        item.stash[_REPORT_KEY] = report
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report = item.stash.get(_REPORT_KEY, None)
    if call.when != "call" or report is None:
        return
    test_report = outcome.get_result()
    violations = report.violations
    if violations:
        lines = "\n".join(event.describe() for event in violations)
        test_report.sections.append(("syncllint", f"{len(violations)} GPU<->CPU sync(s) ({report.mode} mode):\n{lines}"))
