"""A content-hash cache of per-file results under ``.syncllint_cache/``.

An entry is keyed by the file's path and bytes and by the run's fingerprint: the tool version,
a digest of syncllint's own sources (so an edited or added rule invalidates everything), the
libcst version, the Python version and the effective settings. A hit costs a read and a hash of
the file and no libcst import; a file without findings is an empty entry, so its hit is one
``stat``. Entries are JSON (never pickle: linting a checkout must not run code from it) and are
written atomically (a temporary file, then ``os.replace``), so concurrent runs are safe.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import os
import sys
import tempfile
import types
import typing
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from syncllint import __version__
from syncllint.config import Settings
from syncllint.diagnostics import Diagnostic

CACHE_DIR_NAME = ".syncllint_cache"
_LAYOUT = "v1"
_TAG = "CACHEDIR.TAG"
_TAG_TEXT = "Signature: 8a477f597d28d172789f06886806bc55\n# syncllint's cache; `syncllint clean` removes it.\n"


@dataclass(frozen=True)
class Cache:
    """Where entries live for one fingerprint; picklable, so workers store their own results."""

    directory: Path  # the cache root, e.g. <project>/.syncllint_cache
    fingerprint: str

    @property
    def _entries(self) -> Path:
        return self.directory / _LAYOUT / self.fingerprint

    def key(self, path: str, data: bytes, linked: bytes = b"") -> str:
        # The absolute path: per-file settings depend on it, and `a.py` and `./a.py` share entries.
        # ``linked``: the digest of what other modules say about this one (its project facts).
        digest = hashlib.blake2b(data, digest_size=20)
        digest.update(b"\0" + os.path.abspath(path).encode("utf-8", "surrogateescape") + b"\0" + linked)
        return digest.hexdigest()

    def _entry(self, key: str) -> Path:
        return self._entries / key[:2] / key

    def load(self, key: str, filename: str) -> tuple[Diagnostic, ...] | None:
        """The cached diagnostics, named ``filename`` as this run spells it; None on a miss."""
        entry = self._entry(key)
        try:
            if entry.stat().st_size == 0:
                return ()
            found = tuple(_decode(Diagnostic, item) for item in json.loads(entry.read_bytes()))
        except (OSError, ValueError, TypeError, KeyError, AttributeError, StopIteration):
            return None
        return tuple(d if d.filename == filename else dataclasses.replace(d, filename=filename) for d in found)

    def store(self, key: str, diagnostics: tuple[Diagnostic, ...]) -> None:
        entry = self._entry(key)
        payload = json.dumps([_encode(d) for d in diagnostics]).encode() if diagnostics else b""
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            fd, temporary = tempfile.mkstemp(dir=entry.parent, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(payload)
                os.replace(temporary, entry)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError:
            pass  # a read-only or full disk costs speed, not results


def open_cache(directory: Path, settings: Settings) -> Cache:
    """The cache for this run, creating the folder (with its ``.gitignore``) when needed."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for name, text in ((".gitignore", "# Created by syncllint.\n*\n"), (_TAG, _TAG_TEXT)):
            marker = directory / name
            if not marker.exists():
                marker.write_text(text, encoding="utf-8")
    except OSError:
        pass
    return Cache(directory, run_fingerprint(settings))


def default_cache_dir(settings: Settings) -> Path:
    return Path(settings.project_root) / CACHE_DIR_NAME


def run_fingerprint(settings: Settings) -> str:
    digest = hashlib.blake2b(digest_size=12)
    for part in (__version__, source_digest(), _libcst_version(), sys.version.split()[0], repr(settings)):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


@lru_cache(maxsize=1)
def source_digest() -> str:
    """A digest of syncllint's own modules: any change to a rule or the engine is a new version."""
    root = Path(__file__).resolve().parent
    digest = hashlib.blake2b(digest_size=16)
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


@lru_cache(maxsize=1)
def _libcst_version() -> str:
    import importlib.util

    spec = importlib.util.find_spec("libcst")  # finds the package without importing it
    if spec is None or spec.origin is None:
        return "?"
    try:
        return (Path(spec.origin).parent / "_version.py").read_text(encoding="utf-8")
    except OSError:
        return "?"


def clean(directory: Path) -> bool:
    """Remove a syncllint cache folder; False when there is none (a folder without our tag is kept)."""
    import shutil

    if not (directory / _TAG).is_file():
        return False
    shutil.rmtree(directory, ignore_errors=True)
    return True


# -- JSON for frozen dataclasses -------------------------------------------------------------------


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (tuple, list)):
        return [_encode(v) for v in value]
    return value


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _decode(kind: Any, raw: Any) -> Any:
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(kind)
        if raw is None and type(None) in options:
            return None
        return _decode(next(o for o in options if o is not type(None)), raw)
    if origin is tuple:
        args = typing.get_args(kind)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], item) for item in raw)
        return tuple(_decode(a, item) for a, item in zip(args, raw))
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        hints = _hints(kind)
        return kind(**{f.name: _decode(hints[f.name], raw[f.name]) for f in dataclasses.fields(kind) if f.name in raw})
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return kind(raw)
    return raw
