"""Fields a sibling module registers ``keep_on_cpu=True`` are host data for the linted module."""

from __future__ import annotations

from pathlib import Path

import pytest

from syncllint import project_facts
from syncllint.analysis.conventions import kept_on_host, registered_on_device
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


def test_the_model_s_own_registration_on_the_device_beats_a_sibling_s_on_the_host(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "processor.py").write_text(PROCESSOR)
    own = 'FIELDS = dict(\n    image_grid_thw=MultiModalFieldConfig.batched("image"),\n)\n'
    (tmp_path / "pkg" / "model.py").write_text(own + MODEL)
    assert run("check", "pkg/model.py", "--no-cache", cwd=tmp_path).returncode == 1
    assert registered_on_device(own, kept_on_host(own)) == {"image_grid_thw"}
    assert registered_on_device(PROCESSOR, kept_on_host(PROCESSOR)) == frozenset()


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
    assert first.host_keys == ("image_grid_thw",) and (cache / "kept-on-host-v2.json").is_file()
    assert with_project_facts(Settings(), [tmp_path / "model.py"], cache) == first


def test_a_reading_by_another_syncllint_is_not_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "processor.py").write_text(PROCESSOR)
    cache = tmp_path / "cache"
    with_project_facts(Settings(), [tmp_path / "model.py"], cache)
    # Another syncllint read the registrations differently: the file is read again, not trusted.
    monkeypatch.setattr(project_facts, "source_digest", lambda: "another syncllint")
    monkeypatch.setattr(project_facts, "kept_on_host", lambda source: frozenset({"other_field"}))
    assert with_project_facts(Settings(), [tmp_path / "model.py"], cache).host_keys == ("other_field",)


def test_subscript_and_loop_registrations_are_read() -> None:
    source = """
    fields["video_modalities"] = MultiModalFieldConfig.flat_from_sizes("video", counts, keep_on_cpu=True)
    fields['audio_lengths'] = MultiModalFieldConfig.batched("audio", keep_on_cpu=True)
    fields["pixel_values"] = MultiModalFieldConfig.flat_from_sizes("image", sizes)
    for key in ("video_frame_counts", "video_audio_counts"):
        fields[key] = MultiModalFieldConfig.batched("video", keep_on_cpu=True)
    mm_fields[SIZE_KEYS[modality]] = MultiModalFieldConfig.batched(modality, keep_on_cpu=True)
    """
    assert kept_on_host(source) == {"video_modalities", "audio_lengths", "video_frame_counts", "video_audio_counts"}
