"""Run the engine over many files: reading, decoding, a process pool, stable order."""

from __future__ import annotations

import os
import stat
import tokenize
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

from syncllint.config import Settings
from syncllint.engine import FileResult, lint_source, parse_error
from syncllint.notebook import NOTEBOOK_SUFFIX, lint_notebook

# Below this many files a pool costs more to start than it saves.
_POOL_THRESHOLD = 16


@dataclass(frozen=True)
class SourceFile:
    """A file's text with what is needed to write it back byte for byte."""

    text: str
    encoding: str
    bom: bool


def decode_source(data: bytes) -> SourceFile:
    """Decode like Python does (BOM, PEP 263 cookie, else UTF-8); raise UnicodeDecodeError/SyntaxError."""
    bom = data.startswith(b"\xef\xbb\xbf")
    encoding, _ = tokenize.detect_encoding(BytesIO(data).readline)
    if encoding == "utf-8-sig":
        encoding = "utf-8"
    body = data[3:] if bom else data
    return SourceFile(body.decode(encoding), encoding, bom)


def lint_path(path: str, settings: Settings) -> FileResult:
    """One file's result. Bad input is a SYNC001 finding; a bug in syncllint is an internal_error."""
    try:
        return _lint_path(path, settings)
    except Exception as err:  # noqa: BLE001 - one broken file must not stop the run
        return FileResult(path, (), internal_error=f"{type(err).__name__}: {err}")


def _lint_path(path: str, settings: Settings) -> FileResult:
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            # A FIFO or device named *.py would block or never end.
            return FileResult(path, (parse_error(path, "cannot read file: not a regular file"),))
        data = Path(path).read_bytes()
    except OSError as err:
        return FileResult(path, (parse_error(path, f"cannot read file: {err.strerror or err}"),))
    if path.endswith(NOTEBOOK_SUFFIX):
        return lint_notebook(data, path, settings)
    try:
        source = decode_source(data)
    except (UnicodeDecodeError, SyntaxError, LookupError) as err:
        return FileResult(path, (parse_error(path, f"cannot decode file: {err}"),))
    if "\x00" in source.text:
        return FileResult(path, (parse_error(path, "source contains a NUL byte"),))
    return lint_source(source.text, path, settings)


def _lint_chunk(args: tuple[list[str], Settings]) -> list[FileResult]:
    paths, settings = args
    return [lint_path(p, settings) for p in paths]


def default_jobs() -> int:
    return os.cpu_count() or 1


def lint_files(paths: Iterable[Path], settings: Settings, jobs: int | None = None) -> list[FileResult]:
    """Lint every file; results sorted by path whatever the scheduling."""
    names = [str(p) for p in paths]
    workers = max(1, jobs or default_jobs())
    if workers == 1 or len(names) < _POOL_THRESHOLD:
        results = [lint_path(p, settings) for p in names]
    else:
        # Interleave by size so no worker gets all the big files; small chunks keep stragglers short.
        by_size = sorted(names, key=_size, reverse=True)
        chunks = [by_size[i : i + 4] for i in range(0, len(by_size), 4)]
        try:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                results = [r for chunk in pool.map(_lint_chunk, [(c, settings) for c in chunks]) for r in chunk]
        except BrokenProcessPool:
            results = _lint_after_a_crash(chunks, settings)
    return sorted(results, key=lambda r: r.filename)


def _lint_after_a_crash(chunks: list[list[str]], settings: Settings) -> list[FileResult]:
    """A worker died (a native crash, e.g. in the parser): find the file, keep the rest.

    Each chunk runs again in a pool of its own; only a chunk that crashes again is split into
    one process per file, so the run costs little more than once over.
    """
    results: list[FileResult] = []
    for chunk in chunks:
        try:
            with ProcessPoolExecutor(max_workers=1) as pool:
                results.extend(pool.submit(_lint_chunk, (chunk, settings)).result())
            continue
        except BrokenProcessPool:
            pass
        for path in chunk:
            try:
                with ProcessPoolExecutor(max_workers=1) as pool:
                    results.extend(pool.submit(_lint_chunk, ([path], settings)).result())
            except BrokenProcessPool:
                results.append(FileResult(path, (), internal_error="the worker process died while linting this file"))
    return results


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
