"""The verify report as a rich table."""

from __future__ import annotations

from typing import TextIO

from syncllint.harness.verify import Claim, Verification


def _sync_word(value: bool | None, ms: float | None = None) -> str:
    if value is None:
        return "n/a"
    word = "sync" if value else "no sync"
    return f"{word} ({ms:.1f} ms)" if ms is not None else word


def _detector_word(claim: Claim) -> str:
    if claim.expected.startswith("raises "):
        return f"raised {claim.raised}" if claim.raised else "raised nothing"
    word = _sync_word(claim.detector)
    return word if claim.race is None else f"{word}, {'race' if claim.race else 'no race'}"


def _equal_word(claim: Claim) -> str:
    if claim.kind != "fixed":
        return "-"
    return {True: "equal", False: "DIFFERENT", None: "?"}[claim.equal]


def render_table(result: Verification, out: TextIO, color: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(file=out, force_terminal=color, no_color=not color, width=160)
    table = Table(title=None, show_lines=False)
    for column in ("rule", "example", "expected", "detector", "oracle", "equal", "verdict"):
        table.add_column(column)
    for claim in result.claims:
        verdict = "[green]pass[/]" if claim.passed else f"[red]FAIL[/] {claim.why}"
        table.add_row(
            claim.rule,
            claim.example,
            claim.expected,
            _detector_word(claim),
            _sync_word(claim.oracle, claim.oracle_ms),
            _equal_word(claim),
            verdict,
        )
    console.print(table)
    disagreements = [c for c in result.claims if c.disagreement]
    if disagreements:
        console.print("detector and oracle disagree on: " + ", ".join(f"{c.rule} {c.example}" for c in disagreements))
    failed = result.failed
    summary = f"{len(result.claims) - len(failed)} of {len(result.claims)} claims hold"
    console.print(summary + ("" if not failed else f"; {len(failed)} fail"))
