"""What files near the linted ones register as kept on the host (vLLM's ``keep_on_cpu=True``).

A model often reads fields that a processor in a sibling module registers (``qwen3_vl.py`` uses
``qwen2_vl.py``'s processor; ``minimax_m3/nvidia/model.py`` reads ``minimax_m3/common``'s). The
``.py`` files of each linted file's folder, and inside a package those of its parent's
subfolders, are searched once per run, before the cache is opened: the keys found are part of the
settings, so a registration that changes invalidates the cached results that could depend on it.
With a cache folder, each file's keys are remembered by (mtime, size), so a warm run only stats.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from syncllint.analysis.conventions import kept_on_host
from syncllint.cache import source_digest
from syncllint.config import Settings
from syncllint.project.store import read_json, write_json

_INDEX = "kept-on-host-v2.json"


def with_project_facts(settings: Settings, files: Iterable[Path], cache_dir: Path | None = None) -> Settings:
    index = _load(cache_dir)
    changed = False
    keys: set[str] = set()
    for path in _neighbour_files(files):
        try:
            info = path.stat()
        except OSError:
            continue
        stamp = [info.st_mtime_ns, info.st_size]
        known = index.get(str(path))
        if known is None or known[:2] != stamp:
            try:
                data = path.read_bytes()
            except OSError:
                continue
            found = sorted(kept_on_host(data.decode("utf-8", "replace"))) if b"keep_on_cpu" in data else []
            index[str(path)] = [*stamp, found]
            changed = True
        keys.update(index[str(path)][2])
    if changed and cache_dir is not None:
        _save(cache_dir, index)
    return replace(settings, host_keys=tuple(sorted(keys))) if keys else settings


def _neighbour_files(files: Iterable[Path]) -> list[Path]:
    folders: set[Path] = set()
    for folder in {Path(name).resolve().parent for name in files}:
        folders.add(folder)
        if (folder.parent / "__init__.py").is_file():  # inside a package: its sibling folders too
            try:
                folders.update(sub for sub in folder.parent.iterdir() if sub.is_dir())
            except OSError:
                pass
    return [path for folder in sorted(folders) for path in sorted(folder.glob("*.py"))]


def _load(cache_dir: Path | None) -> dict[str, list]:  # type: ignore[type-arg]
    """The keys found by this syncllint (a changed reading of registrations reads every file again)."""
    loaded = read_json(cache_dir / _INDEX) if cache_dir is not None else None
    if not isinstance(loaded, dict) or loaded.get("syncllint") != source_digest():
        return {}
    files = loaded.get("files")
    return files if isinstance(files, dict) else {}


def _save(cache_dir: Path, index: dict[str, list]) -> None:  # type: ignore[type-arg]
    write_json(cache_dir / _INDEX, {"syncllint": source_digest(), "files": index})
