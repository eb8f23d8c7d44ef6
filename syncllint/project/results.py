"""What a function gives back, read from its ``return`` statements with ``ast``: where its results
live, where each element of the tuples it returns lives, or which parameter's place they keep.

``load_action_rows(x)`` returning ``torch.as_tensor(np.asarray(x))`` on one path and
``x.to(device="cpu")`` on the other returns host data; ``load_payload(x)`` returning
``load_action_rows(x), names`` returns host rows first; ``pad_rows(rows, n)`` returning
``torch.cat([rows, rows.new_zeros(n)])`` keeps ``rows``' place, wherever the caller's rows are.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from syncllint.analysis import torch_api as api
from syncllint.project.bindings import FunctionBindings
from syncllint.project.places import (
    DEVICE,
    HOST,
    JOINS,
    NEW_ON_RECEIVER,
    PlaceReader,
    bound_argument,
)
from syncllint.project.records import PYTHON_NUMBER, FunctionSummary

_NUMBER_ANNOTATIONS = frozenset(("int", "float", "bool", "complex"))
_DEPTH = 6  # names and calls followed back from a return: a short chain is all helpers have


def function_summary(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
    method: bool,
    places: PlaceReader,
    bindings: FunctionBindings,
    locals_: dict[str, ast.expr],
) -> FunctionSummary:
    arguments = node.args
    every = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
    positional = every[1:] if method and every and not _is_static(node) else every
    defaults = dict(zip(reversed(every), reversed(arguments.defaults)))
    defaults.update({a.arg: d for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None})
    # ``return None, None`` on an early exit says nothing of the data returned otherwise.
    returned = [e for e in returned_values(node.body) if not (isinstance(e, ast.Tuple) and all(map(_is_none, e.elts)))]
    result = _agreed(places.place_of(expr, locals_) for expr in returned)
    if result is None and isinstance(node.returns, ast.Name) and node.returns.id in _NUMBER_ANNOTATIONS:
        # ``def _n_ones(n: int) -> int``: what it says where its returns show nothing (a return
        # annotated ``int`` that builds ``torch.tensor([...])`` shows the tensor it is).
        result = PYTHON_NUMBER
    keyword_only = tuple(a.arg for a in arguments.kwonlyargs)
    return FunctionSummary(
        tuple(positional),
        keyword_only,
        tuple((name, places.argument(default)) for name, default in defaults.items()),
        result,
        method,
        _elements(returned, places, locals_) if result is None else (),
        _followed(returned, places, locals_, kept_parameters((*positional, *keyword_only), bindings, locals_)) if result is None else "",
        tuple(
            (name, default.value) for name, default in defaults.items()
            if isinstance(default, ast.Constant) and isinstance(default.value, bool) and name not in bindings.bound
        ),
        _returned_keys(returned, places, locals_),
    )


def _returned_keys(returned: list[ast.expr], places: PlaceReader, locals_: dict[str, ast.expr]) -> tuple[tuple[str, str], ...]:
    """Where each value of the dict every return builds lives, where every return shows the same."""
    found: dict[str, str | None] = {}
    for expr in returned:
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "dict" and not expr.args:
            pairs = [(k.arg, k.value) for k in expr.keywords]
        elif isinstance(expr, ast.Dict):
            pairs = [(k.value if isinstance(k, ast.Constant) and isinstance(k.value, str) else None, v)
                     for k, v in zip(expr.keys, expr.values)]
        else:
            return ()  # a dict built elsewhere may hold anything
        if any(key is None for key, _ in pairs):
            return ()  # ``**extra``: keys nobody can tell
        for key, value in pairs:
            place = places.place_of(value, locals_) if not _is_none(value) else None
            if key is not None:
                found[key] = place if found.get(key, place) == place else None
    return tuple(sorted((key, place) for key, place in found.items() if place is not None))


def kept_parameters(parameters: Iterable[str], bindings: FunctionBindings, locals_: dict[str, ast.expr]) -> frozenset[str]:
    """Parameters whose value the body shows: never rebound, or rebound once (``x = x.float()``, in ``locals_``)."""
    return frozenset(p for p in parameters if p not in bindings.bound or p in locals_)


def agreed_locals(
    bindings: FunctionBindings, parameters: frozenset[str], places: PlaceReader
) -> dict[str, ast.expr]:
    """Names assigned once, and names assigned several times whose
    values all show the same place (``rows = x.to(device="cpu")`` on one path, ``rows =
    torch.as_tensor(np.asarray(x))`` on the other, ``rows = rows.squeeze(0)`` after): each with one
    value that stands for them. A parameter's first value is the caller's: it never agrees, and
    one set only under ``if device is None:`` stands for the caller's wherever one is given."""
    callers_own = parameters & bindings.defaulted
    locals_ = {name: value for name, value in bindings.once.items() if name not in callers_own}
    for name, values in bindings.repeated.items():
        if name in parameters:
            continue
        agreed = agreed_value(name, values, locals_, places)
        if agreed is not None:
            locals_[name] = agreed
    return locals_


def agreed_value(
    name: str, values: Iterable[ast.expr], locals_: dict[str, ast.expr], places: PlaceReader, only: str | None = None
) -> ast.expr | None:
    """One of the values a name is assigned that stands for all of them, when they all show the same
    place (``only``: that place); ``None`` resets and ``x = x.float()`` keep what the name held and
    say nothing."""
    kept = [
        value for value in values
        if not (isinstance(value, ast.Constant) and value.value is None)  # a reset says nothing
        and followed_parameter(value, {}, frozenset((name,)), places) != name  # ``x = x.float()`` keeps it
    ]
    updates = [value for value in kept if mentions(value, name)]
    earlier = None
    given = locals_
    if updates and len(updates) < len(kept):
        # ``x = torch.cat([x, extra])`` reads the name's other values: read it as the one they agree on.
        earlier = agreed_value(name, [value for value in kept if value not in updates], locals_, places, only)
        if earlier is not None:
            locals_ = {**locals_, name: earlier}
    read = [(value, places.place_of(value, locals_)) for value in kept]
    kinds = {_shown_place(value, place, locals_, places) for value, place in read}
    if len(kinds) != 1 or kinds == {None} or only is not None and kinds != {only}:
        return None
    # The value whose own place reads clearest stands for them (``x.numpy()`` before ``np.interp(...)``);
    # one that shows it only through the name's earlier value (``torch.cat([x, extra])``) gives way to that value.
    clearest = max(read, key=lambda pair: pair[1] is not None)[0]
    if earlier is not None and clearest in updates and places.place_of(clearest, given) is None:
        return earlier
    return clearest


def mentions(value: ast.expr, name: str) -> bool:
    """Whether ``value`` reads ``name``."""
    return any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(value))


def _shown_place(value: ast.expr, place: str | None, locals_: dict[str, ast.expr], places: PlaceReader) -> str | None:
    host, device = places.shows_host(value, locals_), places.shows_device(value, locals_)
    if host and device or place == HOST and device or place == DEVICE and host:
        return None  # the rules disagree: nothing shown
    if place == HOST or host:
        return HOST
    return DEVICE if place == DEVICE or device else None


def followed_parameter(
    expr: ast.expr, locals_: dict[str, ast.expr], parameters: frozenset[str], places: PlaceReader, depth: int = 0
) -> str | None:
    """The one parameter whose place ``expr`` keeps: itself, a row, a view or a dtype change of it,
    a new tensor on its device, arithmetic or a join of such (numbers aside). It reads what a helper
    returns, and what a call passes on of its caller's parameters (``_inner(crops[i].long())``)."""
    if depth > _DEPTH:
        return None
    if isinstance(expr, ast.Name):
        if expr.id in locals_:
            value = locals_[expr.id]
            if followed_parameter(value, {}, frozenset((expr.id,)), places, depth + 1) == expr.id:
                return expr.id if expr.id in parameters else None  # ``rows = rows.float()`` of a parameter
            return followed_parameter(value, locals_, parameters, places, depth + 1)
        return expr.id if expr.id in parameters else None
    if isinstance(expr, ast.Subscript):
        return followed_parameter(expr.value, locals_, parameters, places, depth + 1)
    if isinstance(expr, ast.UnaryOp):
        return followed_parameter(expr.operand, locals_, parameters, places, depth + 1)
    if isinstance(expr, ast.BinOp):
        return _one_of([expr.left, expr.right], locals_, parameters, places, depth)
    if isinstance(expr, ast.IfExp):
        return _one_of([expr.body, expr.orelse], locals_, parameters, places, depth)
    if not isinstance(expr, ast.Call):
        return None
    if isinstance(expr.func, ast.Attribute) and (
        expr.func.attr in api.SAME_PLACE_METHODS or expr.func.attr in NEW_ON_RECEIVER or places.keeps_place(expr)
    ):
        return followed_parameter(expr.func.value, locals_, parameters, places, depth + 1)
    if (places.qualify(expr.func) or "") in JOINS and expr.args and isinstance(expr.args[0], (ast.List, ast.Tuple)):
        return _one_of(expr.args[0].elts, locals_, parameters, places, depth)
    function = places.own(expr)
    if function is not None and function.follows:
        argument = bound_argument(expr, function, function.follows)
        return None if argument is None else followed_parameter(argument, locals_, parameters, places, depth + 1)
    return None


def _one_of(
    operands: list[ast.expr], locals_: dict[str, ast.expr], parameters: frozenset[str], places: PlaceReader, depth: int
) -> str | None:
    found = {followed_parameter(o, locals_, parameters, places, depth + 1) for o in operands if not isinstance(o, ast.Constant)}
    return found.pop() if len(found) == 1 else None


def _followed(returned: list[ast.expr], places: PlaceReader, locals_: dict[str, ast.expr], parameters: frozenset[str]) -> str:
    found = {followed_parameter(expr, locals_, parameters, places) for expr in returned}
    return found.pop() or "" if len(found) == 1 else ""


def _elements(returned: list[ast.expr], places: PlaceReader, locals_: dict[str, ast.expr]) -> tuple[str | None, ...]:
    """Per position, where the elements of the tuples a function returns live, when every return
    is a tuple of one length (``return rows, names``)."""
    if not returned or not all(isinstance(e, ast.Tuple) for e in returned):
        return ()
    tuples = [e.elts for e in returned if isinstance(e, ast.Tuple)]
    if len({len(elts) for elts in tuples}) != 1:
        return ()
    found = tuple(
        _agreed(places.place_of(elts[i], locals_) for elts in tuples if not _is_none(elts[i])) for i in range(len(tuples[0]))
    )
    return found if any(place is not None for place in found) else ()


def _agreed(places: Iterable[str | None]) -> str | None:
    found = set(places)
    return found.pop() if len(found) == 1 else None


def _is_none(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is None


def returned_values(body: list[ast.stmt]) -> list[ast.expr]:
    """The non-``None`` return values of a function body, nested functions and classes left out."""
    found: list[ast.expr] = []
    pending = list(body)
    while pending:
        statement = pending.pop()
        if isinstance(statement, ast.Return):
            if statement.value is not None and not _is_none(statement.value):
                found.append(statement.value)
        elif not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for child in ast.iter_child_nodes(statement):
                if isinstance(child, ast.stmt):
                    pending.append(child)
                elif isinstance(child, (ast.ExceptHandler, ast.match_case)):
                    pending.extend(child.body)
    return found


def _is_static(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
