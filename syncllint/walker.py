"""The engine's single pass: shared analyses kept up to date, every rule dispatched per node."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass, replace

import libcst as cst

from syncllint.analysis.allowed import with_allows
from syncllint.analysis.blocks import BlockFacts
from syncllint.analysis.devices import DeviceInference
from syncllint.analysis.function_kinds import (
    exposes_device_memory,
    is_compiled,
    is_torch_module,
)
from syncllint.analysis.gathered import (
    note_gathered_objects,
    note_values_copied_to_host,
)
from syncllint.analysis.growing import note_growth
from syncllint.analysis.host_context import HostContext
from syncllint.analysis.host_helpers import HostHelperCalls
from syncllint.analysis.host_regions import (
    HOST_FUNCTION,
    OFF_CUDA_REGION,
    names_a_lazy_device,
)
from syncllint.analysis.imports import ImportMap
from syncllint.analysis.loops import bind_loop_target
from syncllint.analysis.module_state import note_module_moved, note_registered_state
from syncllint.analysis.object_usage import ClassUsage, FunctionUsage
from syncllint.analysis.values import (
    PYTHON,
    DeviceLiteral,
    Place,
)
from syncllint.checks.base import FixProposal, Rule, RuleContext
from syncllint.diagnostics import Confidence
from syncllint.traversal import ends_flow, subclasses

Visitor = Callable[[cst.CSTNode, RuleContext], None]


_COMPOUND = (
    cst.If, cst.For, cst.While, cst.With, cst.Try, cst.TryStar, cst.FunctionDef, cst.ClassDef, cst.Match,
)


def _kinds(*bases: type) -> frozenset[type]:
    """Every class that is a ``bases`` (``isinstance`` is slow on libcst's ABC hierarchy; a set
    lookup of ``type(node)`` answers the same for every node class libcst defines)."""
    return frozenset(set(bases) | subclasses(*bases))


_STATEMENT_KINDS = _kinds(cst.SimpleStatementLine, *_COMPOUND)
_COMPREHENSION_KINDS = _kinds(cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
_SUITE_KINDS = _kinds(cst.BaseSuite)
_ENTER_KINDS = _kinds(
    cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Del, cst.Import, cst.ImportFrom, cst.FunctionDef, cst.Lambda,
    cst.ClassDef, cst.With, cst.For, cst.While, cst.Annotation, cst.BooleanOperation, cst.IfExp,
) | _STATEMENT_KINDS | _COMPREHENSION_KINDS | _SUITE_KINDS
_LEAVE_KINDS = _kinds(
    cst.Assign, cst.AnnAssign, cst.AugAssign, cst.NamedExpr, cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Expr, cst.Call,
    cst.Annotation, cst.Assert, cst.BooleanOperation,
) | _STATEMENT_KINDS | _COMPREHENSION_KINDS | _SUITE_KINDS


@dataclass(frozen=True)
class RawFinding:
    """A finding before positions are known."""

    rule: Rule
    node: cst.CSTNode
    statement: cst.CSTNode | None
    message: str
    confidence: Confidence
    hot_path: bool
    fix: FixProposal | None
    function: str | None = None  # the keyed name of the innermost function (``self.name`` for methods)

    def in_host_code(self) -> RawFinding:
        """As reported in host code: a medium finding there reads a tensor that lives on the host."""
        if self.confidence is Confidence.MEDIUM and not self.rule.kept_in_host_code:
            return replace(self, confidence=Confidence.LOW)
        return self


@dataclass(frozen=True)
class _EnclosingClass:
    torch_module: bool  # an ``nn.Module``: its ``__init__`` builds layers
    host: bool  # its methods are host code (``HostContext.class_is_host``)


class BatchedWalker(cst.CSTVisitor):
    # The project's host->device helper ("pkg.mod:func"), for fixes that can use it.
    h2d_helper: str | None = None
    # Module functions called only inside allowed regions (``ModuleIndex.only_called_when_allowed``).
    allowed_callees: frozenset[str] = frozenset()
    # Kernels (``ModuleIndex.kernel_bodies``): their bodies run on the device.
    kernel_bodies: frozenset[str] = frozenset()
    # ``id(function)`` -> names its code shows are host tensors (``host_usage.host_shown``).
    host_shown: dict[int, frozenset[str]] = {}

    def __init__(
        self,
        dispatch: dict[str, list[Visitor]],
        imports: ImportMap,
        inference: DeviceInference,
        allowed_contexts: tuple[str, ...],
        hot_path_functions: tuple[str, ...],
        module_imports_torch: bool,
        module_imports_numpy: bool,
        host: HostContext = HostContext(),
    ) -> None:
        super().__init__()
        self._dispatch = dispatch
        self.imports = imports
        self.inference = inference
        self.module_imports_torch = module_imports_torch
        self.module_imports_numpy = module_imports_numpy
        self._host = host
        self._classes: list[_EnclosingClass] = []
        # Where the framework builds models under ``with torch.device(target)`` (vLLM, sglang):
        # factories in an ``nn.Module``'s ``__init__`` build on the accelerator.
        self.builds_models_on_device = False
        self.init_only_methods: frozenset[str] = frozenset()  # run only while an object is built
        self.model_init_functions: frozenset[str] = frozenset()  # module functions only models' ``__init__`` call
        self._blocks = BlockFacts(inference)
        self._store_targets: set[int] = set()
        self._allowed_contexts = allowed_contexts
        self._hot_patterns = hot_path_functions
        self.findings: list[RawFinding] = []
        # Per function: [allowed depth, loop depth, hot?, host code?, compiled?]. Nested defs start
        # fresh: a def written inside ``with gpu_sync_allowed():`` runs later, outside the region.
        self._frames: list[list[int]] = [[0, 0, 0, int(host.module_is_host), 0]]
        self._allowing_bodies: set[int] = set()
        self._loop_bodies: set[int] = set()
        self._statements: list[cst.CSTNode] = []
        self._saved_devices: list[DeviceLiteral | None] = []
        self._default_device_bodies: dict[int, DeviceLiteral | None] = {}
        # Inside a type annotation nothing runs on tensors: ``dict[str, Tensor]`` is no mask index.
        self._annotation_depth = 0
        # Classes and functions named for a lazy XLA device (``XLAStrategy``), innermost last.
        self._lazy_device_scopes: list[int] = []
        self.helper_calls = HostHelperCalls()

    # -- RuleContext ------------------------------------------------------------------------
    def qualify(self, node: cst.BaseExpression) -> str | None:
        return self.imports.qualify(node)

    def report(
        self,
        rule: Rule,
        node: cst.CSTNode,
        message: str,
        confidence: Confidence,
        fix: FixProposal | None = None,
    ) -> None:
        frame = self._frames[-1]
        if frame[0] > 0 or self._annotation_depth:
            return
        if frame[3] == OFF_CUDA_REGION:
            confidence = Confidence.LOW  # ``if current_platform.is_tpu():``: no CUDA queue to wait for
        elif rule.uploads_to_the_device and (self._host.lazy_device_module or self._lazy_device_scopes):
            confidence = Confidence.LOW  # an upload to an XLA device queues a transfer, nothing waits
        statement = self._statements[-1] if self._statements else None
        finding = RawFinding(
            rule, node, statement, message, confidence, bool(frame[1] or frame[2]), fix, self.helper_calls.current
        )
        # Host code (``cpu_attn.py``, ``forward_cpu``, processors, CPU unit tests): unknown tensors
        # live on the host.
        self.findings.append(finding.in_host_code() if frame[3] else finding)

    @property
    def in_host_code(self) -> bool:
        return self._frames[-1][3] == HOST_FUNCTION

    @property
    def in_compiled_function(self) -> bool:
        return bool(self._frames[-1][4])

    def is_store(self, node: cst.CSTNode) -> bool:
        return id(node) in self._store_targets

    # -- traversal --------------------------------------------------------------------------
    def on_visit(self, node: cst.CSTNode) -> bool:
        if type(node) in _ENTER_KINDS:
            self._enter(node)
        # After ``_enter``: an ``elif``'s facts (its ``if`` failed) hold over the values its
        # ``enter_if`` starts from; left in the reverse order.
        if self._blocks.arms and id(node) in self._blocks.arms:
            self._blocks.enter_arm(node)
        for visit in self._dispatch.get(type(node).__name__, ()):
            visit(node, self)
        return True

    def _enter(self, node: cst.CSTNode) -> None:
        if type(node) in _STATEMENT_KINDS:
            self._statements.append(node)
        if type(node) is cst.Annotation:
            self._annotation_depth += 1
            return
        if isinstance(node, cst.Assign):
            for target in node.targets:
                self._store_targets.update(_stored(target.target))
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            self._store_targets.add(id(node.target))
        elif isinstance(node, cst.Del):
            self._store_targets.add(id(node.target))
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)) and names_a_lazy_device(
            node.name.value, is_class=isinstance(node, cst.ClassDef)
        ):
            self._lazy_device_scopes.append(id(node))
        if isinstance(node, (cst.Import, cst.ImportFrom)):
            self.imports.record(node)
        elif isinstance(node, cst.FunctionDef):
            self._enter_function(node)
        elif isinstance(node, cst.Lambda):
            self._frames.append([0, 0, self._frames[-1][2], self._frames[-1][3], self._frames[-1][4]])
            self.inference.enter_function()
            self.inference.bind_parameters(node.params, tensor_by_default=False)
        elif isinstance(node, cst.ClassDef):
            self._classes.append(_EnclosingClass(is_torch_module(node), self._host.class_is_host(node)))
            if exposes_device_memory(node):
                self.inference.device_memory_classes.add(node.name.value)
            self.inference.enter_class(ClassUsage(node, self.imports))
        elif isinstance(node, cst.With):
            self._enter_with(node)
        elif isinstance(node, (cst.For, cst.While)):
            self._loop_bodies.add(id(node.body))
            if isinstance(node, cst.For):
                bind_loop_target(self.inference, node.target, node.iter)
        elif isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            self._frames[-1][1] += 1
            comp: cst.CompFor | None = node.for_in
            while comp is not None:
                bind_loop_target(self.inference, comp.target, comp.iter)
                comp = comp.inner_for_in
        elif isinstance(node, cst.BaseSuite):
            self._enter_suite(node)
        elif isinstance(node, cst.If):
            self._blocks.enter_if(node)
        elif isinstance(node, (cst.Try, cst.TryStar)):
            self._blocks.enter_try(node)
        elif isinstance(node, cst.BooleanOperation):
            self._blocks.enter_and(node)
        elif isinstance(node, cst.IfExp):
            self._blocks.enter_conditional(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if self._blocks.arms and id(original_node) in self._blocks.arms:
            self._blocks.leave_arm(original_node)
        if type(original_node) in _LEAVE_KINDS:
            self._leave(original_node)

    def _leave(self, node: cst.CSTNode) -> None:
        if self._lazy_device_scopes and self._lazy_device_scopes[-1] == id(node):
            self._lazy_device_scopes.pop()
        if type(node) is cst.Annotation:
            self._annotation_depth -= 1
            return
        if type(node) in _STATEMENT_KINDS:
            self._statements.pop()
        if isinstance(node, cst.Assign):
            self.inference.bind_assignment([t.target for t in node.targets], node.value)
        elif isinstance(node, cst.AnnAssign):
            self._bind_annotated(node)
        elif isinstance(node, cst.AugAssign):
            value = self.inference.infer(cst.BinaryOperation(node.target, cst.Add(), node.value))
            self.inference.bind(node.target, value)
        elif isinstance(node, cst.NamedExpr):
            self.inference.bind(node.target, self.inference.infer(node.value))
        elif isinstance(node, (cst.FunctionDef, cst.Lambda)):
            self._frames.pop()
            self.inference.exit_function()
            if isinstance(node, cst.FunctionDef):
                self.helper_calls.leave_function()
                self.inference.bind(node.name, PYTHON)
        elif isinstance(node, cst.ClassDef):
            self._classes.pop()
            self.inference.exit_class()
        elif isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            self._frames[-1][1] -= 1
        elif isinstance(node, cst.BaseSuite):
            self._leave_suite(node)
        elif isinstance(node, cst.Expr):
            self._note_default_device_call(node.value)
        elif isinstance(node, cst.Call):
            self.helper_calls.note_call(node, bool(self._frames[-1][3]))
            self.inference.note_call(node)
            note_growth(self.inference, node)
            note_registered_state(self.inference, node)
            note_module_moved(self.inference, node)
            note_gathered_objects(self.inference, node)
        elif isinstance(node, cst.For):
            note_values_copied_to_host(self.inference, node)
        elif isinstance(node, cst.If):
            self._blocks.leave_if(node, self._frames[-1])
        elif isinstance(node, (cst.Try, cst.TryStar)):
            self._blocks.leave_try(node)
        elif isinstance(node, cst.Assert):
            self._blocks.assert_(node)
        elif isinstance(node, cst.BooleanOperation):
            self._blocks.leave_and(node)

    # -- helpers ----------------------------------------------------------------------------
    def _enter_function(self, node: cst.FunctionDef) -> None:
        name = node.name.value
        hot = self._frames[-1][2] or any(fnmatch.fnmatchcase(name, p) for p in self._hot_patterns)
        in_host_class = bool(self._classes) and self._classes[-1].host
        host = self._host.function_is_host(node, in_host_class, bool(self._frames[-1][3]))
        # A kernel (``@triton.jit``) runs on the device, and a helper the module calls only inside
        # ``with gpu_sync_allowed():`` runs there: nothing in either is reported.
        allowed = name in self.kernel_bodies or name in self.allowed_callees
        compiled = self._frames[-1][4] or is_compiled(node, self.imports)
        self._frames.append([int(allowed), 0, int(bool(hot)), int(host), int(compiled)])
        self.inference.enter_function()
        method = bool(self._classes) and len(self._frames) == 2  # in a class body, not in a function
        self.helper_calls.enter_function(node, method)
        filled = self.inference.filled_parameters.get(("self." if method else "") + name, {})
        self.inference.show_usage(FunctionUsage(node))
        shown = self.host_shown.get(id(node), frozenset())
        if shown:  # ``x.numpy()`` in the body: the code itself says ``x`` is a host tensor
            self.inference.show_host(shown)
            filled = {**filled, **dict.fromkeys(shown, Place.HOST_TENSOR)}
        building = name == "__init__" or name in self.init_only_methods
        # A module function only ``__init__`` calls (``_get_alibi_slopes``) runs while the model is built too.
        top_level = not self._classes and len(self._frames) == 2
        in_model = method and self._classes[-1].torch_module or top_level and name in self.model_init_functions
        if building and in_model and self.builds_models_on_device and not host:
            self._default_device_bodies[id(node.body)] = DeviceLiteral.ACCELERATOR
        elif name == "__init__" and method and self.inference.default_device is not DeviceLiteral.ACCELERATOR:
            self.inference.start_building_on_host()
        # ``forward`` of a module gets tensors unless annotated otherwise.
        self.inference.bind_parameters(
            node.params, tensor_by_default=name in ("forward",), filled=filled, docstring=node.get_docstring()
        )

    def _enter_with(self, node: cst.With) -> None:
        if with_allows(node, self.imports, self._allowed_contexts):
            self._allowing_bodies.add(id(node.body))
        for item in node.items:
            call = item.item
            if isinstance(call, cst.Call) and self.imports.qualify(call.func) == "torch.device":
                self._default_device_bodies[id(node.body)] = self.inference.device_spec(call)
                if self._default_device_bodies[id(node.body)] is DeviceLiteral.CPU:
                    self._blocks.mark_host(node.body)
            if item.asname is not None:
                self.inference.bind(item.asname.name, self.inference.infer(item.item))

    def _enter_suite(self, node: cst.BaseSuite) -> None:
        self.inference.enter_block()
        self._blocks.enter_suite(node, self._frames[-1])
        key = id(node)
        if key in self._allowing_bodies:
            self._frames[-1][0] += 1
        if key in self._loop_bodies:
            self._frames[-1][1] += 1
        if key in self._default_device_bodies:
            self._saved_devices.append(self.inference.default_device)
            self.inference.set_default_device(self._default_device_bodies[key])

    def _leave_suite(self, node: cst.BaseSuite) -> None:
        self._blocks.leave_suite(node, self._frames[-1])
        self.inference.leave_block(ends_flow(node))
        key = id(node)
        if key in self._allowing_bodies:
            self._frames[-1][0] -= 1
        if key in self._loop_bodies:
            self._frames[-1][1] -= 1
        if key in self._default_device_bodies:
            self.inference.set_default_device(self._saved_devices.pop())

    def _bind_annotated(self, node: cst.AnnAssign) -> None:
        value = self.inference.infer(node.value) if node.value is not None else None
        if value is None or value.place is Place.UNKNOWN:
            params = cst.Parameters(params=[cst.Param(cst.Name("_"), annotation=node.annotation)])
            self.inference.enter_function()
            self.inference.bind_parameters(params, tensor_by_default=False)
            value = self.inference.lookup("_")
            self.inference.exit_function()
        if value is not None:
            self.inference.bind(node.target, value)

    def _note_default_device_call(self, expr: cst.BaseExpression) -> None:
        if isinstance(expr, cst.Call) and self.imports.qualify(expr.func) == "torch.set_default_device":
            arg = expr.args[0].value if expr.args else None
            self.inference.set_default_device(self.inference.device_spec(arg))


def _stored(target: cst.BaseExpression) -> list[int]:
    """Ids of what an assignment writes: the target, and each element of a tuple or list target
    (``(a[mask], b[mask]) = (0.0, 0.0)`` writes through both masks, reading neither)."""
    ids = [id(target)]
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            ids.extend(_stored(element.value))
    return ids
