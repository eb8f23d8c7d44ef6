"""SYNC801: reading the result of a ``non_blocking`` device->host copy before any host wait.

Not a sync but a race: ``t.to("cpu", non_blocking=True)`` returns at once (measured 0.03 ms
behind a 100 ms kernel) and the copy lands later, so reading the host tensor before
``event.synchronize()`` / ``stream.synchronize()`` / ``torch.cuda.synchronize()`` gives stale
or partial values with no error. The device inference tracks which names are still pending in
the current function and forgets them at a host wait.
"""

from __future__ import annotations

import libcst as cst

from syncllint.analysis import torch_api as api
from syncllint.analysis.conditions import truth_tested
from syncllint.analysis.imports import dotted_name
from syncllint.checks.base import Rule, RuleContext
from syncllint.checks.conversions import builtin_name
from syncllint.diagnostics import Confidence

# Methods that do not read the data: metadata, ops queued on a stream after the copy, and views
# (a new header over the same memory; ``reshape`` / ``flatten`` / ``contiguous`` may copy, so read).
_NON_READING_METHODS = (
    api.METADATA_METHODS
    | api.VIEW_METHODS
    | frozenset(("record_stream", "copy_", "to", "cuda", "pin_memory", "share_memory_", "untyped_storage", "numpy"))
)
_READING_BUILTINS = frozenset(
    "int float bool complex str repr print format list tuple sorted max min sum any all".split()
)


class EarlyReadOfAsyncCopy(Rule):
    code = "SYNC801"
    triggers = ("non_blocking",)
    name = "early-read-of-async-copy"
    family = "race hazards"
    summary = "host data of a `non_blocking=True` device->host copy read before any host wait (a race, not a sync)"

    def __init__(self) -> None:
        # Views taken only to be written or handed on (``host[:n].copy_(...)``) are not reads.
        self._not_reads: set[int] = set()

    def visit_Module(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        self._not_reads.clear()  # one rule object serves every file

    def _check(self, expr: cst.BaseExpression, ctx: RuleContext) -> None:
        if id(expr) in self._not_reads or not ctx.inference.is_pending(expr):
            return
        name = dotted_name(expr)
        what = f"`{name}`" if name else "this tensor"
        ctx.report(
            self,
            expr,
            f"race: {what} is filled by a `non_blocking=True` device->host copy that may still be running; "
            "reading it before a host wait gives stale or partial values with no error (this is not a sync). "
            "Record an event after the copy and call `event.synchronize()` before the first read",
            Confidence.HIGH,
        )

    def visit_Call(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if not isinstance(node, cst.Call):
            return
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _NON_READING_METHODS:
            self._not_reads.add(id(func.value))
        elif isinstance(func, cst.Attribute):
            qualified = ctx.qualify(func)
            if not (qualified and qualified.startswith(("torch.", "numpy."))):
                self._check(func.value, ctx)
        reads_arguments = builtin_name(node, ctx) in _READING_BUILTINS or (
            (ctx.qualify(func) or "").startswith("numpy.")
        )
        if reads_arguments:
            for arg in node.args:
                self._check(arg.value, ctx)

    def visit_Subscript(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if isinstance(node, cst.Subscript) and not ctx.is_store(node) and id(node) not in self._not_reads:
            self._check(node.value, ctx)

    def visit_BinaryOperation(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if isinstance(node, cst.BinaryOperation):
            self._check(node.left, ctx)
            self._check(node.right, ctx)

    def visit_Comparison(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if isinstance(node, cst.Comparison):
            if any(isinstance(c.operator, (cst.Is, cst.IsNot)) for c in node.comparisons):
                return
            self._check(node.left, ctx)
            for comparison in node.comparisons:
                self._check(comparison.comparator, ctx)

    def visit_AugAssign(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if isinstance(node, cst.AugAssign):
            self._check(node.target, ctx)

    def visit_FormattedStringExpression(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if isinstance(node, cst.FormattedStringExpression):
            self._check(node.expression, ctx)

    def visit_If(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if isinstance(node, cst.If):
            for operand in truth_tested(node.test):
                self._check(operand, ctx)


RULES = (EarlyReadOfAsyncCopy,)
