"""One read-only walk over a module for the facts its functions share, before the main walk.

Host code (callers and callees of post-processing and processor hooks, test functions near a
device), helpers only called inside allowed regions, and the arguments private helpers receive
all read the same things: which functions the module defines, which of them each function calls,
and where those calls are. Collecting them in one pass keeps it to one extra walk per file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import libcst as cst

from syncllint.analysis import torch_api as api
from syncllint.analysis.allowed import with_allows
from syncllint.analysis.devices import device_owner
from syncllint.analysis.function_kinds import (
    is_dataset,
    is_kernel,
    is_torch_module,
    kernel_body,
)
from syncllint.analysis.imports import ImportMap
from syncllint.analysis.local_calls import local_callee
from syncllint.traversal import name_assignments, walk


class ModuleIndex(cst.CSTVisitor):
    """Definitions, the call graph and call sites of one module (names of functions and methods)."""

    def __init__(self, imports: ImportMap, allowed: tuple[str, ...], device_evidence: bool) -> None:
        super().__init__()
        self._imports = imports
        self._allowed = allowed
        self._device_evidence = device_evidence
        # ``name`` -> its definitions; ``self.name`` for methods, ``name`` for functions -> the same.
        self.defs: dict[str, list[cst.FunctionDef]] = {}
        self.keyed_defs: dict[str, list[cst.FunctionDef]] = {}
        self.calls: dict[str, set[str]] = {}  # function name -> names it calls directly
        # function name -> the functions defined in its body (a processor hook's replacement closure)
        self.nested: dict[str, set[str]] = {}
        self.call_sites: dict[str, list[cst.Call]] = {}  # ``name`` / ``self.name`` -> its calls
        self.called_outside_allowed: set[str] = set()
        # Device code: ``@triton.jit`` functions and those handed to ``helion.kernel(fn)`` and the like.
        self.kernel_bodies: set[str] = set()
        self.showing_device: set[str] = set()  # functions whose text shows an accelerator
        self.methods: dict[str, set[str]] = {}  # class name -> the names of its methods
        self.dataset_classes: set[str] = set()  # ``Dataset`` classes (``is_dataset``) by name
        self._class_names: list[str] = []
        self._class_is_module: list[bool] = []
        # What the ``__init__`` of a class that is no ``nn.Module`` calls: such an object is built
        # whenever, not while a model is built on its device.
        self.plain_init_calls: set[str] = set()
        self._stack: list[str] = []
        # Per function: device names that are no accelerator (a CPU default, ``device = x.device``).
        self._not_accelerators: list[frozenset[str]] = []
        self._classes = 0
        self._allowing: set[int] = set()
        self._allowed_depth = 0

    @classmethod
    def build(
        cls, module: cst.Module, imports: ImportMap, allowed: tuple[str, ...], device_evidence: bool
    ) -> ModuleIndex:
        index = cls(imports, allowed, device_evidence)
        walk(module, index)
        return index

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.FunctionDef):
            name = node.name.value
            method = self._classes > 0 and not self._stack
            if method:
                self.methods.setdefault(self._class_names[-1], set()).add(name)
            self.defs.setdefault(name, []).append(node)
            if is_kernel(node, self._imports):
                self.kernel_bodies.add(name)
            if self._stack:
                self.nested.setdefault(self._stack[-1], set()).add(name)
            self.keyed_defs.setdefault(("self." if method else "") + name, []).append(node)
            self.calls.setdefault(name, set())
            self._stack.append(name)
            # Only device evidence (test modules) asks which device names are no accelerator.
            self._not_accelerators.append(
                _cpu_default_params(node.params) | _borrowed_devices(node) if self._device_evidence else frozenset()
            )
        elif isinstance(node, cst.ClassDef):
            self._classes += 1
            self._class_names.append(node.name.value)
            self._class_is_module.append(is_torch_module(node))
            if is_dataset(node):
                self.dataset_classes.add(node.name.value)
        elif isinstance(node, cst.With) and self._allowed and with_allows(node, self._imports, self._allowed):
            self._allowing.add(id(node.body))
        elif id(node) in self._allowing:
            self._allowed_depth += 1
        elif isinstance(node, cst.Call):
            self._note_call(node)
        if self._device_evidence and self._stack and _shows_device(node, self._not_accelerators[-1]):
            self.showing_device.update(self._stack)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if isinstance(original_node, cst.FunctionDef):
            self._stack.pop()
            self._not_accelerators.pop()
        elif isinstance(original_node, cst.ClassDef):
            self._classes -= 1
            self._class_names.pop()
            self._class_is_module.pop()
        elif id(original_node) in self._allowing:
            self._allowed_depth -= 1

    def _note_call(self, node: cst.Call) -> None:
        kernel = kernel_body(node, self._imports)
        if kernel is not None:
            self.kernel_bodies.add(kernel)
        callee = local_callee(node.func)
        if callee is None:
            return
        if self._stack:
            self.calls[self._stack[-1]].add(callee)
            if self._stack == ["__init__"] and self._classes and not self._class_is_module[-1]:
                self.plain_init_calls.add(callee)
        keyed = local_callee(node.func, keyed=True)
        if keyed is not None:
            self.call_sites.setdefault(keyed, []).append(node)
        if self._allowed_depth == 0:
            self.called_outside_allowed.add(callee)

    def reached_from(self, seeds: Iterable[str]) -> frozenset[str]:
        """``seeds`` and every module function they call, transitively; a function defined inside
        one of them runs on its behalf (``get_replacement`` closures handed to the framework)."""
        found = set(seeds)
        edges = {name: callees | self.nested.get(name, set()) for name, callees in self.calls.items()}
        return frozenset(found | (closure(found, edges) & self.calls.keys()))

    def only_called_when_allowed(self) -> frozenset[str]:
        """Module functions called at least once, and only from inside allowed regions."""
        called = {callee for callees in self.calls.values() for callee in callees} | {
            key.rsplit(".", 1)[-1] for key in self.call_sites
        }
        return frozenset(name for name in called - self.called_outside_allowed if name in self.defs)


    def only_called_from_init(self) -> frozenset[str]:
        """Module functions that only ``__init__`` calls (directly, or through others of the kind):
        they run while the object is built."""
        callers: dict[str, set[str]] = {}
        for caller, callees in self.calls.items():
            for callee in callees:
                callers.setdefault(callee, set()).add(caller)
        found: set[str] = set()
        changed = True
        while changed:
            changed = False
            for name, who in callers.items():
                if name not in found and name in self.defs and name != "__init__" and who <= found | {"__init__"}:
                    found.add(name)
                    changed = True
        return frozenset(found)


def closure(start: Iterable[str], edges: dict[str, set[str]]) -> set[str]:
    found: set[str] = set()
    pending = list(start)
    while pending:
        for other in edges.get(pending.pop(), ()):
            if other not in found:
                found.add(other)
                pending.append(other)
    return found


def _cpu_default_params(params: cst.Parameters) -> frozenset[str]:
    return frozenset(
        p.name.value
        for p in (*params.params, *params.kwonly_params)
        if isinstance(p.default, cst.SimpleString) and p.default.value.strip("\"'").lower() == "cpu"
    )


def _borrowed_devices(node: cst.FunctionDef) -> frozenset[str]:
    """``device = lengths.device`` at the top of a function: wherever ``lengths`` is, like
    ``device=lengths.device`` itself (no accelerator shown)."""
    return frozenset(
        name
        for name, value in name_assignments(node.body)
        if isinstance(owner := device_owner(value), cst.Name) and owner.value not in ("self", "cls")
    )


_GPU_TOPOLOGY = re.compile(r"gpus|(?:^|_)(?:single|multi|num|n|per)_gpu")


def _shows_device(node: cst.CSTNode, not_accelerators: frozenset[str] = frozenset()) -> bool:
    """``"cuda:0"``, ``x.cuda()``, ``torch.cuda...``, ``on_gpu``, ``device=dev``, ``.to(device)``."""
    if isinstance(node, cst.SimpleString):
        text = node.value.lstrip("rbuRBU").strip("\"'").lower()
        # ``"cuda"``, ``"cuda:0"``; not prose (a docstring saying "single GPU").
        return text.startswith(api.ACCELERATOR_PREFIXES) and " " not in text
    if isinstance(node, cst.Name):
        lowered = node.value.lower()
        # ``x_gpu``, ``on_gpu``; not a count or a topology (``num_gpus``, ``single_gpu``, ``per_gpu``).
        return "cuda" in lowered or "gpu" in lowered and not _GPU_TOPOLOGY.search(lowered)
    if isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value == "device":
        return _is_variable_device(node.value, not_accelerators)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "to":
        return any(a.keyword is None and _is_variable_device(a.value, not_accelerators) for a in node.args[:1])
    return False


# Objects whose ``.device`` is the process's accelerator (Accelerate's ``Accelerator``,
# ``PartialState``, ``AcceleratorState``), not some tensor's placement.
_RUN_STATE_OBJECTS = frozenset(("accelerator", "state", "partial_state", "accelerator_state", "distributed_state"))


def _is_variable_device(expr: cst.BaseExpression, not_accelerators: frozenset[str]) -> bool:
    """A device held in a name (``device``, ``self.device``, ``torch_device``): the CPU is spelled out,
    and so is a parameter defaulting to it."""
    if isinstance(expr, cst.Name) and expr.value in not_accelerators:
        return False
    if (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name)
            and expr.value.value not in ("self", "cls") and expr.value.value.lower() not in _RUN_STATE_OBJECTS):
        return False  # ``device=q.device``: wherever ``q`` is, which the test shows elsewhere if at all
    leaf = expr.attr.value if isinstance(expr, cst.Attribute) else expr.value if isinstance(expr, cst.Name) else ""
    return "device" in leaf.lower() or leaf.lower() == "dev"
