"""The rule registry and ruff-style selection (full codes, prefixes, ``ALL``)."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from syncllint.diagnostics import PARSE_ERROR_CODE

if TYPE_CHECKING:  # the rules import libcst; a run answered from the cache never needs it
    from syncllint.checks.base import Rule

# Code numbering: SYNC0xx meta, SYNC1xx host reads, SYNC2xx host->device copies,
# SYNC3xx data-dependent shapes, SYNC4xx writes, SYNC5xx implicit conversions,
# SYNC6xx checked and comparing ops, SYNC7xx explicit waits, SYNC8xx race hazards.
FAMILIES = {
    "SYNC1": "host reads",
    "SYNC2": "host->device copies",
    "SYNC3": "data-dependent shapes",
    "SYNC4": "writes",
    "SYNC5": "implicit conversions",
    "SYNC6": "checked and comparing ops",
    "SYNC7": "explicit waits",
    "SYNC8": "race hazards",
}


@lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
    from syncllint.checks import (
        checked_ops,
        conversions,
        formatting,
        h2d,
        h2d_copies,
        host_reads,
        masks,
        mixed_places,
        python_protocols,
        races,
        shapes,
        sizes,
        waits,
        writes,
    )

    rules: list[type[Rule]] = []
    modules = (host_reads, h2d, masks, shapes, sizes, checked_ops, mixed_places, conversions, formatting)
    for module in (*modules, python_protocols, waits, races, h2d_copies, writes):
        rules.extend(module.RULES)
    return tuple(sorted(rules, key=lambda r: r.code))


def rule_by_code(code: str) -> type[Rule] | None:
    return next((r for r in all_rules() if r.code == code.upper()), None)


def _matches(selector: str, code: str) -> bool:
    selector = selector.upper()
    return selector == "ALL" or code.startswith(selector)


def is_valid_selector(selector: str) -> bool:
    upper = selector.upper()
    if upper == "ALL" or PARSE_ERROR_CODE.startswith(upper):
        return True
    return any(r.code.startswith(upper) for r in all_rules())


def select_rules(
    select: tuple[str, ...] | None, extend_select: tuple[str, ...], ignore: tuple[str, ...]
) -> tuple[type[Rule], ...]:
    """ruff's resolution: ``select`` replaces the defaults, ``extend-select`` adds, ``ignore``
    removes; among the selectors that match a code, the most specific one wins."""
    chosen: list[type[Rule]] = []
    for rule in all_rules():
        best_len, enabled = -1, rule.enabled_by_default and select is None
        for selectors, on in ((select or (), True), (extend_select, True), (ignore, False)):
            for selector in selectors:
                if _matches(selector, rule.code):
                    length = 0 if selector.upper() == "ALL" else len(selector)
                    if length >= best_len:
                        best_len, enabled = length, on
        if enabled:
            chosen.append(rule)
    return tuple(chosen)
