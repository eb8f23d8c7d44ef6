"""Defences against inputs that would crash or hang the parser or the tree walk.

libcst's native parser recurses once per nesting level and overflows the C stack (a segfault,
which no ``except`` can catch) at about 2,000 nested brackets. CPython itself refuses more than
200 (``too many nested parentheses``), so a file past that limit is not valid Python anyway and
is reported as such before libcst sees it.

Legal but deep trees (a 1,000-term ``a + b + ...`` chain in generated code) exceed Python's
default recursion limit in libcst's visitors; those files are analysed again in a thread with a
large stack and a raised limit instead of being given up.
"""

from __future__ import annotations

import io
import re
import sys
import threading
import tokenize
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

# CPython's tokenizer limit (MAXLEVEL in Parser/tokenizer.h).
MAX_BRACKET_DEPTH = 200
_BRACKETS = re.compile(r"[()\[\]{}]")
_OPENERS = frozenset("([{")

# Enough for a tree tens of thousands of levels deep; pages are only touched when used.
_DEEP_STACK_BYTES = 512 * 1024 * 1024
_DEEP_RECURSION_LIMIT = 60_000

T = TypeVar("T")


@dataclass(frozen=True)
class TooDeep:
    message: str
    row: int
    column: int


def bracket_depth_problem(source: str) -> TooDeep | None:
    """``TooDeep`` where brackets nest past CPython's limit, else None.

    A character scan (fast, but it also counts brackets inside strings and comments) clears
    almost every file; only files it cannot clear are tokenized for the exact answer.
    """
    depth = 0
    for match in _BRACKETS.finditer(source):
        depth = depth + 1 if match.group() in _OPENERS else max(depth - 1, 0)
        if depth > MAX_BRACKET_DEPTH:
            return _exact_bracket_depth_problem(source)
    return None


def _exact_bracket_depth_problem(source: str) -> TooDeep | None:
    depth = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type != tokenize.OP:
                continue
            if token.string in _OPENERS:
                depth += 1
                if depth > MAX_BRACKET_DEPTH:
                    row, column = token.start
                    return TooDeep("too many nested parentheses", row, column + 1)
            elif token.string in (")", "]", "}"):
                depth = max(depth - 1, 0)
    except (tokenize.TokenError, SyntaxError, ValueError):
        # The tokenizer gave up before the limit; libcst will report the real syntax error.
        return None
    return None


def run_with_deep_stack(work: Callable[[], T]) -> T:
    """Run ``work`` in a thread with a large stack and a raised recursion limit.

    Exceptions raised by ``work`` (RecursionError included, if even this is not enough)
    propagate to the caller.
    """
    outcome: list[T] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            outcome.append(work())
        except BaseException as err:  # noqa: BLE001 - handed back to the calling thread
            failure.append(err)

    with _DEEP_LOCK:
        previous_stack = threading.stack_size()
        previous_limit = sys.getrecursionlimit()
        threading.stack_size(_DEEP_STACK_BYTES)
        try:
            thread = threading.Thread(target=target, name="syncllint-deep")
        finally:
            threading.stack_size(previous_stack)
        sys.setrecursionlimit(max(previous_limit, _DEEP_RECURSION_LIMIT))
        try:
            thread.start()
            thread.join()
        finally:
            sys.setrecursionlimit(previous_limit)
    if failure:
        raise failure[0]
    return outcome[0]


_DEEP_LOCK = threading.Lock()
