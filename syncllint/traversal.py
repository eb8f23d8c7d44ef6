"""A read-only walk over a libcst tree, several times cheaper than ``module.visit(visitor)``.

``CSTNode.visit`` rebuilds every node it passes through (``_visit_and_replace_children``
constructs and validates a new node even for a read-only ``CSTVisitor``) and calls per-attribute
hooks. The engine only reads, so this walk calls ``on_visit(node)`` / ``on_leave(node)`` on the
original nodes in libcst's own order, without rebuilding anything, and skips whitespace and
punctuation subtrees (``SimpleWhitespace``, ``Comma``, operators, ...) unless asked to keep a kind.

libcst's child order is read once per node class from its ``_visit_and_replace_children``
(``visit_required(self, "func", ...)`` and friends); a class whose order cannot be read is
visited with libcst's own ``visit``. tests/test_traversal.py checks that both walks meet the same nodes in the same order on real code.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from functools import cache

import libcst as cst
from libcst._nodes import op as _op_nodes
from libcst._nodes import whitespace as _whitespace_nodes

from syncllint.analysis.imports import dotted_name


def subclasses(*roots: type) -> set[type]:
    """Every class derived from ``roots`` (not the roots themselves)."""
    found: set[type] = set()
    stack = list(roots)
    while stack:
        children: list[type] = stack.pop().__subclasses__()
        for sub in children:
            if sub not in found:
                found.add(sub)
                stack.append(sub)
    return found


ALL_NODE_TYPES = frozenset(subclasses(cst.CSTNode))
_BRACKETS = {"LeftParen", "RightParen", "LeftSquareBracket", "RightSquareBracket", "LeftCurlyBrace", "RightCurlyBrace"}
# Whitespace, comments, operators and brackets: leaves for every analysis the engine runs.
TRIVIA_TYPES = frozenset(
    t
    for t in ALL_NODE_TYPES
    if t.__module__ in (_whitespace_nodes.__name__, _op_nodes.__name__) or t.__name__ in _BRACKETS
)


@cache
def child_fields(kind: type) -> tuple[str, ...] | None:
    """The fields holding ``kind``'s children, in libcst's visiting order; None when unknown.

    ``_visit_and_replace_children`` names each child field as a string argument
    (``visit_required(self, "func", self.func, visitor)``), so the field names among its code
    object's constants, in order of first appearance, are the visiting order. (Reading the
    constants costs ~0.03 ms a class; ``inspect.getsource`` cost ~0.5 ms.)
    """
    method = getattr(kind, "_visit_and_replace_children", None)
    code = getattr(method, "__code__", None)
    if code is None or not dataclasses.is_dataclass(kind):
        return None
    names = {f.name for f in dataclasses.fields(kind)}
    fields: list[str] = []
    for constant in code.co_consts:
        if isinstance(constant, str) and constant in names and constant not in fields:
            fields.append(constant)
    return tuple(fields)


class Walker:
    """Calls ``on_visit`` / ``on_leave`` of ``visitor`` over a tree, skipping ``skip`` kinds."""

    def __init__(self, visitor: cst.CSTVisitor, keep: Iterable[type] = ()) -> None:
        self._on_visit: Callable[[cst.CSTNode], bool | None] = visitor.on_visit
        self._on_leave: Callable[[cst.CSTNode], None] = visitor.on_leave
        self._visitor = visitor
        self._skip = TRIVIA_TYPES - frozenset(keep)

    def walk(self, node: cst.CSTNode) -> None:
        kind = type(node)
        fields = child_fields(kind)
        if fields is None:
            node.visit(self._visitor)
            return
        if self._on_visit(node):
            skip = self._skip
            for name in fields:
                value = getattr(node, name)
                kind = type(value)
                if kind is tuple or kind is list:
                    for child in value:
                        if type(child) not in skip:
                            self.walk(child)
                elif kind in ALL_NODE_TYPES and kind not in skip:
                    self.walk(value)
        self._on_leave(node)


def walk(node: cst.CSTNode, visitor: cst.CSTVisitor, keep: Iterable[type] = ()) -> None:
    """Visit ``node`` and its descendants with ``visitor`` (read-only), skipping trivia."""
    Walker(visitor, keep).walk(node)


def assignments(suite: cst.BaseSuite) -> Iterator[tuple[cst.BaseAssignTargetExpression, cst.BaseExpression]]:
    """``target = value`` statements with one target, written directly in a block (not in its nested blocks)."""
    for line in suite.body if isinstance(suite, cst.IndentedBlock) else ():
        if not isinstance(line, cst.SimpleStatementLine):
            continue
        for statement in line.body:
            if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
                yield statement.targets[0].target, statement.value


def name_assignments(suite: cst.BaseSuite) -> Iterator[tuple[str, cst.BaseExpression]]:
    """``name = value`` statements written directly in a block (not in its nested blocks)."""
    for target, value in assignments(suite):
        if isinstance(target, cst.Name):
            yield target.value, value


def bound_assignments(suite: cst.BaseSuite) -> Iterator[tuple[str, cst.BaseExpression]]:
    """``name = value`` and ``self.field = value`` statements written directly in a block, by the
    key the inference binds them under (``"x"``, ``"self.cfg.device"``)."""
    for target, value in assignments(suite):
        key = dotted_name(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
        if key is not None and (isinstance(target, cst.Name) or key.startswith("self.")):
            yield key, value


def nested_blocks(suite: cst.BaseSuite) -> Iterator[cst.BaseSuite]:
    """A block and the blocks of its ``if``/loop/``with``/``try``/``match`` statements, nested ones
    included (not those of functions or classes defined there)."""
    yield suite
    for line in suite.body if isinstance(suite, cst.IndentedBlock) else ():
        if isinstance(line, (cst.FunctionDef, cst.ClassDef)) or not isinstance(line, cst.BaseCompoundStatement):
            continue
        for block in blocks_of(line):
            yield from nested_blocks(block)


def nested_name_assignments(suite: cst.BaseSuite) -> Iterator[tuple[str, cst.BaseExpression]]:
    """``name = value`` statements anywhere in a block, its nested blocks included."""
    for block in nested_blocks(suite):
        yield from name_assignments(block)


def blocks_of(statement: cst.BaseCompoundStatement) -> Iterator[cst.BaseSuite]:
    """The blocks a compound statement runs: its body, ``else``/``elif`` arms, handlers, cases."""
    if isinstance(statement, cst.Match):  # its blocks are its cases
        yield from (case.body for case in statement.cases)
        return
    yield statement.body
    if isinstance(statement, cst.If) and statement.orelse is not None:
        yield from (statement.orelse.body,) if isinstance(statement.orelse, cst.Else) else blocks_of(statement.orelse)
    elif isinstance(statement, (cst.For, cst.While)) and statement.orelse is not None:
        yield statement.orelse.body
    elif isinstance(statement, (cst.Try, cst.TryStar)):
        yield from (handler.body for handler in statement.handlers)
        if statement.orelse is not None:
            yield statement.orelse.body
        if statement.finalbody is not None:
            yield statement.finalbody.body


def ends_flow(suite: cst.BaseSuite) -> bool:
    """Whether a block's last statement leaves it (``return``, ``raise``, ``break``, ``continue``)."""
    last: cst.CSTNode | None = None
    if isinstance(suite, cst.IndentedBlock) and suite.body:
        statement = suite.body[-1]
        if isinstance(statement, cst.SimpleStatementLine) and statement.body:
            last = statement.body[-1]
    elif isinstance(suite, cst.SimpleStatementSuite) and suite.body:
        last = suite.body[-1]
    return isinstance(last, (cst.Return, cst.Raise, cst.Break, cst.Continue))
