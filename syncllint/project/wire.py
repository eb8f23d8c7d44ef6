"""Module summaries as JSON values, for the stat-keyed index in the cache folder (never pickle)."""

from __future__ import annotations

from typing import Any

from syncllint.project.records import CallSummary, FileSummary, FunctionSummary


def encode_summary(summary: FileSummary) -> list[Any]:
    return [
        summary.module,
        [list(pair) for pair in summary.aliases],
        [
            [key, list(f.params), list(f.keyword_only), [list(d) for d in f.defaults], f.returns, f.method, list(f.elements)]
            for key, f in summary.functions
        ],
        [[name, list(bases)] for name, bases in summary.bases],
        [encode_call(c) for c in summary.calls],
        sorted(summary.escaped),
        [list(pair) for pair in summary.attributes],
        sorted(summary.calls_allowed),
        sorted(summary.calls_outside),
        summary.sets_accelerator_default,
    ]


def decode_summary(value: list[Any]) -> FileSummary:
    module, aliases, functions, bases, calls, escaped, attributes, calls_allowed, calls_outside, accelerator = value
    return FileSummary(
        module,
        tuple((local, qualified) for local, qualified in aliases),
        tuple(
            (key, FunctionSummary(
                tuple(params), tuple(keyword_only), tuple((n, k) for n, k in defaults), returns, bool(method), tuple(elements)
            ))
            for key, params, keyword_only, defaults, returns, method, elements in functions
        ),
        tuple((name, tuple(names)) for name, names in bases),
        tuple(decode_call(call) for call in calls),
        frozenset(escaped),
        tuple((name, place) for name, place in attributes),
        calls_allowed=frozenset(calls_allowed),
        calls_outside=frozenset(calls_outside),
        sets_accelerator_default=bool(accelerator),
    )


def encode_call(call: CallSummary) -> list[Any]:
    return [
        call.target, list(call.positional), [[k, v] for k, v in call.keywords], int(call.star),
        [list(pair) for pair in call.forwarded], call.caller,
    ]


def decode_call(value: list[Any]) -> CallSummary:
    target, positional, keywords, star, forwarded, caller = value
    return CallSummary(
        target, tuple(positional), tuple((k, v) for k, v in keywords), bool(star),
        tuple((slot, name) for slot, name in forwarded), caller,
    )
