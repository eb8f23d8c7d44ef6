"""Reading a call's arguments as written: by keyword, by position, a literal ``True`` or string."""

from __future__ import annotations

import libcst as cst

from syncllint.analysis import torch_api as api


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


def may_be_set(flag: cst.BaseExpression | None) -> bool:
    """A flag given and not the literal ``False``: ``non_blocking=True``, or one we cannot read."""
    return flag is not None and not (isinstance(flag, cst.Name) and flag.value == "False")


def named_parameters(params: cst.Parameters) -> tuple[cst.Param, ...]:
    """The parameters a call can name (positional-only, ordinary, keyword-only), in order."""
    return (*params.posonly_params, *params.params, *params.kwonly_params)


def sole_index(subscript: cst.Subscript) -> cst.BaseExpression | None:
    """``x[key]`` -> ``key``: the one plain index of a subscript (no slice, no tuple of them), else None."""
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
        return None
    return subscript.slice[0].slice.value


def string_key(subscript: cst.Subscript) -> str | None:
    """``state["mask"]`` -> ``"mask"``: the one plain string a subscript is keyed by, else None."""
    key = sole_index(subscript)
    text = key.evaluated_value if isinstance(key, cst.SimpleString) else None
    return text if isinstance(text, str) else None


def is_string_literal(node: cst.BaseExpression) -> bool:
    """``"fir"``, ``"a" "b"``, ``f"{x}"``: text written in the code."""
    return isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))


def is_tensor_to(call: cst.Call) -> bool:
    """``x.to(...)`` with only the keywords ``Tensor.to`` / ``nn.Module.to`` take (``**kwargs`` is taken
    on trust): ``data_point.to("cpu", pin_memory=True)`` is some object's own method, no tensor copy."""
    return (
        isinstance(call.func, cst.Attribute)
        and call.func.attr.value == "to"
        and all(arg.keyword is None or arg.keyword.value in api.TENSOR_TO_KEYWORDS for arg in call.args)
    )
