"""Parameters of a module's private functions that every call in the module fills with host data.

``def _pack(cu_page_offsets): ... cu_page_offsets.cpu()`` is a no-op when every caller in the
module passes ``case["offsets"].cpu()``. Only private functions (``_name``, not dunders) count:
others may be called from anywhere. An argument counts as host data when the call shows it: a
``.cpu()`` / ``.numpy()`` / ``.tolist()`` / ``.to("cpu")`` result, a ``*_cpu`` / ``*_np`` /
``*_host`` name, a torch factory without ``device=``, or a literal. A call that passes ``*args``
or ``**kwargs`` hides which parameter gets what, so its function is left alone; a parameter left to
its default needs a host default.
"""

from __future__ import annotations

import libcst as cst

from syncllint.analysis import torch_api as api
from syncllint.analysis.imports import ImportMap
from syncllint.analysis.module_index import ModuleIndex

_HOST_METHODS = frozenset(("cpu", "numpy", "tolist"))


def host_parameters(
    index: ModuleIndex, imports: ImportMap, host_suffixes: tuple[str, ...], factories_on_host: bool
) -> dict[str, frozenset[str]]:
    """``name`` / ``self.name`` -> its parameters that every call in the module fills with host data.

    ``factories_on_host``: no default device, so a factory without ``device=`` builds on the host.
    """
    found: dict[str, frozenset[str]] = {}
    for key, definitions in index.keyed_defs.items():
        name = key.rsplit(".", 1)[-1]
        calls = index.call_sites.get(key, [])
        if not name.startswith("_") or name.startswith("__") or len(definitions) != 1 or not calls:
            continue
        host = _host_filled(definitions[0].params, calls, key.startswith("self."), imports, host_suffixes, factories_on_host)
        if host:
            found[key] = host
    return found


def _host_filled(
    params: cst.Parameters,
    calls: list[cst.Call],
    method: bool,
    imports: ImportMap,
    suffixes: tuple[str, ...],
    factories_on_host: bool,
) -> frozenset[str]:
    positional = [p for p in (*params.posonly_params, *params.params)][1 if method else 0:]
    named = {p.name.value: p for p in (*positional, *params.kwonly_params)}
    host = set(named)
    for call in calls:
        if any(arg.star for arg in call.args):
            return frozenset()
        given: dict[str, cst.BaseExpression] = {}
        for index, arg in enumerate(a for a in call.args if a.keyword is None):
            if index < len(positional):
                given[positional[index].name.value] = arg.value
        for arg in call.args:
            if arg.keyword is not None:
                given[arg.keyword.value] = arg.value
        for name in list(host):
            value = given.get(name, named[name].default)
            if value is None or not _shows_host(value, imports, suffixes, factories_on_host):
                host.discard(name)
    return frozenset(host)


def _shows_host(expr: cst.BaseExpression, imports: ImportMap, suffixes: tuple[str, ...], factories: bool) -> bool:
    if isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString, cst.List, cst.Tuple, cst.Dict)):
        return True
    if isinstance(expr, cst.Name) and expr.value in ("None", "True", "False"):
        return True
    if isinstance(expr, (cst.Name, cst.Attribute)):
        leaf = expr.value if isinstance(expr, cst.Name) else expr.attr.value
        return leaf.endswith(suffixes) or "_cpu_" in leaf
    if isinstance(expr, cst.Subscript):
        return _shows_host(expr.value, imports, suffixes, factories)
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    if isinstance(func, cst.Attribute):
        if func.attr.value in _HOST_METHODS:
            return True
        if func.attr.value == "to" and expr.args and isinstance(expr.args[0].value, cst.SimpleString):
            return expr.args[0].value.value.strip("\"'").lower() == "cpu"
    qualified = imports.qualify(func) or ""
    if qualified in api.TORCH_FACTORIES:
        return factories and not any(arg.keyword is not None and arg.keyword.value == "device" for arg in expr.args)
    return qualified.startswith("numpy.")
