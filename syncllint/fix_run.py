"""Run fixes and adoption over many files: one pipeline per file, a process pool for big trees."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from pathlib import Path

from syncllint.adopt import add_allow, add_noqa
from syncllint.config import Settings
from syncllint.diagnostics import Diagnostic
from syncllint.engine import lint_source
from syncllint.fixer import (
    FixOutcome,
    fix_source,
    invalid_reason,
    remove_stray_temporaries,
    write_atomic,
)
from syncllint.notebook import NOTEBOOK_SUFFIX, lint_notebook
from syncllint.project.facts import NO_LINKED_FACTS, LinkedFacts
from syncllint.results import parse_error
from syncllint.runner import decode_source, default_jobs, rerun_after_a_crash

_POOL_THRESHOLD = 16


@dataclass(frozen=True)
class FixOptions:
    fix: bool = False  # apply fixes at all (else only adoption / baseline)
    unsafe: bool = False
    write: bool = True  # False for --diff
    add_noqa: bool = False
    add_allow: bool = False


def process_text(
    text: str, filename: str, settings: Settings, options: FixOptions, linked: LinkedFacts = NO_LINKED_FACTS
) -> FixOutcome:
    """Fix, then mark what is left (``--add-noqa`` / ``--add-allow``); the file's new text and findings."""
    if filename.endswith(NOTEBOOK_SUFFIX):
        return _process_notebook(text, filename, settings, options)
    if options.fix:
        outcome = fix_source(text, filename, settings, unsafe=options.unsafe, linked=linked)
    else:
        outcome = FixOutcome(text, text, Counter(), lint_source(text, filename, settings, linked=linked).diagnostics)
    if outcome.error is not None or not (options.add_noqa or options.add_allow) or not outcome.remaining:
        return outcome
    try:
        if options.add_allow:
            marked = add_allow(outcome.fixed, outcome.remaining, settings)
        else:
            marked = add_noqa(outcome.fixed, outcome.remaining)
    except Exception as err:  # noqa: BLE001 - a bug here must not lose the fixes already made
        return replace(outcome, error=f"cannot mark findings in {filename}: {type(err).__name__}: {err}")
    reason = invalid_reason(marked, filename)
    if reason is not None:
        tool = "--add-allow" if options.add_allow else "--add-noqa"
        return replace(outcome, error=f"{tool} made {filename} invalid ({reason}); its findings were not marked")
    remaining = lint_source(marked, filename, settings, linked=linked).diagnostics
    return replace(outcome, fixed=marked, remaining=remaining)


def _process_notebook(text: str, filename: str, settings: Settings, options: FixOptions) -> FixOutcome:
    from syncllint.notebook_fix import fix_notebook_text

    if options.fix:
        outcome = fix_notebook_text(text, filename, settings, unsafe=options.unsafe)
    else:
        outcome = FixOutcome(text, text, Counter(), lint_notebook(text.encode("utf-8"), filename, settings).diagnostics)
    if outcome.error is None and (options.add_noqa or options.add_allow) and outcome.remaining:
        tool = "--add-allow" if options.add_allow else "--add-noqa"
        return replace(outcome, error=f"{tool} does not mark findings in notebooks; {filename}'s were left as they are")
    return outcome


def process_path(path: str, settings: Settings, options: FixOptions, linked: LinkedFacts = NO_LINKED_FACTS) -> FixOutcome:
    """One file's outcome; a bug in syncllint is this file's error (nothing written), as in a check."""
    try:
        return _process_path(path, settings, options, linked)
    except Exception as err:  # noqa: BLE001 - one broken file must not stop the run or print a traceback
        return FixOutcome("", "", error=f"{path}: {type(err).__name__}: {err}")


def _process_path(path: str, settings: Settings, options: FixOptions, linked: LinkedFacts) -> FixOutcome:
    if path.endswith(NOTEBOOK_SUFFIX):
        return _process_notebook_path(path, settings, options)
    try:
        source = decode_source(Path(path).read_bytes())
    except OSError as err:
        return FixOutcome("", "", remaining=(parse_error(path, f"cannot read file: {err.strerror or err}"),))
    except (UnicodeDecodeError, SyntaxError, LookupError) as err:
        return FixOutcome("", "", remaining=(parse_error(path, f"cannot decode file: {err}"),))
    outcome = process_text(source.text, path, settings, options, linked)
    if options.write and outcome.changed:
        try:
            write_atomic(Path(path), outcome.fixed, source.encoding, source.bom)
        except (OSError, UnicodeEncodeError) as err:
            unchanged = lint_source(source.text, path, settings, linked=linked).diagnostics
            return FixOutcome(source.text, source.text, Counter(), unchanged, f"cannot write {path}: {err}")
    return outcome


def _process_notebook_path(path: str, settings: Settings, options: FixOptions) -> FixOutcome:
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        return FixOutcome("", "", remaining=(parse_error(path, f"cannot read file: {err.strerror or err}"),))
    bom = data.startswith(b"\xef\xbb\xbf")
    try:
        text = data[3 if bom else 0 :].decode("utf-8")
    except UnicodeDecodeError:  # not a notebook we can fix: report it as linting does, write nothing
        return FixOutcome("", "", remaining=lint_notebook(data, path, settings).diagnostics)
    outcome = _process_notebook(text, path, settings, options)
    if options.write and outcome.changed:
        try:
            write_atomic(Path(path), outcome.fixed, "utf-8", bom)
        except OSError as err:
            unchanged = lint_notebook(data, path, settings).diagnostics
            return FixOutcome(text, text, Counter(), unchanged, f"cannot write {path}: {err}")
    return outcome


_Task = tuple[list[str], Settings, FixOptions, dict[str, LinkedFacts]]


def _chunk(args: _Task) -> list[tuple[str, FixOutcome]]:
    paths, settings, options, linked = args
    return [(p, process_path(p, settings, options, linked.get(p, NO_LINKED_FACTS))) for p in paths]


def process_paths(
    paths: list[str],
    settings: Settings,
    options: FixOptions,
    jobs: int | None,
    linked: dict[str, LinkedFacts] | None = None,
) -> list[tuple[str, FixOutcome]]:
    """Every file's outcome, sorted by path whatever the scheduling (``linked``: project facts by path)."""
    facts = linked or {}
    workers = max(1, jobs or default_jobs())
    if workers == 1 or len(paths) < _POOL_THRESHOLD:
        results = [(p, process_path(p, settings, options, facts.get(p, NO_LINKED_FACTS))) for p in paths]
        return sorted(results, key=lambda r: r[0])

    def task_of(names: list[str]) -> _Task:
        return names, settings, options, {p: facts[p] for p in names if p in facts}

    chunks = [paths[i : i + 8] for i in range(0, len(paths), 8)]
    try:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = [r for part in pool.map(_chunk, map(task_of, chunks)) for r in part]
    except BrokenProcessPool:
        # Files fixed before the crash were written whole (atomically); fixing them again changes
        # nothing. Workers ended mid-write leave only their temporary files behind.
        remove_stray_temporaries(paths)
        results = rerun_after_a_crash(
            chunks, task_of, _chunk, lambda path: (path, FixOutcome("", "", error=f"{path}: the worker process died"))
        )
    return sorted(results, key=lambda r: r[0])


def remaining_of(results: list[tuple[str, FixOutcome]]) -> list[Diagnostic]:
    return [d for _, outcome in results for d in outcome.remaining]
