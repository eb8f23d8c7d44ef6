"""Private helpers that only host code calls: their unknown tensors are host tensors too.

A kernel module dispatches on where its input lives and keeps a plain-torch reference path for
the rest::

    def _swiglu_torch(x, n, out):        # no device check of its own
        out[: n].copy_(...)              # a tensor bound: host data here
    def swiglu(x, n, out):
        if not x.is_cuda:
            return _swiglu_torch(x, n, out)
        ...

The helper runs only for host tensors, as the block that calls it does. The walk sees the call
sites only after it has reported the helper (defined first), so its findings are lowered when the
module is done: medium ones drop to low, as in a host region. Only a private function (``_name``)
with one definition, called at least once and never named but to be called, qualifies: anything
else may be called from elsewhere, with other data.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import libcst as cst

from syncllint.analysis.local_calls import local_callee


@dataclass(frozen=True)
class _Site:
    caller: str | None  # the keyed name of the function the call is in (None: module level)
    in_host_code: bool  # in a host region or host function of the caller


class HostHelperCalls:
    """Collects the module's calls of its private functions during the walk."""

    def __init__(self) -> None:
        self._functions: list[str] = []  # keyed names of the functions the walk is in, innermost last
        self._sites: dict[str, list[_Site]] = {}

    @property
    def current(self) -> str | None:
        return self._functions[-1] if self._functions else None

    def enter_function(self, node: cst.FunctionDef, method: bool) -> None:
        self._functions.append(("self." if method else "") + node.name.value)

    def leave_function(self) -> None:
        self._functions.pop()

    def note_call(self, call: cst.Call, in_host_code: bool) -> None:
        callee = local_callee(call.func, keyed=True)
        if callee is not None and _is_private(callee):
            self._sites.setdefault(callee, []).append(_Site(self.current, in_host_code))

    def helpers(self, defined: dict[str, list[cst.FunctionDef]], source: str) -> frozenset[str]:
        """Keyed names of the private functions every call of which runs in host code, directly or
        from another such helper."""
        if not self._sites:
            return frozenset()
        leaves = {_leaf(name) for name in self._sites}
        # How often each called name appears in the source at all, counted in one pass.
        mentions = Counter(word for word in re.findall(r"\w+", source) if word in leaves)
        candidates = {
            name for name, sites in self._sites.items()
            # One definition, and named only there and where it is called (no callback hands it on).
            if len(defined.get(name, ())) == 1 and mentions[_leaf(name)] == len(sites) + 1
        }
        found: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name in candidates - found:
                if all(site.in_host_code or site.caller in found for site in self._sites[name]):
                    found.add(name)
                    changed = True
        return frozenset(found)


def _leaf(keyed: str) -> str:
    return keyed.rsplit(".", 1)[-1]


def _is_private(keyed: str) -> bool:
    name = _leaf(keyed)
    return name.startswith("_") and not name.startswith("__")
