"""`[tool.syncllint]`: discovery, validation (one clear line, exit 2) and effect."""

from __future__ import annotations

from pathlib import Path

import pytest

from syncllint.config import (
    ConfigError,
    Settings,
    find_config,
    load_config_file,
    resolve_settings,
)
from syncllint.diagnostics import Confidence
from tests.test_cli import SYNCING, run


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_nearest_pyproject_with_table_wins(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.syncllint]\nignore = ['SYNC102']\n")
    write(tmp_path / "sub" / "pyproject.toml", "[project]\nname = 'x'\n")  # no table: skipped
    assert find_config(tmp_path / "sub") == tmp_path / "pyproject.toml"
    write(tmp_path / "sub" / "syncllint.toml", "ignore = ['SYNC101']\n")
    assert find_config(tmp_path / "sub") == tmp_path / "sub" / "syncllint.toml"
    assert load_config_file(tmp_path / "sub" / "syncllint.toml").ignore == ("SYNC101",)


def test_values_are_read(tmp_path: Path) -> None:
    path = write(
        tmp_path / "pyproject.toml",
        "[tool.syncllint]\n"
        "select = ['SYNC1']\nextend-select = ['SYNC201']\nmin-confidence = 'high'\n"
        "host-suffixes = ['_h']\nallowed-contexts = ['allow_sync']\n"
        "per-file-ignores = { 'tests/*' = ['SYNC101'] }\n",
    )
    settings = load_config_file(path)
    assert settings.select == ("SYNC1",)
    assert settings.extend_select == ("SYNC201",)
    assert settings.min_confidence is Confidence.HIGH
    assert settings.host_suffixes == ("_h",)
    assert settings.allowed_contexts == ("allow_sync",)
    assert settings.per_file_ignores == (("tests/*", ("SYNC101",)),)
    assert settings.project_root == str(tmp_path.resolve())


def test_preset_vllm(tmp_path: Path) -> None:
    settings = load_config_file(write(tmp_path / "pyproject.toml", "[tool.syncllint]\npreset = 'vllm'\n"))
    assert settings.h2d_helper == "vllm.utils.torch_utils:async_tensor_h2d"
    assert "vllm.utils.gpu_sync_debug.gpu_sync_allowed" in settings.allowed_contexts


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ("selec = ['SYNC1']", "unknown key `selec`"),
        ("select = 'SYNC1'", "`select` must be a list of strings"),
        ("select = ['NOPE1']", "unknown rule selector `NOPE1`"),
        ("min-confidence = 'sure'", "`min-confidence`"),
        ("preset = 'sglang2'", "`preset` must be one of"),
        ("respect-gitignore = 'yes'", "`respect-gitignore`"),
        ("per-file-ignores = ['a']", "`per-file-ignores`"),
    ],
)
def test_bad_values_name_key_and_file(tmp_path: Path, table: str, expected: str) -> None:
    path = write(tmp_path / "pyproject.toml", f"[tool.syncllint]\n{table}\n")
    with pytest.raises(ConfigError, match="pyproject.toml") as info:
        load_config_file(path)
    assert expected in str(info.value)
    write(tmp_path / "a.py", "x = 1\n")
    result = run("check", "a.py", cwd=tmp_path)
    assert result.returncode == 2
    assert expected in result.stderr and "pyproject.toml" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_invalid_toml_is_one_line(tmp_path: Path) -> None:
    write(tmp_path / "syncllint.toml", "select = [\n")
    write(tmp_path / "a.py", "x = 1\n")
    result = run("check", "a.py", cwd=tmp_path)
    assert result.returncode == 2 and "invalid TOML" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_config_flag_and_isolated(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.syncllint]\nignore = ['SYNC101']\n")
    write(tmp_path / "other.toml", "[tool.syncllint]\nselect = ['SYNC2']\n")
    write(tmp_path / "a.py", SYNCING)
    assert run("check", "a.py", cwd=tmp_path).returncode == 0
    assert run("check", "a.py", "--isolated", cwd=tmp_path).returncode == 1
    assert run("check", "a.py", "--config", "other.toml", cwd=tmp_path).returncode == 0
    missing = run("check", "a.py", "--config", "absent.toml", cwd=tmp_path)
    assert missing.returncode == 2 and "absent.toml" in missing.stderr


def test_per_file_ignores_apply(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.syncllint]\nper-file-ignores = { 'tests/*' = ['SYNC1'] }\n")
    write(tmp_path / "tests" / "t.py", SYNCING)
    write(tmp_path / "src.py", SYNCING)
    out = run("check", cwd=tmp_path).stdout
    assert "src.py" in out and "t.py" not in out


def test_defaults_without_config(tmp_path: Path) -> None:
    settings = resolve_settings(None, isolated=False, search_from=tmp_path)
    assert settings == Settings()


def exit_codes_around(tmp_path: Path, path: str, source: str, setting: str) -> tuple[int, int]:
    """``syncllint check path`` without, then with ``setting`` in ``[tool.syncllint]``."""
    write(tmp_path / path, source)
    before = run("check", path, cwd=tmp_path).returncode
    write(tmp_path / "pyproject.toml", f"[tool.syncllint]\n{setting}\n")
    return before, run("check", path, cwd=tmp_path).returncode


@pytest.mark.parametrize(
    ("setting", "source"),
    [
        ("host-suffixes = ['_mirror']", "import torch\n\ndef f(lens_mirror):\n    return lens_mirror.item()\n"),
        ("host-names = ['lens']", "import torch\n\ndef f(lens: torch.Tensor):\n    return lens.sum().item()\n"),
        ("host-functions = ['build_*']", "import torch\n\ndef build_meta(t: torch.Tensor):\n    return t.sum().item()\n"),
        ("host-modules = ['*/ingest/*']", "import torch\n\ndef f(t: torch.Tensor):\n    return t.sum().item()\n"),
    ],
)
def test_host_code_settings_quiet_unknown_tensors(tmp_path: Path, setting: str, source: str) -> None:
    assert exit_codes_around(tmp_path, "pkg/ingest/a.py", source, setting) == (1, 0)


def test_output_functions_stay_device_code_in_host_modules(tmp_path: Path) -> None:
    source = "import torch\n\ndef read_outputs(t: torch.Tensor):\n    return t.sum().item()\n"
    assert exit_codes_around(tmp_path, "image_processing_x.py", source, "output-functions = ['read_*']") == (0, 1)
