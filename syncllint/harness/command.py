"""The ``syncllint verify`` click command (registered on the CLI group by ``syncllint.cli``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click


def _first_line(emulated: bool) -> str:
    import torch

    if emulated:
        reason = "no CUDA device" if not torch.cuda.is_available() else "--emulate given"
        return f"syncllint verify: {reason}: running the CPU emulation (torch {torch.__version__}); no timing oracle"
    return f"syncllint verify: {torch.cuda.get_device_name()} (torch {torch.__version__}, CUDA {torch.version.cuda})"


@click.command(context_settings={"ignore_unknown_options": True})
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--output", "output", type=click.Path(dir_okay=False), help="Also write the JSON report to this file.")
@click.option("--rule", "rules", multiple=True, help="Only these rule codes or prefixes.")
@click.option("--emulate", is_flag=True, help="Use the CPU emulation even where a GPU is available.")
@click.option("--fix", "fix_path", type=click.Path(exists=True, file_okay=False), help="Apply fixes to a copy of this tree and run CMD before and after.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def verify(as_json: bool, output: str | None, rules: tuple[str, ...], emulate: bool, fix_path: str | None, command: tuple[str, ...]) -> None:
    """Prove each rule page's claims by running its examples (GPU, or the CPU emulation).

    With ``--fix PATH -- CMD ...``: copy PATH, apply the fixes to the copy, run CMD (e.g. pytest)
    under ``SYNCLLINT_SYNC_CHECK=record`` before and after, and compare pass/fail and sync counts.
    """
    if fix_path is not None:
        _verify_fix(Path(fix_path), list(command), as_json)
        return
    if command:
        raise click.UsageError("a command is only taken with --fix PATH -- CMD ...")
    from syncllint.harness.render import render_table
    from syncllint.harness.verify import verify as run_verify

    result = run_verify(rules, force_emulation=emulate)
    report = result.as_json()
    if output:
        Path(output).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    out = sys.stdout
    if as_json:
        out.write(json.dumps(report, indent=1) + "\n")
    else:
        click.echo(_first_line(result.emulated))
        render_table(result, out, color=out.isatty())
    sys.exit(1 if result.failed else 0)


def _verify_fix(path: Path, command: list[str], as_json: bool) -> None:
    from syncllint.harness.fixrun import verify_fix

    if not command:
        raise click.UsageError("give the command to run after `--`, e.g. `syncllint verify --fix src -- pytest -q`")
    report = verify_fix(path, command)
    if as_json:
        click.echo(json.dumps(report.as_json(), indent=1))
        sys.exit(0 if report.ok else 1)
    if not report.fixes_applied:
        click.echo(f"syncllint verify --fix: the fixer failed on the copy:\n{report.fixer_output}", err=True)
        sys.exit(2)
    assert report.before is not None and report.after is not None
    click.echo(f"fixes changed {len(report.changed)} file(s): {', '.join(report.changed) or '-'}")
    click.echo(f"{'':14}{'before':>12}{'after':>12}")
    for label, before, after in (
        ("command", "pass" if report.before.passed else f"FAIL ({report.before.returncode})", "pass" if report.after.passed else f"FAIL ({report.after.returncode})"),
        ("syncs", report.before.syncs, report.after.syncs),
        ("races", report.before.races, report.after.races),
        ("allowed", report.before.allowed, report.after.allowed),
    ):
        click.echo(f"{label:14}{before!s:>12}{after!s:>12}")
    for code in sorted(set(report.before.by_rule) | set(report.after.by_rule)):
        click.echo(f"{code:14}{report.before.by_rule.get(code, 0):>12}{report.after.by_rule.get(code, 0):>12}")
    if not report.after.passed:
        click.echo("after the fixes the command fails:\n" + report.after.output_tail)
    sys.exit(0 if report.ok else 1)
