"""Turn a rule's FixProposal (node -> replacement node) into text edits."""

from __future__ import annotations

import libcst as cst
from libcst._position import CodeRange

from syncllint.checks.base import FixProposal
from syncllint.config import Settings
from syncllint.diagnostics import Edit, Fix, Location


def build_fix(
    module: cst.Module, proposal: FixProposal, ranges: dict[cst.CSTNode, CodeRange], settings: Settings
) -> Fix | None:
    span = ranges.get(proposal.target)
    if span is None:
        return None
    content = module.code_for_node(proposal.replacement)
    edit = Edit(
        content=content,
        start=Location(span.start.line, span.start.column + 1),
        end=Location(span.end.line, span.end.column + 1),
    )
    return Fix(proposal.applicability, proposal.message, (edit,))
