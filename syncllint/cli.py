"""Command line: ``syncllint check``, ``syncllint rule``. Exit codes as ruff: 0 clean, 1 findings, 2 errors."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from syncllint import __version__
from syncllint.config import ConfigError, Settings, override, resolve_settings
from syncllint.diagnostics import Confidence
from syncllint.fix_cli import FixRequest, Job, fix_options
from syncllint.fix_cli import run as run_fixes

if TYPE_CHECKING:
    from syncllint.cache import Cache
    from syncllint.runner import Progress
from syncllint.report.formats import OUTPUT_FORMATS

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _fail(message: str) -> NoReturn:
    click.echo(f"syncllint: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def _codes(values: tuple[str, ...]) -> tuple[str, ...] | None:
    """``--select A,B --select C`` -> ("A", "B", "C"); None when the flag was not given."""
    if not values:
        return None
    return tuple(code.strip().upper() for value in values for code in value.split(",") if code.strip())


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version", prog_name="syncllint")
def cli() -> None:
    """Find hidden GPU<->CPU synchronizations in PyTorch code."""


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--select", multiple=True, help="Rule codes or prefixes to enable (replaces the defaults); ALL for every rule.")
@click.option("--extend-select", multiple=True, help="Rule codes or prefixes to enable on top of the selection.")
@click.option("--ignore", multiple=True, help="Rule codes or prefixes to disable.")
@click.option("--output-format", type=click.Choice(list(OUTPUT_FORMATS)), default="concise", show_default=True)
@click.option("--statistics", is_flag=True, help="Show a count per rule instead of each finding.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Read settings from this TOML file.")
@click.option("--isolated", is_flag=True, help="Ignore every configuration file.")
@click.option("--min-confidence", type=click.Choice(["low", "medium", "high"]), help="Hide findings below this confidence.")
@click.option("--exclude", multiple=True, help="Glob patterns to exclude (replaces the defaults).")
@click.option("--extend-exclude", multiple=True, help="Glob patterns to exclude on top of `exclude`.")
@click.option("--force-exclude/--no-force-exclude", default=False, help="Apply excludes to paths given explicitly too.")
@click.option("--respect-gitignore/--no-respect-gitignore", default=None, help="Skip files that .gitignore ignores.")
@click.option("--stdin-filename", help="The name of the file read from stdin (with `-`).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), help="Worker processes (default: all cores).")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
@click.option("--no-cache", is_flag=True, envvar="SYNCLLINT_NO_CACHE", help="Neither read nor write the result cache.")
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False),
    envvar="SYNCLLINT_CACHE_DIR",
    help="Cache folder (default: .syncllint_cache in the project root).",
)
@fix_options
def check(
    paths: tuple[str, ...],
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    output_format: str,
    statistics: bool,
    exit_zero: bool,
    config_file: str | None,
    isolated: bool,
    min_confidence: str | None,
    exclude: tuple[str, ...],
    extend_exclude: tuple[str, ...],
    force_exclude: bool,
    respect_gitignore: bool | None,
    stdin_filename: str | None,
    jobs: int | None,
    quiet: bool,
    no_cache: bool,
    cache_dir: str | None,
    **fix_flags: Any,
) -> None:
    """Lint PATHS (default: the current directory) for GPU<->CPU syncs."""
    from syncllint.discovery import discover
    from syncllint.notebook import NOTEBOOK_SUFFIX, lint_notebook
    from syncllint.project.index import linked_facts, summary_options
    from syncllint.project_facts import with_project_facts
    from syncllint.report import render, render_statistics
    from syncllint.runner import lint_files

    targets = list(paths) or ["."]
    use_stdin = targets == ["-"]
    search_from = Path(stdin_filename) if use_stdin and stdin_filename else Path(targets[0])
    if not search_from.exists():
        search_from = Path.cwd()
    try:
        settings = resolve_settings(Path(config_file) if config_file else None, isolated, search_from)
        settings = override(
            settings,
            select=_codes(select),
            extend_select=_codes(extend_select),
            ignore=(settings.ignore + i) if (i := _codes(ignore)) else None,
            exclude=tuple(exclude) or None,
            extend_exclude=(settings.extend_exclude + tuple(extend_exclude)) if extend_exclude else None,
            respect_gitignore=respect_gitignore,
            min_confidence=Confidence.parse(min_confidence) if min_confidence else None,
        )
    except ConfigError as err:
        _fail(str(err))

    fix_request = FixRequest(**fix_flags)
    if fix_request.active:
        if "-" in targets and not use_stdin:
            _fail("`-` (stdin) cannot be mixed with other paths")
        job = Job(
            targets, settings, use_stdin, stdin_filename or "-", force_exclude, jobs, output_format, quiet, exit_zero,
            statistics, None if no_cache else _cache_root(settings, cache_dir),
        )
        sys.exit(run_fixes(fix_request, job))

    sources: dict[str, str] = {}
    if use_stdin:
        name = stdin_filename or "-"
        text = sys.stdin.read()
        if force_exclude and stdin_filename and _excluded(Path(stdin_filename), settings):
            results = []
        elif name.endswith(NOTEBOOK_SUFFIX):
            results = [lint_notebook(text.encode("utf-8"), name, settings)]
        else:
            from syncllint.engine import lint_source

            results = [lint_source(text, name, settings)]
        sources.update(_sources_of(name, text.encode("utf-8")))
    else:
        if "-" in targets:
            _fail("`-` (stdin) cannot be mixed with other paths")
        found = discover(targets, settings, force_exclude)
        for missing in found.missing:
            _fail(f"{missing}: No such file or directory")
        for folder in found.unreadable:
            click.echo(f"syncllint: warning: cannot read folder {folder}", err=True)
        facts_cache = None if no_cache else _cache_root(settings, cache_dir)
        settings = with_project_facts(settings, found.files, facts_cache)
        results = lint_files(
            found.files,
            settings,
            jobs,
            cache=_run_cache(settings, no_cache, cache_dir),
            progress=_progress(quiet),
            linked=linked_facts(found.files, summary_options(settings), facts_cache, jobs),
        )
        if output_format == "full":
            for result in results:
                if result.diagnostics:
                    sources.update(_sources_of(result.filename, _read_bytes(result.filename)))

    diagnostics = [d for result in results for d in result.diagnostics]
    out = sys.stdout
    color = output_format in ("concise", "full", "grouped") and out.isatty()
    failed = [r for r in results if r.internal_error]
    if statistics:
        render_statistics(diagnostics, out, as_json=output_format == "json")
    else:
        # "All checks passed!" would be untrue of a file the linter could not check.
        render(diagnostics, output_format, out, color=color, sources=sources, quiet=quiet or bool(failed) and not diagnostics)
    for result in failed:
        click.echo(f"syncllint: internal error: {result.filename}: {result.internal_error}", err=True)
    if failed:
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_FINDINGS if diagnostics and not exit_zero else EXIT_CLEAN)


def _cache_root(settings: Settings, cache_dir: str | None) -> Path:
    from syncllint.cache import default_cache_dir

    return Path(cache_dir) if cache_dir else default_cache_dir(settings)


def _run_cache(settings: Settings, no_cache: bool, cache_dir: str | None) -> Cache | None:
    from syncllint.cache import open_cache

    if no_cache:
        return None
    return open_cache(_cache_root(settings, cache_dir), settings)


def _progress(quiet: bool) -> Progress | None:
    from syncllint.progress import progress_for

    return progress_for(sys.stderr, quiet)


def _excluded(path: Path, settings: Settings) -> bool:
    from syncllint.discovery import _excluded_with_ancestors

    return _excluded_with_ancestors(path.resolve(), Path(settings.project_root), settings.exclude + settings.extend_exclude)


def _read_bytes(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError:
        return b""


def _sources_of(path: str, data: bytes) -> dict[str, str]:
    """Source text keyed like ``Diagnostic.source_key``: the file, or each notebook cell."""
    from syncllint.notebook import NOTEBOOK_SUFFIX, cell_sources
    from syncllint.runner import decode_source

    if path.endswith(NOTEBOOK_SUFFIX):
        return {f"{path}:cell {number}": text for number, text in cell_sources(data).items()}
    try:
        return {path: decode_source(data).text}
    except (UnicodeDecodeError, SyntaxError, LookupError):
        return {}


@cli.command()
@click.option("--cache-dir", type=click.Path(file_okay=False), help="Cache folder (default: .syncllint_cache in the project root).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), help="Find the project root from this file.")
def clean(cache_dir: str | None, config_file: str | None) -> None:
    """Remove the result cache."""
    from syncllint.cache import clean as remove_cache
    from syncllint.cache import default_cache_dir

    if cache_dir:
        folder = Path(cache_dir)
    else:
        try:
            settings = resolve_settings(Path(config_file) if config_file else None, False, Path.cwd())
        except ConfigError as err:
            _fail(str(err))
        folder = default_cache_dir(settings)
    if remove_cache(folder):
        click.echo(f"Removed {folder}")
    elif not folder.exists():
        click.echo(f"No cache at {folder}")
    else:
        _fail(f"{folder} is not a syncllint cache (no CACHEDIR.TAG); not removing it")


@cli.command()
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="List every rule in a table.")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rule(code: str | None, show_all: bool, output_format: str) -> None:
    """Explain a rule (``syncllint rule SYNC101``) or list them all (``--all``)."""
    from syncllint.rule_docs import print_rule, print_rule_table

    if show_all or code is None:
        print_rule_table(as_json=output_format == "json")
        return
    if not print_rule(code, as_json=output_format == "json"):
        _fail(f"unknown rule `{code}` (see `syncllint rule --all`)")


# ``verify`` imports click only at this point; torch is loaded when the command runs.
from syncllint.harness.command import verify as _verify_command  # noqa: E402

cli.add_command(_verify_command, name="verify")


def main() -> None:
    try:
        cli.main(standalone_mode=True)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        click.echo("syncllint: interrupted", err=True)
        sys.exit(EXIT_ERROR)
    except Exception as err:  # noqa: BLE001 - one clear line instead of a traceback
        click.echo(f"syncllint: internal error: {type(err).__name__}: {err}", err=True)
        sys.exit(EXIT_ERROR)


if __name__ == "__main__":
    main()
