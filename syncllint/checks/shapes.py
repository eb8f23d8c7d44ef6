"""SYNC302-SYNC308: ops whose output shape depends on tensor values, so the host reads a count back."""

from __future__ import annotations

import libcst as cst

from syncllint.analysis.values import Place
from syncllint.checks.base import FixProposal, Rule, RuleContext
from syncllint.checks.torch_calls import (
    TorchCall,
    TorchCallRule,
    match_torch_call,
    operand_confidence,
    tensor_argument_confidence,
)
from syncllint.diagnostics import Applicability, Confidence


def _is_true(node: cst.BaseExpression | None) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def _is_number(node: cst.BaseExpression | None, value: int) -> bool:
    """A literal ``value`` (``0``, ``0.0``, ``-1``)."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return _is_number(node.expression, -value)
    if isinstance(node, (cst.Integer, cst.Float)):
        try:
            return float(node.value) == value
        except ValueError:
            return False
    return False


def _torch_func(call: TorchCall, name: str) -> tuple[cst.BaseExpression, tuple[tuple[str, str | None], ...]]:
    """``<same prefix>.name`` for a ``torch.x(...)`` call; ``torch.name`` (needing ``import torch``)
    when the function was imported by name."""
    if isinstance(call.node.func, cst.Attribute):
        return call.node.func.with_changes(attr=cst.Name(name)), ()
    return cst.Attribute(cst.Name("torch"), cst.Name(name)), (("torch", None),)


def _kwarg(name: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(
        value=value,
        keyword=cst.Name(name),
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )


def _with_keyword(call: cst.Call, name: str, placeholder: str, drop: tuple[int, ...] = ()) -> cst.Call:
    """``call`` with keyword ``name=PLACEHOLDER`` (replacing one of that name, dropping the
    positional arguments at indexes ``drop``)."""
    kept: list[cst.Arg] = []
    position = 0
    for arg in call.args:
        if arg.keyword is None and not arg.star:
            position += 1
            if position - 1 in drop:
                continue
        elif arg.keyword is not None and arg.keyword.value == name:
            continue
        kept.append(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT))
    kept.append(_kwarg(name, cst.Name(placeholder)))
    return call.with_changes(args=kept)


class NonzeroShape(Rule):
    code = "SYNC302"
    fix_applicability = Applicability.DISPLAY_ONLY
    triggers = ("nonzero", "argwhere", "where")
    name = "nonzero-shape"
    family = "data-dependent shapes"
    summary = "`nonzero` / `argwhere` / one-argument `torch.where` size their result by reading a count back"

    def visit_Call(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        call = match_torch_call(node, ctx, ("nonzero", "argwhere", "where"))
        if call is None:
            return
        # Only ``torch.where(cond)``: the three-argument form is elementwise (measured no sync).
        if call.name == "where" and (
            call.is_method or len(call.node.args) != 1 or call.node.args[0].keyword is not None or call.node.args[0].star
        ):
            return
        confidence = operand_confidence(call, ctx, lookalike_method=call.name == "nonzero")
        if confidence is None:
            return
        spelled = "torch.where(cond)" if call.name == "where" else f"{call.name}()"
        ctx.report(
            self,
            call.node,
            f"`{spelled}` returns one row per true element, so the host waits for the GPU to count them; "
            "use `nonzero_static(size=...)` with a known bound, or keep a mask and `torch.where(m, a, b)`",
            confidence,
            self._fix(call),
        )

    def _fix(self, call: TorchCall) -> FixProposal | None:
        as_tuple = call.arg(99, "as_tuple")
        others = [a for a in call.node.args if a.keyword is None or a.keyword.value != "as_tuple"]
        if len(others) != (0 if call.is_method else 1) or call.operand is None:
            return None
        if as_tuple is not None and not (_is_true(as_tuple) or isinstance(as_tuple, cst.Name) and as_tuple.value == "False"):
            return None  # a flag we cannot read
        size = _kwarg("size", cst.Name("MAX_NONZERO"))
        imports: tuple[tuple[str, str | None], ...] = ()
        if call.is_method:
            assert isinstance(call.node.func, cst.Attribute)
            static: cst.BaseExpression = cst.Call(call.node.func.with_changes(attr=cst.Name("nonzero_static")), [size])
        else:
            func, imports = _torch_func(call, "nonzero_static")
            static = cst.Call(func, [cst.Arg(call.operand), size])
        if call.name == "where" or _is_true(as_tuple):
            static = cst.Call(cst.Attribute(static, cst.Name("unbind")), [cst.Arg(cst.Integer("1"))])
        return FixProposal(
            target=call.node,
            replacement=static,
            applicability=Applicability.DISPLAY_ONLY,
            message="Use `nonzero_static(size=MAX_NONZERO)` with an upper bound on the count (pads with -1)",
            imports=imports,
        )


class MaskedSelect(TorchCallRule):
    code = "SYNC303"
    triggers = ("masked_select",)
    name = "masked-select"
    family = "data-dependent shapes"
    summary = "`masked_select` sizes its result by the number of true mask elements: a sync"
    functions = ("masked_select",)
    other_inputs = ((0, "mask"),)
    message = (
        "`masked_select` returns as many elements as the mask has true values, so the host waits for the "
        "GPU to count them; keep the shape with `torch.where(mask, x, 0)` or `x * mask`"
    )


class UniqueShape(TorchCallRule):
    code = "SYNC304"
    triggers = ("unique",)
    name = "unique"
    family = "data-dependent shapes"
    summary = "`unique` / `unique_consecutive` size their result by the number of distinct values: a sync"
    functions = ("unique", "unique_consecutive")
    lookalike_method = True
    message = (
        "`{name}` returns one element per distinct value, so the host waits for the GPU to count "
        "them; when the values are bounded, count with `scatter_add_`/`index_add_` into a fixed-size tensor"
    )


class RepeatInterleaveTensorRepeats(Rule):
    code = "SYNC305"
    fix_applicability = Applicability.DISPLAY_ONLY
    triggers = ("repeat_interleave",)
    name = "repeat-interleave-tensor-repeats"
    family = "data-dependent shapes"
    summary = "`repeat_interleave` with tensor repeats and no `output_size=` sums the repeats on the host"

    def visit_Call(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        call = match_torch_call(node, ctx, ("repeat_interleave",))
        if call is None or call.has_keyword("output_size"):
            return
        repeats = call.arg(0, "repeats")
        if repeats is None and not call.is_method:
            # ``torch.repeat_interleave(repeats)``: the operand is the repeats tensor itself.
            confidence = operand_confidence(call, ctx)
        elif repeats is None:
            return
        else:
            value = ctx.inference.infer(repeats)
            if tensor_argument_confidence(value) is None:
                return  # Python int repeats do not sync (measured); an unknown is most likely an int
            if call.operand is None or ctx.inference.infer(call.operand).is_host:
                return
            confidence = Confidence.HIGH if value.place is Place.DEVICE else Confidence.MEDIUM
        if confidence is None:
            return
        ctx.report(
            self,
            call.node,
            "`repeat_interleave` with a tensor of repeats must sum them on the host to size its result (a sync); "
            "pass `output_size=` (the total, when the host knows it)",
            confidence,
            FixProposal(
                target=call.node,
                replacement=_with_keyword(call.node, "output_size", "OUTPUT_SIZE"),
                applicability=Applicability.DISPLAY_ONLY,
                message="Pass `output_size=` (the sum of the repeats) when the host knows it",
            ),
        )


class Bincount(TorchCallRule):
    code = "SYNC306"
    triggers = ("bincount",)
    name = "bincount"
    family = "data-dependent shapes"
    summary = "`bincount` reads the largest value back to size its result, even with `minlength=`"
    functions = ("bincount",)
    other_inputs = ((0, "weights"),)
    message = (
        "`bincount` reads the largest value back to size its result, so the host waits for the GPU "
        "(`minlength=` does not avoid it); count into a fixed-size tensor with `index_add_`/`scatter_add_`"
    )


class OneHotWithoutNumClasses(Rule):
    code = "SYNC307"
    fix_applicability = Applicability.DISPLAY_ONLY
    triggers = ("one_hot",)
    name = "one-hot-without-num-classes"
    family = "data-dependent shapes"
    summary = "`F.one_hot` without `num_classes` reads the largest class back to size its result"

    def visit_Call(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        call = match_torch_call(node, ctx, ("one_hot",), namespaces=("torch.nn.functional",), methods=False)
        if call is None:
            return
        num_classes = call.arg(0, "num_classes")
        if num_classes is not None and not _is_number(num_classes, -1):
            return
        confidence = operand_confidence(call, ctx)
        if confidence is None:
            return
        ctx.report(
            self,
            call.node,
            "`one_hot` without `num_classes` reads the largest class index back to size its result (a sync); "
            "pass `num_classes=`",
            confidence,
            FixProposal(
                target=call.node,
                replacement=_with_keyword(call.node, "num_classes", "NUM_CLASSES", drop=(1,)),
                applicability=Applicability.DISPLAY_ONLY,
                message="Pass `num_classes=` (the number of classes)",
            ),
        )


class HistcDefaultRange(Rule):
    code = "SYNC308"
    fix_applicability = Applicability.DISPLAY_ONLY
    triggers = ("histc",)
    name = "histc-default-range"
    family = "data-dependent shapes"
    summary = "`histc` with the default `min=0, max=0` reads the data's range back to the host"

    def visit_Call(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        call = match_torch_call(node, ctx, ("histc",))
        if call is None:
            return
        low, high = call.arg(1, "min"), call.arg(2, "max")
        if not all(bound is None or _is_number(bound, 0) for bound in (low, high)):
            return  # an explicit range: no sync (measured)
        confidence = operand_confidence(call, ctx)
        if confidence is None:
            return
        offset = 0 if call.is_method else 1
        replacement = _with_keyword(call.node, "min", "MIN_VALUE", drop=(offset + 1, offset + 2))
        replacement = _with_keyword(replacement, "max", "MAX_VALUE")
        ctx.report(
            self,
            call.node,
            "`histc` with the default range (`min=0, max=0`) takes the range from the data, which the host "
            "reads back (a sync); pass explicit `min=` and `max=`",
            confidence,
            FixProposal(
                target=call.node,
                replacement=replacement,
                applicability=Applicability.DISPLAY_ONLY,
                message="Pass explicit `min=` and `max=` bounds",
            ),
        )


RULES = (
    NonzeroShape,
    MaskedSelect,
    UniqueShape,
    RepeatInterleaveTensorRepeats,
    Bincount,
    OneHotWithoutNumClasses,
    HistcDefaultRange,
)
