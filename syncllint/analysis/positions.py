"""Source positions for the few nodes that are reported.

libcst's PositionProvider records a range for every node of the module and, through
MetadataWrapper, deep-copies the tree first. We only need ranges for reported nodes, so we run
one code-generation pass over the module we already have (no copy) and keep what we need.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import libcst as cst
from libcst._position import CodePosition, CodeRange
from libcst.metadata.position_provider import PositionProvidingCodegenState


@dataclass
class _Sink:
    """Stands in for the metadata provider the codegen state writes into."""

    _computed: dict[cst.CSTNode, CodeRange] = field(default_factory=dict)


class _TargetedState(PositionProvidingCodegenState):
    """Records syntactic positions without whitespace-inclusive ones (half the work)."""

    @contextmanager
    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> Iterator[None]:
        start = CodePosition(self.line, self.column)
        try:
            yield
        finally:
            computed: dict[cst.CSTNode, CodeRange] = self.provider._computed  # type: ignore[assignment]
            if start_node is not None and start_node in computed:
                start = computed[start_node].start
            end = CodePosition(self.line, self.column)
            if end_node is not None and end_node in computed:
                end = computed[end_node].end
            computed[node] = CodeRange(start, end)

    def after_codegen(self, node: cst.CSTNode) -> None:
        self._stack.pop()


def node_ranges(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[cst.CSTNode, CodeRange]:
    """Ranges (1-based lines, 0-based columns) of ``nodes``, excluding surrounding whitespace."""
    wanted = list(nodes)
    if not wanted:
        return {}
    sink = _Sink()
    state = _TargetedState(
        default_indent=module.default_indent,
        default_newline=module.default_newline,
        provider=sink,  # type: ignore[arg-type]
    )
    module._codegen(state)
    return {node: sink._computed[node] for node in wanted if node in sink._computed}
