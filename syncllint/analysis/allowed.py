"""Allowed regions: the bodies of ``with gpu_sync_allowed(...):`` and its aliases."""

from __future__ import annotations

import libcst as cst

from syncllint.analysis.conventions import qualified_matches
from syncllint.analysis.imports import ImportMap


def is_allowed_context(expr: cst.BaseExpression, imports: ImportMap, allowed: tuple[str, ...]) -> bool:
    """Whether a ``with`` item marks accepted syncs.

    Any call arguments count (``first_only=True``); either arm of a conditional expression counts
    (``nullcontext() if c else gpu_sync_allowed()``), since the author accepted the sync on that path.
    """
    if isinstance(expr, cst.IfExp):
        return is_allowed_context(expr.body, imports, allowed) or is_allowed_context(
            expr.orelse, imports, allowed
        )
    target = expr.func if isinstance(expr, cst.Call) else expr
    qualified = imports.qualify(target)
    return any(qualified_matches(qualified, name) for name in allowed)


def with_allows(node: cst.With, imports: ImportMap, allowed: tuple[str, ...]) -> bool:
    return any(is_allowed_context(item.item, imports, allowed) for item in node.items)
