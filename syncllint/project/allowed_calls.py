"""Which functions the project calls only inside its allowed regions (``with gpu_sync_allowed():``).

vLLM's runtime check is thread-local: a sync anywhere below ``with gpu_sync_allowed():`` is
accepted, also in the callee's own module. ``self.model.select_encoder_cudagraph_items(...)`` called
only there makes the ``torch.tensor(..., device=...)`` inside every model's implementation an
accepted sync. Calls are matched by the called name alone (``x.name(...)`` / ``name(...)``), as
the receiver's class is seldom known; a name called anywhere outside an allowed region, or one
the framework calls itself, is never taken.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

from syncllint.analysis.conventions import qualified_matches

# Names the framework, Python or torch call by themselves: their callers are not all in the text.
_CALLED_BY_FRAMEWORKS = frozenset(("forward", "run", "main", "step", "apply", "execute_model"))


def allowed_body_nodes(
    node: ast.With | ast.AsyncWith, qualify: Callable[[ast.expr], str | None], allowed: Iterable[str]
) -> set[int]:
    """ids of the nodes in the body of a ``with`` that allows syncs, else an empty set."""
    if not any(_allows(item.context_expr, qualify, tuple(allowed)) for item in node.items):
        return set()
    return {id(inner) for statement in node.body for inner in ast.walk(statement)}


def _allows(expr: ast.expr, qualify: Callable[[ast.expr], str | None], allowed: tuple[str, ...]) -> bool:
    if isinstance(expr, ast.IfExp):  # ``nullcontext() if c else gpu_sync_allowed()``
        return _allows(expr.body, qualify, allowed) or _allows(expr.orelse, qualify, allowed)
    target = expr.func if isinstance(expr, ast.Call) else expr
    qualified = qualify(target) or (target.id if isinstance(target, ast.Name) else None)
    return any(qualified_matches(qualified, name) for name in allowed)


def only_called_when_allowed(allowed: Iterable[frozenset[str]], outside: Iterable[frozenset[str]]) -> frozenset[str]:
    """Names some module calls inside an allowed region and no module calls outside one."""
    inside = frozenset().union(*allowed)
    elsewhere = frozenset().union(*outside)
    return frozenset(
        name for name in inside - elsewhere if not name.startswith("__") and name not in _CALLED_BY_FRAMEWORKS
    )
