"""Resolve names and attribute chains to qualified names through the module's imports.

Deliberately not libcst's QualifiedNameProvider: it costs several times the parse. We read
``import`` statements as the single engine pass meets them, which is all rules need: the
qualified name of ``th.tensor`` or ``tensor`` when ``import torch as th`` / ``from torch import
tensor`` came earlier.
"""

from __future__ import annotations

import libcst as cst


def dotted_name(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


class ImportMap:
    """Local name -> fully qualified name, for the names bound by imports."""

    def __init__(self) -> None:
        self._aliases: dict[str, str] = {}

    def record(self, node: cst.Import | cst.ImportFrom) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                full = dotted_name(alias.name)
                if full is None:
                    continue
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    self._aliases[alias.asname.name.value] = full
                else:
                    # ``import torch.nn.functional`` binds ``torch``.
                    head = full.split(".", 1)[0]
                    self._aliases[head] = head
            return
        if isinstance(node.names, cst.ImportStar):
            return
        module = dotted_name(node.module) if node.module is not None else ""
        # Relative imports keep their dots so ``from .gpu_sync_debug import x`` still ends in x.
        prefix = "." * len(node.relative) + (module or "")
        for alias in node.names:
            if not isinstance(alias.name, cst.Name):
                continue
            imported = alias.name.value
            local = imported
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self._aliases[local] = f"{prefix}.{imported}" if prefix else imported

    def qualify(self, node: cst.BaseExpression) -> str | None:
        """Qualified name of a Name/Attribute chain (unchanged head when not imported)."""
        name = dotted_name(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        full = self._aliases.get(head)
        if full is None:
            return name
        return f"{full}.{rest}" if rest else full

    def is_imported(self, local: str) -> bool:
        return local in self._aliases

    def imports_module(self, module: str) -> bool:
        """Whether any import brings in ``module`` or something from it."""
        return any(v == module or v.startswith(module + ".") for v in self._aliases.values())
