"""Run the engine over many files: reading, decoding, a process pool, stable order."""

from __future__ import annotations

import os
import stat
import tokenize
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from typing import Protocol, TypeVar

from syncllint.cache import Cache
from syncllint.config import Settings
from syncllint.project.facts import NO_LINKED_FACTS, LinkedFacts
from syncllint.results import FileResult, parse_error

_Task = TypeVar("_Task")
_Result = TypeVar("_Result")

# Below this much source (a few dozen typical files) one process is used. Measured on the shared
# 2-core machine under load (benchmarks/README.md, "pool threshold"): a 2-worker pool lost to one
# process at every size tried up to 384 KB, since forking, feeding the workers and importing
# libcst in each costs ~0.1-0.3 s and a busy machine gives a pool no spare core; on an idle
# machine the break-even is lower, but the most a pool saves below 256 KB is ~0.2 s.
POOL_MIN_BYTES = 256_000


class Progress(Protocol):
    def start(self, files: int, total_bytes: int) -> None: ...
    def advance(self, files: int, done_bytes: int) -> None: ...
    def stop(self) -> None: ...


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


def lint_path(path: str, settings: Settings, cache: Cache | None = None, linked: LinkedFacts = NO_LINKED_FACTS) -> FileResult:
    """One file's result. Bad input is a SYNC001 finding; a bug in syncllint is an internal_error."""
    try:
        return _lint_path(path, settings, cache, linked)
    except Exception as err:  # noqa: BLE001 - one broken file must not stop the run
        return FileResult(path, (), internal_error=f"{type(err).__name__}: {err}")


def _lint_path(path: str, settings: Settings, cache: Cache | None, linked: LinkedFacts) -> FileResult:
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            # A FIFO or device named *.py would block or never end.
            return FileResult(path, (parse_error(path, "cannot read file: not a regular file"),))
        data = Path(path).read_bytes()
    except OSError as err:
        return FileResult(path, (parse_error(path, f"cannot read file: {err.strerror or err}"),))
    except RuntimeError as err:  # Python < 3.13 reports symlink loops this way
        return FileResult(path, (parse_error(path, f"cannot read file: {err}"),))
    if cache is None:
        return lint_bytes(data, path, settings, linked)
    key = cache.key(path, data, linked.digest())
    cached = cache.load(key, path)
    if cached is not None:
        return FileResult(path, cached)
    result = lint_bytes(data, path, settings, linked)
    if result.internal_error is None:
        cache.store(key, result.diagnostics)
    return result


def lint_bytes(data: bytes, path: str, settings: Settings, linked: LinkedFacts = NO_LINKED_FACTS) -> FileResult:
    # libcst is imported only when a file needs linting (cache hits never load it).
    from syncllint.engine import lint_source
    from syncllint.notebook import NOTEBOOK_SUFFIX, lint_notebook

    if path.endswith(NOTEBOOK_SUFFIX):
        return lint_notebook(data, path, settings)
    try:
        source = decode_source(data)
    except (UnicodeDecodeError, SyntaxError, LookupError) as err:
        return FileResult(path, (parse_error(path, f"cannot decode file: {err}"),))
    if "\x00" in source.text:
        return FileResult(path, (parse_error(path, "source contains a NUL byte"),))
    return lint_source(source.text, path, settings, linked=linked)


def _cached(path: str, cache: Cache, linked: LinkedFacts) -> FileResult | None:
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    found = cache.load(cache.key(path, data, linked.digest()), path)
    return None if found is None else FileResult(path, found)


def _lint_chunk(args: tuple[list[str], Settings, Cache | None, dict[str, LinkedFacts]]) -> list[FileResult]:
    paths, settings, cache, linked = args
    return [lint_path(p, settings, cache, linked.get(p, NO_LINKED_FACTS)) for p in paths]


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def lint_files(
    paths: Iterable[Path],
    settings: Settings,
    jobs: int | None = None,
    cache: Cache | None = None,
    progress: Progress | None = None,
    linked: Mapping[str, LinkedFacts] | None = None,
) -> list[FileResult]:
    """Lint every file; results sorted by path whatever the scheduling.

    With a cache, hits are answered here first; only misses reach the engine (and the pool).
    ``linked``: what the project index says about each file (by the path as given).
    """
    names = [str(p) for p in paths]
    linked = linked or {}
    results: list[FileResult] = []
    if cache is not None:
        misses = []
        for name in names:
            hit = _cached(name, cache, linked.get(name, NO_LINKED_FACTS))
            if hit is None:
                misses.append(name)
            else:
                results.append(hit)
        names = misses
    sizes = {name: _size(name) for name in names}
    workers = min(max(1, jobs or default_jobs()), len(names))
    if progress is not None:
        progress.start(len(names), sum(sizes.values()))
    if workers <= 1 or sum(sizes.values()) < POOL_MIN_BYTES:
        for name in names:
            results.append(lint_path(name, settings, cache, linked.get(name, NO_LINKED_FACTS)))
            if progress is not None:
                progress.advance(1, sizes[name])
    else:
        from concurrent.futures import ProcessPoolExecutor, as_completed

        chunks = _chunks(names, sizes, workers)
        try:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                futures = {
                    pool.submit(_lint_chunk, (chunk, settings, cache, _facts_of(chunk, linked))): chunk for chunk in chunks
                }
                for future in as_completed(futures):
                    results.extend(future.result())
                    if progress is not None:
                        progress.advance(len(futures[future]), sum(sizes[n] for n in futures[future]))
        except BrokenProcessPool:
            done = {r.filename for r in results}
            left = [[n for n in c if n not in done] for c in chunks]
            results.extend(_lint_after_a_crash(left, settings, cache, linked))
    if progress is not None:
        progress.stop()
    return sorted(results, key=lambda r: r.filename)


def _chunks(names: list[str], sizes: dict[str, int], workers: int) -> list[list[str]]:
    """Biggest files first, in chunks of about 1/(16 * workers) of the bytes: the big files start
    early, and the last chunks are small, so no worker is left alone with a long tail."""
    ordered = sorted(names, key=lambda n: (-sizes[n], n))
    target = max(1, sum(sizes.values()) // (16 * workers))
    chunks: list[list[str]] = []
    current: list[str] = []
    weight = 0
    for name in ordered:
        current.append(name)
        weight += sizes[name]
        if weight >= target or len(current) >= 32:
            chunks.append(current)
            current, weight = [], 0
    if current:
        chunks.append(current)
    return chunks


def _lint_after_a_crash(
    chunks: list[list[str]], settings: Settings, cache: Cache | None, linked: Mapping[str, LinkedFacts]
) -> list[FileResult]:
    return rerun_after_a_crash(
        chunks,
        lambda names: (names, settings, cache, _facts_of(names, linked)),
        _lint_chunk,
        lambda path: FileResult(path, (), internal_error="the worker process died while linting this file"),
    )


def rerun_after_a_crash(
    chunks: list[list[str]],
    task_of: Callable[[list[str]], _Task],
    work: Callable[[_Task], list[_Result]],
    lost: Callable[[str], _Result],
) -> list[_Result]:
    """A worker died (a native crash, e.g. in the parser): find the file, keep the rest.

    Each chunk runs again in a pool of its own; only a chunk that crashes again is split into
    one process per file, so the run costs little more than once over. ``work`` (a module-level
    function, sent to the worker) runs ``task_of(paths)``; ``lost(path)`` stands for a file whose
    worker died alone. Shared by ``check`` and ``check --fix``.
    """
    results: list[_Result] = []
    for chunk in filter(None, chunks):
        whole = _in_own_worker(work, task_of(chunk))
        if whole is not None:
            results.extend(whole)
            continue
        for path in chunk:
            results.extend(_in_own_worker(work, task_of([path])) or [lost(path)])
    return results


def _in_own_worker(work: Callable[[_Task], list[_Result]], task: _Task) -> list[_Result] | None:
    """What ``work(task)`` gives in a process of its own, or None if that process died."""
    from concurrent.futures import ProcessPoolExecutor

    try:
        with ProcessPoolExecutor(max_workers=1) as pool:
            return pool.submit(work, task).result()
    except BrokenProcessPool:
        return None


def _facts_of(names: list[str], linked: Mapping[str, LinkedFacts]) -> dict[str, LinkedFacts]:
    """Only the chunk's own facts travel to its worker."""
    return {name: linked[name] for name in names if name in linked}


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
