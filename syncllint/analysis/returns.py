"""Where the results of a module's own functions live, read from their ``return`` statements.

``_snapshot(...)`` ending in ``return kv[idx].float().cpu().clone()`` returns host data, so
``torch.equal(_snapshot(a), _snapshot(b))`` compares host tensors. Only the return expressions
are read (a move at the end of a method chain, or ``torch.load(..., map_location="cpu")``), and
every non-``None`` return of the function must agree. Statements are scanned, not expressions,
so this costs a fraction of the main walk.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from syncllint.analysis import torch_api as api
from syncllint.analysis.imports import dotted_name
from syncllint.analysis.values import Place

# Methods that keep the place of their receiver: look through them to the move before.
_SAME_PLACE = frozenset(
    "clone contiguous detach float double half bfloat16 long int short bool byte view reshape flatten "
    "squeeze unsqueeze transpose permute t narrow expand repeat chunk split".split()
)
_BLOCKS = (cst.If, cst.Else, cst.For, cst.While, cst.With, cst.Try, cst.TryStar, cst.ExceptHandler,
           cst.ExceptStarHandler, cst.Finally)


def return_places(module: cst.Module, factories_on_host: bool = True) -> dict[str, Place]:
    """``name`` (functions) and ``self.name`` (methods) -> HOST_TENSOR or DEVICE, where all returns agree.

    A return may name a local assigned in the function's top-level statements (``video =
    torch.randn(...)``; ``return video, audio``); a torch factory without ``device=`` is host data
    when ``factories_on_host`` (the module sets no default device).
    """
    found: dict[str, Place | None] = {}
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef):
            _record(found, statement.name.value, statement, factories_on_host)
        elif isinstance(statement, cst.ClassDef):
            for member in statement.body.body:
                if isinstance(member, cst.FunctionDef):
                    _record(found, "self." + member.name.value, member, factories_on_host)
    return {name: place for name, place in found.items() if place is not None}


def _record(found: dict[str, Place | None], key: str, function: cst.FunctionDef, factories_on_host: bool) -> None:
    locals_ = _top_level_assignments(function.body)
    places = {_place_of(expr, locals_, factories_on_host) for expr in _returned(function.body)}
    place = places.pop() if len(places) == 1 else None
    # The same name twice (two classes, a redefinition) with different answers says nothing.
    found[key] = place if found.get(key, place) == place else None


def _returned(suite: cst.BaseSuite) -> Iterator[cst.BaseExpression]:
    body = suite.body if isinstance(suite, cst.IndentedBlock) else ()
    if isinstance(suite, cst.SimpleStatementSuite):
        yield from _returned_small(suite.body)
        return
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            yield from _returned_small(statement.body)
        elif isinstance(statement, _BLOCKS):
            yield from _returned_block(statement)


def _returned_small(body: object) -> Iterator[cst.BaseExpression]:
    for small in body if isinstance(body, (list, tuple)) else ():
        if isinstance(small, cst.Return) and small.value is not None:
            if not (isinstance(small.value, cst.Name) and small.value.value == "None"):
                yield small.value


def _returned_block(block: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    for name in ("body", "orelse", "handlers", "finalbody"):
        part = getattr(block, name, None)
        parts = part if isinstance(part, (list, tuple)) else (part,)
        for item in parts:
            if isinstance(item, cst.BaseSuite):
                yield from _returned(item)
            elif isinstance(item, _BLOCKS):
                yield from _returned_block(item)


def _top_level_assignments(suite: cst.BaseSuite) -> dict[str, cst.BaseExpression]:
    """``name = expr`` statements directly in the function body (the last one wins)."""
    found: dict[str, cst.BaseExpression] = {}
    for statement in suite.body if isinstance(suite, cst.IndentedBlock) else ():
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    target = small.targets[0].target
                    if isinstance(target, cst.Name):
                        found[target.value] = small.value
    return found


def _place_of(
    expr: cst.BaseExpression, locals_: dict[str, cst.BaseExpression], factories_on_host: bool, depth: int = 0
) -> Place | None:
    if depth > 3:
        return None
    if isinstance(expr, cst.Name) and expr.value in locals_:
        return _place_of(locals_[expr.value], locals_, factories_on_host, depth + 1)
    if isinstance(expr, (cst.Tuple, cst.List)) and expr.elements:
        places = {_place_of(el.value, locals_, factories_on_host, depth + 1) for el in expr.elements}
        return places.pop() if len(places) == 1 else None
    if isinstance(expr, cst.Call) and factories_on_host and _is_host_factory(expr):
        return Place.HOST_TENSOR
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        method = expr.func.attr.value
        if method in ("cpu", "numpy", "tolist", "item"):
            return Place.HOST_TENSOR
        if method == "cuda":
            return Place.DEVICE
        if method == "to" and expr.args and isinstance(expr.args[0].value, cst.SimpleString):
            text = expr.args[0].value.value.strip("\"'").lower()
            return Place.HOST_TENSOR if text == "cpu" else Place.DEVICE if text.startswith("cuda") else None
        if method not in _SAME_PLACE:
            if method == "load" and any(
                a.keyword is not None and a.keyword.value == "map_location"
                and isinstance(a.value, cst.SimpleString) and "cpu" in a.value.value
                for a in expr.args
            ):
                return Place.HOST_TENSOR  # torch.load(..., map_location="cpu")
            return None
        expr = expr.func.value
    return None


def _is_host_factory(call: cst.Call) -> bool:
    """``torch.randn(...)`` / ``torch.tensor([...])`` without ``device=`` (spelled ``torch.``)."""
    name = dotted_name(call.func) or ""
    qualified = "torch." + name.rsplit(".", 1)[-1]
    if not name.startswith("torch.") or qualified not in api.TORCH_FACTORIES:
        return False
    if any(arg.keyword is not None and arg.keyword.value == "device" for arg in call.args):
        return False
    if qualified in api.HOST_DATA_CONSTRUCTORS:  # ``torch.as_tensor(t)`` keeps t's device: literals only
        return bool(call.args) and isinstance(call.args[0].value, (cst.List, cst.Tuple, cst.Integer, cst.Float))
    return True
