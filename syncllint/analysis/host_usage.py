"""Tensors a function's own code shows are on the host, by what it does with them.

``arr = x.detach().float().numpy()`` raises for a CUDA tensor, and so does ``x.pin_memory()``: code
that does either, outside any device check, works on a host tensor ``x``. So does code uploading
``x.to(device, non_blocking=True)``: an asynchronous copy only a host tensor needs. What holds for ``x``
there holds wherever the function reads it, if ``x`` is bound once (a parameter or one
assignment). It also holds for what the module's callers pass: ``_stats(x)`` calling
``_percentiles(x)``, which reads ``x.numpy()``, gets a host ``x`` too (sglang's dump comparator).
"""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from syncllint.analysis import torch_api as api
from syncllint.analysis.arguments import is_tensor_to, named_parameters
from syncllint.analysis.imports import dotted_name
from syncllint.analysis.local_calls import local_callee
from syncllint.traversal import walk

# Methods that raise for a CUDA tensor: called on a tensor, they show it is on the host.
_HOST_ONLY_METHODS = frozenset(("numpy", "pin_memory"))
# Words in a test that ask where a tensor is: usages under such a test say nothing unconditional.
_DEVICE_WORDS = ("device", "is_cuda", "is_cpu", "cuda", "cpu")
_ROUNDS = 4  # callers of callers: a short chain is enough, and it bounds the work


def host_shown(defs: dict[str, list[cst.FunctionDef]], source: str) -> dict[int, frozenset[str]]:
    """``id(function)`` -> its names bound once that its code, or a local callee's, shows are host tensors."""
    if "non_blocking" not in source and not any(f".{method}()" in source for method in _HOST_ONLY_METHODS):
        return {}
    scans = {id(node): _Scan.of(node) for nodes in defs.values() for node in nodes}
    shown: dict[int, frozenset[str]] = {key: frozenset(scan.used) & scan.bound_once for key, scan in scans.items()}
    # Only a name with one definition is followed: which of several a call reaches is unknown.
    single = {key: nodes[0] for key, nodes in defs.items() if len(nodes) == 1}
    for _ in range(_ROUNDS):
        changed = False
        for nodes in defs.values():
            for node in nodes:
                scan = scans[id(node)]
                found = set(shown[id(node)])
                for call in scan.calls:
                    callee = single.get(local_callee(call.func, keyed=True) or "")
                    if callee is not None and callee is not node:
                        found |= _passed(call, callee, shown[id(callee)]) & scan.bound_once
                if found != shown[id(node)]:
                    shown[id(node)] = frozenset(found)
                    changed = True
        if not changed:
            break
    return {key: names for key, names in shown.items() if names}


def _passed(call: cst.Call, callee: cst.FunctionDef, host_params: frozenset[str]) -> set[str]:
    """The caller's names passed as ``callee``'s parameters in ``host_params``."""
    if not host_params:
        return set()
    params = [p.name.value for p in (*callee.params.posonly_params, *callee.params.params)]
    if params and params[0] in ("self", "cls") and isinstance(call.func, cst.Attribute):
        params = params[1:]
    found: set[str] = set()
    for position, arg in enumerate(call.args):
        if arg.star:
            break
        name = arg.keyword.value if arg.keyword is not None else params[position] if position < len(params) else None
        if name in host_params and isinstance(arg.value, cst.Name):
            found.add(arg.value.value)
    return found


class _Scan(cst.CSTVisitor):
    """One function body (not the functions inside it): host-only uses, bindings and local calls."""

    def __init__(self, root: cst.FunctionDef) -> None:
        super().__init__()
        self._root = root
        self._guarded = 0  # depth of device checks and ``try`` bodies around the current node
        self._guards: set[int] = set()
        self.used: set[str] = set()
        self.bindings: dict[str, int] = {}
        self.calls: list[cst.Call] = []

    @classmethod
    def of(cls, node: cst.FunctionDef) -> _Scan:
        scan = cls(node)
        for param in named_parameters(node.params):
            scan._bind(param.name)
        walk(node.body, scan)
        return scan

    @property
    def bound_once(self) -> frozenset[str]:
        return frozenset(name for name, count in self.bindings.items() if count == 1)

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
        if isinstance(node, cst.Try) or (isinstance(node, (cst.If, cst.While)) and _asks_where(node.test)):
            self._guards.add(id(node))
            self._guarded += 1
        elif isinstance(node, cst.Call):
            self._call(node)
        elif isinstance(node, cst.Assign):
            for target in node.targets:
                self._bind(target.target)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            if not isinstance(node, cst.AnnAssign) or node.value is not None:
                self._bind(node.target)
        elif isinstance(node, (cst.For, cst.CompFor)):
            self._bind(node.target)
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            self._bind(node.asname.name)
        elif isinstance(node, cst.NamedExpr):
            self._bind(node.target)
        elif isinstance(node, cst.Del):
            self._bind(node.target)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if id(original_node) in self._guards:
            self._guards.discard(id(original_node))
            self._guarded -= 1

    def _call(self, node: cst.Call) -> None:
        if local_callee(node.func) is not None:
            self.calls.append(node)
        func = node.func
        if self._guarded or not isinstance(func, cst.Attribute):
            return
        if func.attr.value not in _HOST_ONLY_METHODS and not _uploads(node, func.attr.value):
            return
        receiver = func.value
        while (
            isinstance(receiver, cst.Call)
            and isinstance(receiver.func, cst.Attribute)
            and receiver.func.attr.value in api.SAME_PLACE_METHODS
        ):
            receiver = receiver.func.value
        if isinstance(receiver, cst.Name):
            self.used.add(receiver.value)

    def _bind(self, target: cst.BaseExpression) -> None:
        for name in _names(target):
            self.bindings[name] = self.bindings.get(name, 0) + 1


def _names(target: cst.BaseExpression) -> Iterable[str]:
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _names(target.value)


def _uploads(call: cst.Call, method: str) -> bool:
    """``x.to(device, non_blocking=True)`` / ``x.cuda(non_blocking=True)``: an asynchronous upload,
    which only a host tensor needs (``.to("cpu", non_blocking=True)`` is the opposite direction)."""
    if method != "cuda" and not is_tensor_to(call):
        return False
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    flag = keywords.get("non_blocking")
    if not (isinstance(flag, cst.Name) and flag.value == "True"):
        return False
    target = call.args[0].value if call.args and call.args[0].keyword is None else keywords.get("device")
    if method == "to" and target is None:
        return False  # ``x.to(dtype=..., non_blocking=True)``: no move
    if target is None:
        return True
    name = dotted_name(target) or ""
    if name.startswith("torch.") and not name.startswith("torch.device"):
        return False  # ``x.to(torch.float16, non_blocking=True)``: a dtype, not a device
    return not _mentions(target, ("cpu",))


def _asks_where(test: cst.BaseExpression) -> bool:
    return _mentions(test, _DEVICE_WORDS)


def _mentions(node: cst.CSTNode, words: tuple[str, ...]) -> bool:
    """A name, attribute or string inside ``node`` that contains one of ``words`` (no code is rendered:
    this runs on every test of the functions of a module that uploads)."""
    pending = [node]
    while pending:
        current = pending.pop()
        text = (
            current.value.lower() if isinstance(current, (cst.Name, cst.SimpleString))
            else ""
        )
        if any(word in text for word in words):
            return True
        pending.extend(current.children)
    return False
