"""Calls of methods by name: ``self.policy.rebalance_experts(weight.cpu(), ...)`` in one module
reaches ``DefaultPolicy.rebalance_experts`` in another, though nothing says what ``self.policy`` is.

A method's parameters are filled from every call that spells its name, across the project, where
the name is a method the project defines. Calls the code does not spell (``module(x)`` running
``forward``, a method registered as a hook or passed on as a callback) are unseen: ``forward`` and
dunder methods are never filled this way, and a name passed on anywhere (``hook=self.on_step``)
says nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from syncllint.analysis.tensor_methods import TENSOR_METHODS

BY_NAME = "."  # a call target ``.name``: some object's method ``name``
# Names that many unrelated objects have, or that the framework calls itself.
_SHARED_NAMES = frozenset(
    "forward append extend insert remove pop get setdefault update items keys values copy clear index count "
    "format join split strip startswith endswith replace encode decode read write close open info debug "
    "warning error exception put submit send recv run start call apply map".split()
)


def called_method(call: ast.Call) -> str | None:
    """The method name a call spells, when it may be one of the project's methods with parameters."""
    func = call.func
    if not isinstance(func, ast.Attribute) or not (call.args or call.keywords):
        return None
    name = func.attr
    if name.startswith("__") or name in _SHARED_NAMES or name in TENSOR_METHODS:
        return None
    return name


def passed_on_methods(node: ast.AST) -> Iterator[str]:
    """Attribute names ``node`` passes on rather than calls: ``register(self.on_step)``,
    ``hook = obj.handle``, ``[self.a, self.b]``, ``return self.fn``."""
    values: list[ast.expr] = []
    if isinstance(node, ast.Call):
        values = [*node.args, *(k.value for k in node.keywords)]
    elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.Return)) and node.value is not None:
        values = [node.value]
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        values = list(node.elts)
    elif isinstance(node, ast.Dict):
        values = [v for v in node.values if v is not None]
    for value in values:
        if isinstance(value, ast.Starred):
            value = value.value
        if isinstance(value, ast.Attribute) and isinstance(value.ctx, ast.Load):
            yield BY_NAME + value.attr
