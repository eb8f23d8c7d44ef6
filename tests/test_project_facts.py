"""Fields a sibling module registers ``keep_on_cpu=True`` are host data for the linted module."""

from __future__ import annotations

from pathlib import Path

from syncllint.config import Settings
from syncllint.project_facts import with_project_facts
from tests.test_cli import run

PROCESSOR = 'FIELDS = dict(image_grid_thw=MultiModalFieldConfig.batched("image", keep_on_cpu=True))\n'
MODEL = "import torch\n\ndef embed(image_grid_thw: torch.Tensor):\n    return image_grid_thw.tolist()\n"


def test_a_sibling_registration_quiets_the_model(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "model.py").write_text(MODEL)
    assert run("check", "pkg/model.py", "--no-cache", cwd=tmp_path).returncode == 1
    (tmp_path / "pkg" / "processor.py").write_text(PROCESSOR)
    assert run("check", "pkg/model.py", "--no-cache", cwd=tmp_path).returncode == 0


def test_the_keys_are_part_of_the_cache_fingerprint(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "model.py").write_text(MODEL)
    (tmp_path / "pkg" / "processor.py").write_text(PROCESSOR)
    assert run("check", "pkg/model.py", cwd=tmp_path).returncode == 0
    # The registration goes away: the cached "clean" result of model.py must not be reused.
    (tmp_path / "pkg" / "processor.py").write_text("FIELDS = {}\n")
    assert run("check", "pkg/model.py", cwd=tmp_path).returncode == 1


def test_the_index_remembers_files_by_stat(tmp_path: Path) -> None:
    (tmp_path / "processor.py").write_text(PROCESSOR)
    cache = tmp_path / "cache"
    first = with_project_facts(Settings(), [tmp_path / "model.py"], cache)
    assert first.host_keys == ("image_grid_thw",) and (cache / "kept-on-host-v1.json").is_file()
    assert with_project_facts(Settings(), [tmp_path / "model.py"], cache) == first
