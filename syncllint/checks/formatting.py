"""SYNC503: turning a device tensor into text (``str``, ``print``, f-strings, ``%``, logging)."""

from __future__ import annotations

import libcst as cst

from syncllint.analysis.arguments import is_string_literal
from syncllint.analysis.conditions import value_confidence
from syncllint.analysis.imports import dotted_name
from syncllint.checks.base import Rule, RuleContext
from syncllint.checks.conversions import builtin_name
from syncllint.diagnostics import Confidence
from syncllint.prefilter import DEVICE_TENSOR_EVIDENCE

_TEXT_BUILTINS = frozenset(("str", "repr", "ascii", "format", "print"))
_LOG_METHODS = frozenset(("debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"))
_MESSAGE = (
    "formatting a device tensor as text copies its values to the host (measured: `str(t)` / `print(t)` "
    "sync up to 14 times), so the host waits for the GPU; format a host copy taken where a sync is "
    "already paid, or drop the tensor from the message"
)


def _is_logger(receiver: cst.BaseExpression) -> bool:
    name = (dotted_name(receiver) or "").rsplit(".", 1)[-1].lower()
    return name == "logging" or "log" in name


def _subtree_ids(node: cst.CSTNode) -> set[int]:
    found: set[int] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        found.add(id(current))
        stack.extend(current.children)
    return found


def _names_a_module(expr: cst.BaseExpression) -> bool:
    """``model``, ``self.teacher_model``, ``self.smiles_encoder``: a network, whose text is its structure.
    ``model.to(device)`` reads like a tensor move, but ``str(model)`` reads no tensor values."""
    leaf = (dotted_name(expr) or "").rsplit(".", 1)[-1].lower()
    return leaf.endswith(("model", "module", "encoder", "decoder", "backbone")) or leaf in ("net", "network", "llm")


class TensorToText(Rule):
    code = "SYNC503"
    triggers = DEVICE_TENSOR_EVIDENCE
    name = "tensor-formatted-as-text"
    family = "implicit conversions"
    summary = "`str(t)`, `repr(t)`, `print(t)`, f-strings, `format`, `%` and logging of a device tensor"

    def __init__(self) -> None:
        # Nodes of ``raise`` statements and ``assert`` messages: formatted only on the way to an
        # error, so not a cost of the normal path (reported with low confidence).
        self._error_path: set[int] = set()

    def visit_Module(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        self._error_path.clear()  # one rule object serves every file

    def visit_Raise(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if isinstance(node, cst.Raise) and node.exc is not None:
            self._error_path.update(_subtree_ids(node.exc))

    def visit_Assert(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if isinstance(node, cst.Assert) and node.msg is not None:
            self._error_path.update(_subtree_ids(node.msg))

    def _check(self, expr: cst.BaseExpression, ctx: RuleContext, cap: Confidence = Confidence.HIGH) -> None:
        confidence = value_confidence(ctx.inference.infer(expr))
        if confidence is not None and not _names_a_module(expr):
            if id(expr) in self._error_path:
                cap = Confidence.LOW
            ctx.report(self, expr, _MESSAGE, min(confidence, cap))

    def visit_Call(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if not isinstance(node, cst.Call):
            return
        arguments = [a.value for a in node.args if a.keyword is None and not a.star]
        if builtin_name(node, ctx) in _TEXT_BUILTINS:
            for argument in arguments:
                self._check(argument, ctx)
            return
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        if func.attr.value == "format" and is_string_literal(func.value):
            for argument in [a.value for a in node.args if not a.star]:
                self._check(argument, ctx)
        elif func.attr.value in _LOG_METHODS and _is_logger(func.value):
            # ``logger.info("%s", t)`` formats lazily: it syncs only when the level is enabled
            # (measured: a disabled level does not sync), and debug logging is usually off.
            cap = Confidence.LOW if func.attr.value == "debug" else Confidence.HIGH
            skip = 2 if func.attr.value == "log" else 1
            for argument in arguments[skip:]:
                self._check(argument, ctx, cap)

    def visit_FormattedStringExpression(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if isinstance(node, cst.FormattedStringExpression):
            self._check(node.expression, ctx)

    def visit_BinaryOperation(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if not isinstance(node, cst.BinaryOperation) or not isinstance(node.operator, cst.Modulo):
            return
        if not is_string_literal(node.left):
            return
        right = node.right
        operands = [el.value for el in right.elements] if isinstance(right, cst.Tuple) else [right]
        for operand in operands:
            self._check(operand, ctx)


RULES = (TensorToText,)
