"""What a rule is, and what it sees while the engine walks a file.

A rule is a class with a code, a name and ``visit_<NodeType>(node, ctx)`` methods (libcst node
class names). The engine instantiates every selected rule once and calls all of them from one
batched pass over the tree, so a rule never walks the tree itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Protocol

import libcst as cst

from syncllint.analysis.devices import DeviceInference
from syncllint.analysis.imports import ImportMap
from syncllint.analysis.values import NONE_BY_DEFAULT, NONE_FROM_CALLERS, Place, Value
from syncllint.diagnostics import Applicability, Confidence, Severity


@dataclass(frozen=True)
class FixProposal:
    """Replace ``target`` with ``replacement``; the engine turns it into text edits."""

    target: cst.CSTNode
    replacement: cst.CSTNode
    applicability: Applicability
    message: str
    # ``(module, name)`` pairs the new code needs, e.g. ``("torch", None)`` for ``import torch``.
    imports: tuple[tuple[str, str | None], ...] = ()


class RuleContext(Protocol):
    """The engine's view handed to rules."""

    inference: DeviceInference
    imports: ImportMap
    module_imports_torch: bool
    module_imports_numpy: bool
    h2d_helper: str | None
    @property
    def in_host_code(self) -> bool:
        """Inside host code (a host module, a CPU-named function, a processor, a CPU unit test)."""
        ...

    @property
    def in_compiled_function(self) -> bool:
        """Inside a ``@torch.compile``d function (or a def or lambda nested in one)."""
        ...

    def report(
        self,
        rule: Rule,
        node: cst.CSTNode,
        message: str,
        confidence: Confidence,
        fix: FixProposal | None = None,
    ) -> None: ...

    def qualify(self, node: cst.BaseExpression) -> str | None: ...

    def is_store(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` is assigned to (an assignment, ``del`` or loop target)."""
        ...


class Rule:
    """Base class of every rule."""

    code: ClassVar[str]
    name: ClassVar[str]
    family: ClassVar[str]
    summary: ClassVar[str]  # one line for the rule table
    enabled_by_default: ClassVar[bool] = True
    # None: error on hot paths, warning elsewhere. Explicit waits pin INFO.
    fixed_severity: ClassVar[Severity | None] = None
    fix_applicability: ClassVar[Applicability | None] = None
    # Substrings (matched case-insensitively) of which at least one occurs in the text of every
    # file where this rule can report; files with none of the selected rules' triggers are not
    # parsed (syncllint/prefilter.py, which also has placeholders for the configured suffixes).
    # None promises nothing: the rule runs on every file. A wrong list loses findings, so list
    # every way the rule can fire; tests/test_prefilter.py compares runs with and without.
    triggers: ClassVar[tuple[str, ...] | None] = None
    # Host code makes a tensor of unknown device a host tensor, which lowers most findings; a
    # host->device copy with a device argument only gets more certain there.
    kept_in_host_code: ClassVar[bool] = False
    # A host->device upload: no wait when the device is a lazy XLA device (the walker lowers it there).
    uploads_to_the_device: ClassVar[bool] = False

    def visitors(self) -> dict[str, Callable[[cst.CSTNode, RuleContext], None]]:
        """``{"Call": self.visit_Call, ...}`` for the engine's dispatch table."""
        found: dict[str, Callable[[cst.CSTNode, RuleContext], None]] = {}
        for attr in dir(type(self)):
            if attr.startswith("visit_"):
                found[attr[len("visit_"):]] = getattr(self, attr)
        return found


def receiver_confidence(value: Value, ctx: RuleContext) -> Confidence | None:
    """How sure we are that a tensor-only method call on ``value`` reads device memory.

    None means "known host data: do not report".
    """
    if value.place is Place.DEVICE:
        return Confidence.HIGH
    if value.place is Place.TENSOR:
        return Confidence.MEDIUM
    if value.place is Place.UNKNOWN:
        return Confidence.MEDIUM if ctx.module_imports_torch else Confidence.LOW
    return None


def names_an_import(receiver: cst.BaseExpression, ctx: RuleContext) -> bool:
    """``F.cpu()`` with ``from .. import backend as F`` (DGL), ``nd.cpu()`` (MXNet): a method of an
    imported module or function, not of a tensor; such calls name a device or build host data."""
    return (
        isinstance(receiver, cst.Name)
        and ctx.imports.is_imported(receiver.value)
        and ctx.inference.lookup(receiver.value) is None
    )


def variable_device_confidence(device: cst.BaseExpression, ctx: RuleContext) -> Confidence:
    """How sure we are that a device held in a variable is an accelerator (host->device copies).

    ``device=None`` by default: a no-op unless a caller passes one (transformers' rope initialisers
    are all called without), low; so is one every call in the project leaves None. In host code a device that is not the object's own
    (``self.device``, ``self.pool.device``) is most often the host's (``device=image.device`` in an
    image processor), low. Otherwise medium.
    """
    if ctx.inference.infer(device) in (NONE_BY_DEFAULT, NONE_FROM_CALLERS):
        return Confidence.LOW
    if ctx.in_host_code:
        head = device
        while isinstance(head, (cst.Attribute, cst.Subscript)):
            head = head.value
        if not (isinstance(head, cst.Name) and head.value == "self" and head is not device):
            return Confidence.LOW
    return Confidence.MEDIUM


def holds_no_elements(data: cst.BaseExpression) -> bool:
    """``[]`` / ``()`` as a tensor's data, or ``[[]]`` (a shape with a zero in it): a copy of it
    moves nothing (measured: no wait; ``benchmarks/probes/construction_truth.*.json``)."""
    if not isinstance(data, (cst.List, cst.Tuple)):
        return False
    return all(isinstance(e, cst.Element) and holds_no_elements(e.value) for e in data.elements)
