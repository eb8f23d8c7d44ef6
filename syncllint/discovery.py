"""Which files a run lints: directory walks honouring .gitignore and excludes."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from syncllint.config import Settings

if TYPE_CHECKING:
    import pathspec

LINTABLE_SUFFIXES = (".py", ".pyi", ".ipynb")


@dataclass(frozen=True)
class Discovered:
    files: tuple[Path, ...]
    missing: tuple[str, ...]  # explicit paths that do not exist
    unreadable: tuple[str, ...] = ()  # folders the walk could not list ("path: reason")


def _matches_exclude(path: Path, root: Path, patterns: tuple[str, ...]) -> bool:
    """ruff-like exclusion: a pattern matches the basename, or the path relative to the root."""
    name = path.name
    try:
        relative = path.relative_to(root).as_posix()
    except ValueError:
        relative = path.as_posix()
    absolute = path.as_posix()
    if not patterns:
        return False
    matches = _exclude_regex(patterns).match
    return bool(matches(name) or matches(relative) or matches(absolute))


@lru_cache(maxsize=16)
def _exclude_regex(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """All patterns as one regex: the same answers as ``fnmatchcase`` per pattern, one match call."""
    return re.compile("|".join(f"(?:{fnmatch.translate(p.rstrip('/'))})" for p in patterns))


def _excluded_with_ancestors(path: Path, root: Path, patterns: tuple[str, ...]) -> bool:
    """For paths given explicitly with --force-exclude: any excluded ancestor excludes them."""
    return any(_matches_exclude(p, root, patterns) for p in (path, *path.parents))


class _GitIgnores:
    """The .gitignore files seen on the way down, each applying to its own folder."""

    def __init__(self) -> None:
        self._specs: dict[Path, pathspec.GitIgnoreSpec] = {}

    def load(self, folder: Path) -> None:
        ignore_file = folder / ".gitignore"
        if folder not in self._specs and ignore_file.is_file():
            try:
                lines = ignore_file.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                return
            import pathspec  # only where a .gitignore exists: it costs ~35 ms to import

            self._specs[folder] = pathspec.GitIgnoreSpec.from_lines(lines)

    def ignored(self, path: Path, is_dir: bool) -> bool:
        for folder, spec in self._specs.items():
            try:
                relative = path.relative_to(folder).as_posix()
            except ValueError:
                continue
            if spec.match_file(relative + ("/" if is_dir else "")):
                return True
        return False


def _git_root(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _identity(path: Path) -> Path:
    """The key that de-duplicates a file reached twice; symlink loops resolve to themselves."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: symlink loop on Python < 3.13
        return Path(os.path.abspath(path))


def discover(paths: list[str], settings: Settings, force_exclude: bool) -> Discovered:
    root = Path(settings.project_root)
    excludes = settings.exclude + settings.extend_exclude
    files: list[Path] = []
    missing: list[str] = []
    seen: set[Path] = set()
    unreadable: list[str] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            missing.append(raw)
            continue
        if path.is_file():
            key = _identity(path)
            if force_exclude and _excluded_with_ancestors(key, root, excludes):
                continue
            if key not in seen:
                seen.add(key)
                files.append(path)
            continue
        for found in _walk(path, root, excludes, settings.respect_gitignore, unreadable):
            key = _identity(found)
            if key not in seen:
                seen.add(key)
                files.append(found)
    return Discovered(tuple(files), tuple(missing), tuple(unreadable))


def _walk(
    top: Path, root: Path, excludes: tuple[str, ...], respect_gitignore: bool, unreadable: list[str]
) -> Iterator[Path]:
    gitignores = _GitIgnores()
    if respect_gitignore:
        git_root = _git_root(top.resolve())
        if git_root is not None:
            # .gitignore files above the walked folder apply too.
            for folder in (top.resolve(), *top.resolve().parents):
                gitignores.load(folder)
                if folder == git_root:
                    break
    for dirpath, dirnames, filenames in os.walk(
        top, followlinks=False, onerror=lambda err: unreadable.append(f"{err.filename}: {err.strerror or err}")
    ):
        folder = Path(dirpath)
        resolved_folder = folder.resolve()
        if respect_gitignore:
            gitignores.load(resolved_folder)
        kept = []
        for d in sorted(dirnames):
            child = resolved_folder / d
            if _matches_exclude(child, root, excludes):
                continue
            if respect_gitignore and gitignores.ignored(child, is_dir=True):
                continue
            kept.append(d)
        dirnames[:] = kept
        for f in sorted(filenames):
            if not f.endswith(LINTABLE_SUFFIXES):
                continue
            child = resolved_folder / f
            if _matches_exclude(child, root, excludes):
                continue
            if respect_gitignore and gitignores.ignored(child, is_dir=False):
                continue
            if not os.path.isfile(folder / f):
                continue  # dangling symlinks, symlink loops, FIFOs: nothing to lint
            yield folder / f
