"""Functions the module calls only from inside an allowed region (``with gpu_sync_allowed():``).

vLLM accepts some syncs by calling a helper inside the region (``with gpu_sync_allowed():
_synchronize_dp_ranks(...)``); the syncs are in the helper's body, outside the ``with`` as written.
A module function whose every call in the module sits in an allowed region (and is called at
least once) runs only there, so its body counts as allowed too. One extra read-only walk, only
for modules that name an allowed context at all.
"""

from __future__ import annotations

import libcst as cst

from syncllint.analysis.allowed import with_allows
from syncllint.analysis.imports import ImportMap
from syncllint.analysis.local_calls import local_callee
from syncllint.traversal import walk


class _CallSites(cst.CSTVisitor):
    def __init__(self, imports: ImportMap, allowed: tuple[str, ...]) -> None:
        super().__init__()
        self._imports = imports
        self._allowed = allowed
        self._allowing: set[int] = set()
        self._depth = 0
        self.inside: dict[str, bool] = {}  # callee name -> every call so far inside a region
        self.defined: set[str] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.With) and with_allows(node, self._imports, self._allowed):
            self._allowing.add(id(node.body))
        elif id(node) in self._allowing:
            self._depth += 1
        elif isinstance(node, cst.FunctionDef):
            self.defined.add(node.name.value)
        elif isinstance(node, cst.Call):
            callee = local_callee(node.func)
            if callee is not None:
                self.inside[callee] = self.inside.get(callee, True) and self._depth > 0
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if id(original_node) in self._allowing:
            self._depth -= 1


def only_called_when_allowed(
    module: cst.Module, source: str, imports: ImportMap, allowed: tuple[str, ...]
) -> frozenset[str]:
    """Names of module functions every call of which (at least one) is inside an allowed region."""
    short_names = {name.rsplit(".", 1)[-1] for name in allowed}
    if not any(name in source for name in short_names):
        return frozenset()
    sites = _CallSites(imports, allowed)
    walk(module, sites)
    return frozenset(name for name, inside in sites.inside.items() if inside and name in sites.defined)
