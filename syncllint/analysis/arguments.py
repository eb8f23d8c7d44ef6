"""Reading a call's arguments as written: by keyword, by position, a literal ``True``."""

from __future__ import annotations

import libcst as cst


def keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def positional(call: cst.Call, index: int) -> cst.BaseExpression | None:
    pos = [a for a in call.args if a.keyword is None and not a.star]
    return pos[index].value if index < len(pos) else None


def is_true(node: cst.BaseExpression | None) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def takes_only(call: cst.Call, keywords: frozenset[str]) -> bool:
    """Every keyword the call passes is one of ``keywords`` (``**kwargs`` is taken on trust)."""
    return all(arg.keyword is None or arg.keyword.value in keywords for arg in call.args)
