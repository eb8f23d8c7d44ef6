"""The project index on disk: module summaries by (mtime, size), and the last run's linked facts.

Both are JSON in the cache folder (never pickle: linting a checkout must not run code from it),
written atomically. Without a cache folder every run reads the project again.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from syncllint.cache import source_digest
from syncllint.project.facts import LinkedFacts, ModuleFacts, module_name
from syncllint.project.records import FileSummary, SummaryOptions
from syncllint.project.summary import summarize
from syncllint.project.wire import decode_call, encode_call, encode_summary

# The layout; the summaries' names also carry a digest of syncllint's sources, so a change to how
# a module is read never reuses what an older reading stored.
_SUMMARIES = "project-summaries-v11"
_FACTS = "project-facts-v11.json"
# Below this many files to read, one process: a pool costs more to start than it saves.
_POOL_MIN_FILES = 400

Entry = list[Any]  # [mtime_ns, size, encoded summary or None (the file does not parse)]


def file_stamps(paths: Iterable[Path]) -> dict[str, list[int]]:
    stamps: dict[str, list[int]] = {}
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            continue
        stamps[str(path)] = [info.st_mtime_ns, info.st_size]
    return stamps


def stamps_fingerprint(stamps: dict[str, list[int]], options: SummaryOptions) -> str:
    digest = hashlib.blake2b(repr((_SUMMARIES, source_digest(), options)).encode(), digest_size=16)
    for path in sorted(stamps):
        digest.update(f"{path}\0{stamps[path][0]}\0{stamps[path][1]}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def summarize_files(
    stale: list[tuple[str, list[int]]], options: SummaryOptions, jobs: int | None
) -> list[tuple[str, Entry, FileSummary | None]]:
    """Per path: the entry to store (the exported summary) and the whole summary, for this run."""
    workers = max(1, jobs or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))
    if workers == 1 or len(stale) < _POOL_MIN_FILES:
        return _summarize_chunk((stale, options))
    from concurrent.futures import ProcessPoolExecutor

    chunks = [(stale[i : i + 64], options) for i in range(0, len(stale), 64)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return [entry for part in pool.map(_summarize_chunk, chunks) for entry in part]


def _summarize_chunk(
    args: tuple[list[tuple[str, list[int]]], SummaryOptions],
) -> list[tuple[str, Entry, FileSummary | None]]:
    stale, options = args
    found: list[tuple[str, Entry, FileSummary | None]] = []
    collecting = gc.isenabled()
    gc.disable()  # many small objects that all live on: the collector would rescan them for nothing
    try:
        for path, stamp in stale:
            try:
                source = Path(path).read_bytes()
            except OSError:
                continue
            module, is_package = module_name(Path(path))
            summary = summarize(source, module, is_package, options, path)
            found.append((path, [*stamp, encode_summary(summary.exported()) if summary else None], summary))
    finally:
        if collecting:
            gc.enable()
    return found


def load_summaries(cache_dir: Path | None, options: SummaryOptions) -> dict[str, Entry]:
    loaded = read_json(cache_dir / _summaries_name(options)) if cache_dir is not None else None
    return loaded if isinstance(loaded, dict) else {}


def save_summaries(cache_dir: Path, options: SummaryOptions, stored: dict[str, Entry]) -> None:
    name = _summaries_name(options)
    write_json(cache_dir / name, stored)
    for older in cache_dir.glob(_SUMMARIES.rsplit("-", 1)[0] + "-*.json"):
        if older.name != name:  # an older syncllint's reading (or other settings): a few MB each
            older.unlink(missing_ok=True)


def load_facts(cache_dir: Path | None, fingerprint: str) -> dict[str, LinkedFacts]:
    """The facts the last run saved, if the project's files are as that run found them."""
    loaded = read_json(cache_dir / _FACTS) if cache_dir is not None else None
    if not isinstance(loaded, dict) or loaded.get("fingerprint") != fingerprint:
        return {}
    try:
        return {path: _decode_facts(value) for path, value in loaded["facts"].items()}
    except (TypeError, ValueError, KeyError):
        return {}


def save_facts(cache_dir: Path, fingerprint: str, facts: dict[str, LinkedFacts]) -> None:
    write_json(cache_dir / _FACTS, {"fingerprint": fingerprint, "facts": {p: _encode_facts(f) for p, f in facts.items()}})


def _encode_facts(facts: LinkedFacts) -> list[Any]:
    return [
        [list(pair) for pair in facts.returns],
        [[key, None if calls is None else [encode_call(c) for c in calls]] for key, calls in facts.outside_calls],
        list(facts.host_attributes),
        list(facts.allowed_callees),
        [[name, None if calls is None else [encode_call(c) for c in calls]] for name, calls in facts.method_calls],
        None if facts.module is None else [
            [list(pair) for pair in facts.module.returns],
            [[key, [list(pair) for pair in params]] for key, params in facts.module.filled],
            [[key, list(followed)] for key, followed in facts.module.follows],
            [[key, list(places)] for key, places in facts.module.elements],
        ],
        [[key, list(places)] for key, places in facts.elements],
        facts.accelerator_default,
    ]


def _decode_facts(value: list[Any]) -> LinkedFacts:
    returns, outside, attributes, allowed_callees, method_calls, module, elements, accelerator = value
    return LinkedFacts(
        tuple((key, place) for key, place in returns),
        tuple((key, None if calls is None else tuple(decode_call(c) for c in calls)) for key, calls in outside),
        tuple(attributes),
        tuple(allowed_callees),
        tuple((name, None if calls is None else tuple(decode_call(c) for c in calls)) for name, calls in method_calls),
        module=None if module is None else ModuleFacts(
            tuple((key, place) for key, place in module[0]),
            tuple((key, tuple((name, place) for name, place in params)) for key, params in module[1]),
            tuple((key, (parameter, position)) for key, (parameter, position) in module[2]),
            tuple((key, tuple(places)) for key, places in module[3]),
        ),
        elements=tuple((key, tuple(places)) for key, places in elements),
        accelerator_default=bool(accelerator),
    )


def _summaries_name(options: SummaryOptions) -> str:
    return f"{_SUMMARIES}-{hashlib.blake2b(repr((source_digest(), options)).encode(), digest_size=6).hexdigest()}.json"


def read_json(path: Path) -> Any:
    """The JSON value in ``path``, or None when it is missing or damaged."""
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def write_json(path: Path, value: object) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(handle, "w") as out:
            json.dump(value, out)
        os.replace(temporary, path)
    except OSError:
        pass  # a read-only cache folder only costs the next run a re-read
