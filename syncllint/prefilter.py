"""A text prefilter: skip the libcst parse of files where no selected rule can report.

Each rule declares ``triggers`` (see ``checks.base.Rule``): substrings of which at least one occurs,
case-insensitively, in the text of every file where the rule can report. A file that contains
none of the selected rules' triggers cannot produce a finding, so the engine does not parse it
with libcst. ``triggers = None`` (the default) means "no promise": one such rule selected turns
the prefilter off. Two placeholders stand for settings: ``DEVICE_NAMES`` expands to the
configured ``device-suffixes`` and ``HOST_NAMES`` to the ``host-suffixes``, because those
suffixes alone make a name a device or host tensor.

Parse errors (SYNC001) are reported whatever the selection, so a skipped file still gets a
syntax check: CPython's own parser (about ten times faster than libcst's) accepts it, or the
engine falls back to libcst to report the error in libcst's words.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

# Placeholders a rule may list among its triggers.
DEVICE_NAMES = "<device-suffixes>"
HOST_NAMES = "<host-suffixes>"

# Tokens that give device inference a tensor that may live on the device: torch-qualified names
# and annotations, ``forward`` parameters, ``.cuda()`` / ``.to(...)`` results, ``*mask*`` names,
# and names with a device suffix. Rules whose findings need such a tensor list these.
DEVICE_TENSOR_EVIDENCE = ("torch", "forward", "cuda", ".to", "mask", ".gpu", DEVICE_NAMES)


@dataclass(frozen=True)
class Prefilter:
    """The lowercase substrings of which a file must contain one; None: lint every file."""

    needles: tuple[str, ...] | None

    def may_report(self, source: str) -> bool:
        if self.needles is None:
            return True
        text = source.lower()
        return any(needle in text for needle in self.needles)


@lru_cache(maxsize=32)
def build_prefilter(
    triggers: tuple[tuple[str, ...] | None, ...],
    device_suffixes: tuple[str, ...],
    host_suffixes: tuple[str, ...],
) -> Prefilter:
    """The prefilter for rules with these ``triggers`` under these settings."""
    needles: set[str] = set()
    for rule_triggers in triggers:
        if rule_triggers is None:
            return Prefilter(None)
        needles.update(_expand(rule_triggers, device_suffixes, host_suffixes))
    needles.discard("")
    if any(not needle.strip() for needle in needles):
        return Prefilter(None)  # a whitespace trigger matches about everything
    # Longest first: no behaviour change, but rarer needles are tried last.
    return Prefilter(tuple(sorted(needles, key=lambda n: (-len(n), n))))


def _expand(triggers: Iterable[str], device_suffixes: tuple[str, ...], host_suffixes: tuple[str, ...]) -> Iterable[str]:
    for trigger in triggers:
        if trigger == DEVICE_NAMES:
            yield from (s.lower() for s in device_suffixes)
        elif trigger == HOST_NAMES:
            yield from (s.lower() for s in host_suffixes)
        else:
            yield trigger.lower()


def parses_cleanly(source: str, filename: str) -> bool:
    """Whether CPython parses ``source``; False sends the file to libcst for its error message."""
    try:
        compile(source, filename, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False
    return True
