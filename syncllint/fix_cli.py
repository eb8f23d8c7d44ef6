"""``check``'s fix and adoption flags (ruff's): --fix, --unsafe-fixes, --diff, --fix-only, --show-fixes,
--exit-non-zero-on-fix, --add-noqa, --add-allow, --baseline, --write-baseline."""

from __future__ import annotations

import difflib
import os
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO, TypeVar

import click

from syncllint.config import Settings
from syncllint.diagnostics import Applicability, Diagnostic

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
F = TypeVar("F", bound=Callable[..., Any])

_OPTIONS = (
    click.option("--fix", is_flag=True, help="Apply safe fixes."),
    click.option("--unsafe-fixes", is_flag=True, help="Apply unsafe fixes too (with --fix)."),
    click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; write nothing (exit 1 if any)."),
    click.option("--fix-only", is_flag=True, help="Apply fixes; report nothing about what is left."),
    click.option("--show-fixes", is_flag=True, help="List the fixes applied, per file and rule."),
    click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when a fix changed something."),
    click.option("--add-noqa", is_flag=True, help="Append `# noqa: CODE` to every remaining finding."),
    click.option("--add-allow", is_flag=True, help="Wrap every remaining finding in `with gpu_sync_allowed():`."),
    click.option("--baseline", "baseline_file", type=click.Path(dir_okay=False), help="Report only findings not in this baseline."),
    click.option("--write-baseline", "write_baseline_file", type=click.Path(dir_okay=False), help="Write the findings to a baseline file."),
)


def fix_options(command: F) -> F:
    for option in reversed(_OPTIONS):
        command = option(command)
    return command


@dataclass(frozen=True)
class FixRequest:
    fix: bool = False
    unsafe_fixes: bool = False
    diff: bool = False
    fix_only: bool = False
    show_fixes: bool = False
    exit_non_zero_on_fix: bool = False
    add_noqa: bool = False
    add_allow: bool = False
    baseline_file: str | None = None
    write_baseline_file: str | None = None

    @property
    def active(self) -> bool:
        """Whether ``check`` runs through this module (else the plain lint path)."""
        return bool(self.applies_fixes or self.add_noqa or self.add_allow or self.baseline_file or self.write_baseline_file)

    @property
    def applies_fixes(self) -> bool:
        return self.fix or self.fix_only or self.diff


@dataclass(frozen=True)
class Job:
    """What ``check`` already resolved."""

    targets: list[str]
    settings: Settings
    use_stdin: bool
    stdin_name: str
    force_exclude: bool
    jobs: int | None
    output_format: str
    quiet: bool
    exit_zero: bool
    statistics: bool
    cache_dir: Path | None = None  # for the project index; None with --no-cache


def run(request: FixRequest, job: Job) -> int:
    from syncllint.fix_run import FixOptions, process_paths, process_text

    options = FixOptions(
        fix=request.applies_fixes,
        unsafe=request.unsafe_fixes,
        write=not request.diff,
        add_noqa=request.add_noqa and not request.diff,
        add_allow=request.add_allow and not request.diff,
    )
    out = sys.stdout
    if job.use_stdin:
        text = sys.stdin.read()
        results = [(job.stdin_name, process_text(text, job.stdin_name, job.settings, options))]
    else:
        from syncllint.discovery import discover

        found = discover(job.targets, job.settings, job.force_exclude)
        if found.missing:
            click.echo(f"syncllint: error: {found.missing[0]}: No such file or directory", err=True)
            return EXIT_ERROR
        inside, outside = split_by_containment([str(p) for p in found.files], job.targets)
        for path in outside:
            click.echo(
                f"syncllint: warning: not fixing {path}: it resolves to {os.path.realpath(path)}, "
                "outside the paths given",
                err=True,
            )
        from syncllint.project.index import linked_facts, summary_options
        from syncllint.project_facts import with_project_facts

        # The same settings and project facts a check of these files uses, so a fix acts on what
        # the check reports.
        settings = with_project_facts(job.settings, found.files, job.cache_dir)
        linked = linked_facts(found.files, summary_options(settings), job.cache_dir, job.jobs)
        results = process_paths(inside, settings, options, job.jobs, linked)
        if outside:  # still linted and reported, never written
            lint_only = FixOptions(fix=False, write=False)
            results = sorted(results + process_paths(outside, settings, lint_only, job.jobs, linked), key=lambda r: r[0])
    errors = [o.error for _, o in results if o.error]
    for error in errors:
        click.echo(f"syncllint: internal error: {error}", err=True)
    changed = [(name, o) for name, o in results if o.changed]
    fixed = Counter[tuple[str, str]]()
    for name, outcome in results:
        for code, n in outcome.fixed_counts.items():
            fixed[(name, code)] += n
    total_fixed = sum(fixed.values())

    if request.diff:
        for name, outcome in changed:
            out.writelines(difflib.unified_diff(
                outcome.original.splitlines(keepends=True), outcome.fixed.splitlines(keepends=True), name, name
            ))
        if not job.quiet:
            click.echo(f"Would fix {total_fixed} finding{'s' if total_fixed != 1 else ''}.", err=True)
        return EXIT_ERROR if errors else EXIT_FINDINGS if changed else EXIT_CLEAN

    remaining = [d for _, o in results for d in o.remaining]
    remaining, early_exit = _apply_baseline(request, job, results, remaining)
    if early_exit is not None:
        return early_exit
    report_out: TextIO = out
    if job.use_stdin and (request.applies_fixes or options.add_noqa or options.add_allow):
        out.write(results[0][1].fixed)  # the fixed code goes to stdout, the report to stderr
        report_out = sys.stderr
    if request.show_fixes and total_fixed:
        _show_fixes(fixed, report_out)
    if not request.fix_only:
        _report(remaining, total_fixed, job, report_out, failed=bool(errors))
    elif not job.quiet:
        report_out.write(f"Fixed {total_fixed} finding{'s' if total_fixed != 1 else ''}.\n")
    if errors:
        return EXIT_ERROR
    if request.exit_non_zero_on_fix and changed:
        return EXIT_FINDINGS
    if request.fix_only or job.exit_zero:
        return EXIT_CLEAN
    return EXIT_FINDINGS if remaining else EXIT_CLEAN


def split_by_containment(files: list[str], targets: list[str]) -> tuple[list[str], list[str]]:
    """Files whose real location lies under a given directory (or is a given file, itself no
    symlink), and the rest: symlinks that lead out of the paths given. Only the first are written."""
    directories = [os.path.realpath(t) for t in targets if os.path.isdir(t)]
    named = {os.path.realpath(t) for t in targets if not os.path.isdir(t) and not os.path.islink(t)}

    def contained(path: str) -> bool:
        real = os.path.realpath(path)
        return real in named or any(os.path.commonpath([real, d]) == d for d in directories)

    inside = [f for f in files if contained(f)]
    return inside, [f for f in files if not contained(f)]


def _apply_baseline(
    request: FixRequest, job: Job, results: list[tuple[str, Any]], remaining: list[Diagnostic]
) -> tuple[list[Diagnostic], int | None]:
    if not (request.baseline_file or request.write_baseline_file):
        return remaining, None
    from syncllint import baseline

    keys = []
    for _, outcome in results:
        keys.extend(baseline.keys_for(outcome.remaining, outcome.fixed, job.settings.project_root))
    if request.write_baseline_file:
        count = baseline.write(Path(request.write_baseline_file), keys)
        click.echo(f"Wrote {count} finding{'s' if count != 1 else ''} to {request.write_baseline_file}.", err=True)
        return [], EXIT_CLEAN
    assert request.baseline_file is not None
    try:
        accepted = baseline.load(Path(request.baseline_file))
    except baseline.BaselineError as err:
        click.echo(f"syncllint: error: {err}", err=True)
        return [], EXIT_ERROR
    new, left = baseline.filter_new(remaining, keys, accepted)
    linted = {k.path for k in keys} | {baseline.relative_path(name, job.settings.project_root) for name, _ in results}
    stale = sorted(k for k in left.elements() if k.path in linted)
    for key in stale:
        click.echo(f"syncllint: stale baseline entry: {key.path}: {key.code} in {key.scope}: {key.statement}", err=True)
    return new, None


def _show_fixes(fixed: Counter[tuple[str, str]], out: TextIO) -> None:
    from syncllint.checks import rule_by_code

    total = sum(fixed.values())
    out.write(f"Fixed {total} finding{'s' if total != 1 else ''}:\n")
    for name in sorted({n for n, _ in fixed}):
        out.write(f"- {name}:\n")
        for (file, code), n in sorted(fixed.items()):
            if file == name:
                rule = rule_by_code(code)
                out.write(f"    {n} × {code} ({rule.name if rule else code})\n")


def _report(remaining: list[Diagnostic], total_fixed: int, job: Job, out: TextIO, failed: bool = False) -> None:
    """``failed``: a file ended in an internal error, so "All checks passed!" would be untrue."""
    from syncllint.report import render, render_statistics

    if job.statistics:
        render_statistics(remaining, out, as_json=job.output_format == "json")
        return
    color = job.output_format != "json" and out.isatty()
    sources: dict[str, str] = {}
    for name in {d.filename for d in remaining} if job.output_format == "full" else ():
        sources.update(_read(name))
    render(remaining, job.output_format, out, color=color, sources=sources, quiet=True)
    if job.output_format == "json" or job.quiet:
        return
    n = len(remaining)
    if n == 0 and total_fixed:
        out.write(f"Found {total_fixed} finding{'s' if total_fixed != 1 else ''} ({total_fixed} fixed, 0 remaining).\n")
    elif n == 0:
        if not failed:
            out.write("All checks passed!\n")
    else:
        head = f"Found {n + total_fixed} finding{'s' if n + total_fixed != 1 else ''}"
        out.write(f"{head} ({total_fixed} fixed, {n} remaining).\n" if total_fixed else f"{head}.\n")
        safe = sum(1 for d in remaining if d.fix is not None and d.fix.applicability is Applicability.SAFE)
        unsafe = sum(1 for d in remaining if d.fix is not None and d.fix.applicability is Applicability.UNSAFE)
        if safe:
            out.write(f"[*] {safe} fixable with the `--fix` option.\n")
        if unsafe:
            out.write(f"{unsafe} hidden fix{'es' if unsafe != 1 else ''} can be enabled with the `--unsafe-fixes` option.\n")


def _read(path: str) -> dict[str, str]:
    """Source text keyed like ``Diagnostic.source_key``: the file, or each notebook cell."""
    from syncllint.notebook import NOTEBOOK_SUFFIX, cell_sources
    from syncllint.runner import decode_source

    try:
        data = Path(path).read_bytes()
        if path.endswith(NOTEBOOK_SUFFIX):
            return {f"{path}:cell {number}": text for number, text in cell_sources(data).items()}
        return {path: decode_source(data).text}
    except (OSError, UnicodeDecodeError, SyntaxError, LookupError):
        return {}
