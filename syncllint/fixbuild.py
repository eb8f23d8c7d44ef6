"""Small builders that rules use to construct fix replacements as libcst nodes.

Rules keep only the decision (what to rewrite, how safe it is); the node surgery lives here so every
rule writes arguments, keywords and method calls the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from syncllint.analysis.imports import ImportMap

_NO_SPACE = cst.SimpleWhitespace("")
TORCH_IMPORT: tuple[str, str | None] = ("torch", None)


def kwarg(name: str, value: cst.BaseExpression) -> cst.Arg:
    """``name=value`` with no spaces around ``=`` (PEP 8)."""
    return cst.Arg(
        value=value,
        keyword=cst.Name(name),
        equal=cst.AssignEqual(whitespace_before=_NO_SPACE, whitespace_after=_NO_SPACE),
    )


def true() -> cst.Name:
    return cst.Name("True")


def _tidy(args: Sequence[cst.Arg]) -> list[cst.Arg]:
    """Drop the trailing comma of the last argument (a removed argument may have left it)."""
    out = list(args)
    if out and isinstance(out[-1].comma, cst.Comma):
        comma = out[-1].comma
        # Keep a comma that carries a newline or comment (a multi-line call): only drop the plain one.
        if isinstance(comma.whitespace_after, cst.SimpleWhitespace):
            out[-1] = out[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return out


def without_keywords(call: cst.Call, names: Sequence[str]) -> cst.Call:
    kept: list[cst.Arg] = []
    for i, a in enumerate(call.args):
        if a.keyword is not None and a.keyword.value in names:
            if i == len(call.args) - 1 and kept:
                # The last argument goes: the one before takes its comma (a trailing comma and newline).
                kept[-1] = kept[-1].with_changes(comma=a.comma)
            continue
        kept.append(a)
    return call.with_changes(args=_tidy(kept))


def replace_keyword(call: cst.Call, old: str, new: str, value: cst.BaseExpression) -> cst.Call:
    """``old=...`` becomes ``new=value`` in the same slot, so a multi-line call keeps its layout."""
    args = [
        a.with_changes(keyword=cst.Name(new), value=value) if a.keyword is not None and a.keyword.value == old else a
        for a in call.args
    ]
    return call.with_changes(args=args)


def with_keyword(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    """Set ``name=value``: replace an existing keyword in place, else append it."""
    args = list(call.args)
    for i, arg in enumerate(args):
        if arg.keyword is not None and arg.keyword.value == name:
            args[i] = arg.with_changes(value=value)
            return call.with_changes(args=args)
    if args and isinstance(args[-1].comma, cst.Comma):
        return call.with_changes(args=[*args, kwarg(name, value)])
    return call.with_changes(args=[*_tidy(args), kwarg(name, value)])


def method(receiver: cst.BaseExpression, name: str, args: Sequence[cst.Arg] = ()) -> cst.Call:
    return cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name(name)), args=list(args))


def arg(value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(value=value)


def dotted(name: str) -> cst.BaseExpression:
    """``a.b.c`` as an Attribute chain."""
    head, *rest = name.split(".")
    node: cst.BaseExpression = cst.Name(head)
    for part in rest:
        node = cst.Attribute(value=node, attr=cst.Name(part))
    return node


def torch_module(imports: ImportMap) -> tuple[cst.BaseExpression, tuple[tuple[str, str | None], ...]] | None:
    """How to spell ``torch`` in new code, and the import it needs; None when ``torch`` means something else."""
    if imports.is_imported("torch"):
        if imports.qualify(cst.Name("torch")) != "torch":
            return None
        return cst.Name("torch"), ()
    return cst.Name("torch"), (TORCH_IMPORT,)


def is_pure_reference(node: cst.BaseExpression) -> bool:
    """A name or attribute chain: evaluating it twice is the same as once (no call, no side effect)."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def is_fresh_tensor_call(node: cst.BaseExpression) -> bool:
    """A call expression that builds a new tensor nobody else holds (``torch.tensor(...)``)."""
    return isinstance(node, cst.Call)


def pinned_async_copy(source: cst.BaseExpression, to_call: cst.Call, already_pinned: bool) -> cst.Call:
    """``source.pin_memory().to(..., non_blocking=True)`` keeping ``to_call``'s other arguments."""
    staged = source if already_pinned else method(source, "pin_memory")
    moved = to_call.with_changes(func=to_call.func.with_changes(value=staged))
    return with_keyword(moved, "non_blocking", true())


def split_helper(helper: str) -> tuple[str, str]:
    """``"pkg.mod:func"`` -> ``("pkg.mod", "func")``."""
    module, _, name = helper.partition(":")
    return module, name


Imports = tuple[tuple[str, str | None], ...]


def _only_keywords(call: cst.Call, allowed: Sequence[str], positionals: int = 1) -> bool:
    """The call passes at most ``positionals`` plain positional arguments and only ``allowed`` keywords."""
    plain = [a for a in call.args if a.keyword is None]
    if any(a.star for a in plain) or len(plain) > positionals:
        return False
    return all(a.keyword is None or a.keyword.value in allowed for a in call.args)


def _keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def _data(call: cst.Call) -> cst.BaseExpression | None:
    plain = [a.value for a in call.args if a.keyword is None and not a.star]
    return plain[0] if plain else _keyword(call, "data")


def _helper_call(
    helper: str,
    data: cst.BaseExpression,
    device: cst.BaseExpression,
    dtype: cst.BaseExpression | None,
    layout: cst.Call | None = None,
) -> tuple[cst.Call, Imports]:
    """``helper(data, device, dtype=t)``, laid out like ``layout`` (a multi-line call stays multi-line)."""
    module, name = split_helper(helper)
    args = [arg(data), arg(device)] + ([kwarg("dtype", dtype)] if dtype is not None else [])
    call = cst.Call(func=cst.Name(name), args=args)
    if layout is not None and len(layout.args) == len(args):
        # Same number of arguments: reuse the original commas (newlines, trailing comma) in order.
        args = [new.with_changes(comma=old.comma) for new, old in zip(args, layout.args)]
        call = call.with_changes(
            args=args, whitespace_before_args=layout.whitespace_before_args, rpar=layout.rpar, lpar=layout.lpar
        )
    return call, ((module, name),)


def staged_factory(
    call: cst.Call, qualified: str, helper: str | None, data_is_plain: bool
) -> tuple[cst.Call, Imports] | None:
    """``torch.tensor(data, device=d, dtype=t)`` -> pinned staging plus ``.to(d, non_blocking=True)``
    (or the project's helper); None when the call passes something the rewrite cannot carry.

    The helper is used only for plain host data (lists, numbers, numpy arrays): given a tensor that
    is already pinned, vLLM's ``async_tensor_h2d`` copies from it without staging, so later host
    writes to it could race the copy. ``torch.tensor(..., pin_memory=True)`` always copies."""
    device, data = _keyword(call, "device"), _data(call)
    if device is None or data is None or not _only_keywords(call, ("data", "dtype", "device")):
        return None
    dtype = _keyword(call, "dtype")
    if helper is not None and data_is_plain:
        return _helper_call(helper, data, device, dtype, layout=call)
    last = call.args[-1]
    if qualified == "torch.tensor" and last.keyword is not None and last.keyword.value == "device":
        host = replace_keyword(call, "device", "pin_memory", true())  # same slot: a multi-line call keeps its layout
    elif qualified == "torch.tensor":
        host = with_keyword(without_keywords(call, ("device",)), "pin_memory", true())
    else:  # as_tensor / asarray take no pin_memory argument; pin the result instead
        host = method(without_keywords(call, ("device",)), "pin_memory")
    return method(host, "to", [arg(device), kwarg("non_blocking", true())]), ()


def staged_new_tensor(
    call: cst.Call, receiver: cst.BaseExpression, imports: ImportMap, helper: str | None, data_is_plain: bool
) -> tuple[cst.Call, Imports] | None:
    """``x.new_tensor(data)`` -> pinned staging with x's dtype, copied to x's device."""
    data = _data(call)
    if data is None or not is_pure_reference(receiver) or not _only_keywords(call, ("data", "dtype", "device")):
        return None
    dtype = _keyword(call, "dtype") or cst.Attribute(value=receiver, attr=cst.Name("dtype"))
    device = _keyword(call, "device") or cst.Attribute(value=receiver, attr=cst.Name("device"))
    if helper is not None and data_is_plain:
        return _helper_call(helper, data, device, dtype)
    spelled = torch_module(imports)
    if spelled is None:
        return None
    torch_name, needed = spelled
    host = cst.Call(
        func=cst.Attribute(value=torch_name, attr=cst.Name("tensor")),
        args=[arg(data), kwarg("dtype", dtype), kwarg("pin_memory", true())],
    )
    return method(host, "to", [arg(device), kwarg("non_blocking", true())]), needed


def as_statement(call: cst.BaseExpression) -> cst.Expr:
    """An expression statement to replace a small statement (an ``Assign``) with."""
    return cst.Expr(value=call)


def scalar_from_item(item_call: cst.Call, zero_dim: bool) -> cst.BaseExpression | None:
    """``t.item()`` -> ``t`` (known 0-d) or ``t.reshape(())`` (a 1-element tensor of any shape)."""
    if not isinstance(item_call.func, cst.Attribute):
        return None
    receiver = item_call.func.value
    if zero_dim:
        return receiver
    return method(receiver, "reshape", [arg(cst.Tuple(elements=[]))])


def where_copy(
    target: cst.BaseExpression, mask: cst.BaseExpression, value: cst.BaseExpression, torch_name: cst.BaseExpression
) -> cst.Call:
    """``target.copy_(torch.where(mask, value, target))``: in place, so views of target see the write."""
    where = cst.Call(
        func=cst.Attribute(value=torch_name, attr=cst.Name("where")), args=[arg(mask), arg(value), arg(target)]
    )
    return method(target, "copy_", [arg(where)])
