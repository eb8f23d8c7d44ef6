"""Where code runs on the host: which functions treat a tensor of unknown device as a host tensor.

A finding of medium confidence (a tensor whose device the code does not show) drops to low in
host code, so it is hidden by default. Host code is:

- a host module by path (``host-modules``: CPU backends, host KV pools, processors of user input);
- a function named for the CPU (``forward_cpu``, ``gather_cache_cpu``, ``cpu_fallback``), or one of
  the processor hooks of ``host-functions`` (vLLM's ``_get_prompt_updates``, ``get_mrope_input_positions``);
- a method of an input-processing class (``Qwen2VLMultiModalProcessor``, ``...ProcessingInfo``,
  ``...ImageProcessor``, ``...FeatureExtractor``, any ``...Processor`` but a logits processor);
- a function of a test module that shows no accelerator at all (no ``cuda``, no ``device=`` other
  than the CPU, no ``.to(device)``): unit tests that build their tensors on the CPU.

The exception is post-processing (``output-functions``: ``post_process_*`` and the module
functions they call), which reads model outputs on the model's device. On the labelled samples,
syncs in post-processing were what treating whole processor modules as host code missed.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass

import libcst as cst

from syncllint.analysis import torch_api as api
from syncllint.analysis.local_calls import local_callee
from syncllint.traversal import walk

HOST_CLASS_SUFFIXES = (
    "ProcessingInfo", "MultiModalProcessor", "DummyInputsBuilder", "ImageProcessor", "ImageProcessorFast",
    "ImageProcessorPil", "FeatureExtractor", "VideoProcessor",
)
_DEF = re.compile(r"\bdef\s+(\w+)")
TEST_MODULE_PATTERNS = ("test_*.py", "*/test_*.py", "*_test.py", "conftest.py", "*/conftest.py")


@dataclass(frozen=True)
class HostContext:
    module_is_host: bool = False
    # Names of functions that read model outputs (never host code).
    output_side: frozenset[str] = frozenset()
    test_module: bool = False
    # ids of the FunctionDef nodes of a test module whose text shows an accelerator.
    shows_device: frozenset[int] = frozenset()
    # Names of host hooks (``host-functions``) and the module functions they call.
    host_functions: frozenset[str] = frozenset()

    def function_is_host(self, node: cst.FunctionDef, enclosing_class: str | None, parent_is_host: bool) -> bool:
        name = node.name.value
        if name in self.output_side:
            return False
        if parent_is_host or self.module_is_host or _named_for_cpu(name):
            return True
        if name in self.host_functions:
            return True
        if enclosing_class is not None and _is_host_class(enclosing_class):
            return True
        return self.test_module and id(node) not in self.shows_device


def host_context(
    module: cst.Module,
    path: str,
    source: str,
    host_modules: Iterable[str],
    output_functions: Iterable[str],
    host_functions: tuple[str, ...] = (),
) -> HostContext:
    """The host-code facts of one module; the extra walks run only where they can matter."""
    module_is_host = any(fnmatch.fnmatch(path, p) for p in host_modules)
    test_module = any(fnmatch.fnmatch(path, p) for p in TEST_MODULE_PATTERNS)
    output_side: frozenset[str] = frozenset()
    if module_is_host or "Processor" in source or any(suffix in source for suffix in HOST_CLASS_SUFFIXES):
        output_side = output_side_functions(module, output_functions)
    host_named: frozenset[str] = frozenset()
    defined = set(_DEF.findall(source))
    if any(fnmatch.fnmatchcase(name, p) for name in defined for p in host_functions):
        # The hooks' helpers (``_get_feature_tensor`` called from ``get_mrope_input_positions``) too.
        host_named = output_side_functions(module, host_functions) - output_side
    shows_device: frozenset[int] = frozenset()
    if test_module:
        shows_device = _functions_near_a_device(module)
    return HostContext(module_is_host, output_side, test_module, shows_device, host_named)


def _is_host_class(name: str) -> bool:
    """Input processors (``GlmAsrProcessor``, ``...ProcessingInfo``); not logits processors (on the device)."""
    if name.endswith(HOST_CLASS_SUFFIXES):
        return True
    return name.endswith("Processor") and "Logit" not in name


def _named_for_cpu(name: str) -> bool:
    """``forward_cpu``, ``cpu_fallback``; not ``offload_to_cpu`` (whose input is on the device)."""
    lowered = name.lower()
    if "to_cpu" in lowered or "offload" in lowered:
        return False
    return lowered.endswith("_cpu") or "_cpu_" in lowered or lowered.startswith("cpu_")


class _CallGraph(cst.CSTVisitor):
    """Per function name (methods and functions alike): the names it calls directly."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: dict[str, set[str]] = {}
        self._stack: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.FunctionDef):
            self._stack.append(node.name.value)
            self.calls.setdefault(node.name.value, set())
        elif isinstance(node, cst.Call) and self._stack:
            callee = local_callee(node.func)
            if callee is not None:
                self.calls[self._stack[-1]].add(callee)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if isinstance(original_node, cst.FunctionDef):
            self._stack.pop()


def output_side_functions(module: cst.Module, patterns: Iterable[str]) -> frozenset[str]:
    """Names of the functions matching ``patterns`` and of every module function they reach."""
    graph = _CallGraph()
    walk(module, graph)
    wanted = tuple(patterns)
    seeds = {name for name in graph.calls if any(fnmatch.fnmatchcase(name, p) for p in wanted)}
    return frozenset(seeds | (_closure(seeds, graph.calls) & graph.calls.keys()))


class _DeviceEvidence(_CallGraph):
    """Functions of a test module whose text shows an accelerator, and the module's call graph."""

    def __init__(self) -> None:
        super().__init__()
        self.showing: set[str] = set()
        self.defs: dict[str, list[int]] = {}

        # Per enclosing function: parameters that default to the CPU (``def tiny_model(device="cpu")``).
        self._cpu_params: list[frozenset[str]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        super().on_visit(node)
        if isinstance(node, cst.FunctionDef):
            self.defs.setdefault(node.name.value, []).append(id(node))
            self._cpu_params.append(_cpu_default_params(node.params))
        elif self._stack and _shows_device(node, self._cpu_params[-1]):
            self.showing.update(self._stack)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        super().on_leave(original_node)
        if isinstance(original_node, cst.FunctionDef):
            self._cpu_params.pop()


def _cpu_default_params(params: cst.Parameters) -> frozenset[str]:
    return frozenset(
        p.name.value
        for p in (*params.params, *params.kwonly_params)
        if isinstance(p.default, cst.SimpleString) and p.default.value.strip("\"'").lower() == "cpu"
    )


def _functions_near_a_device(module: cst.Module) -> frozenset[int]:
    """The functions that show a device, those that call one of them, and those they call.

    A test that calls ``_make_inputs()`` (which builds on ``"cuda"``) gets device tensors, and so
    does a helper that a test on ``"cuda"`` calls with its tensors. A CPU test that shares that
    helper shows nothing itself and stays host code.
    """
    evidence = _DeviceEvidence()
    walk(module, evidence)
    callers: dict[str, set[str]] = {name: set() for name in evidence.calls}
    for caller, callees in evidence.calls.items():
        for callee in callees & callers.keys():
            callers[callee].add(caller)
    reached = set(evidence.showing)
    reached |= _closure(evidence.showing, callers)  # callers, transitively
    reached |= _closure(evidence.showing, evidence.calls)  # callees, transitively
    return frozenset(node_id for name in reached for node_id in evidence.defs.get(name, ()))


def _closure(start: Iterable[str], edges: dict[str, set[str]]) -> set[str]:
    found: set[str] = set()
    pending = list(start)
    while pending:
        for other in edges.get(pending.pop(), ()):
            if other not in found:
                found.add(other)
                pending.append(other)
    return found


def _shows_device(node: cst.CSTNode, cpu_names: frozenset[str] = frozenset()) -> bool:
    """``"cuda:0"``, ``x.cuda()``, ``torch.cuda...``, ``on_gpu``, ``device=dev``, ``.to(device)``."""
    if isinstance(node, cst.SimpleString):
        text = node.value.lstrip("rbuRBU").strip("\"'").lower()
        # ``"cuda"``, ``"cuda:0"``; not prose (a docstring saying "single GPU").
        return text.startswith(api.ACCELERATOR_PREFIXES) and " " not in text
    if isinstance(node, cst.Name):
        lowered = node.value.lower()
        return "cuda" in lowered or "gpu" in lowered
    if isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value == "device":
        return _is_variable_device(node.value, cpu_names)
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "to":
        return any(a.keyword is None and _is_variable_device(a.value, cpu_names) for a in node.args[:1])
    return False


def _is_variable_device(expr: cst.BaseExpression, cpu_names: frozenset[str]) -> bool:
    """A device held in a name (``device``, ``self.device``, ``torch_device``): the CPU is spelled out,
    and so is a parameter defaulting to it."""
    if isinstance(expr, cst.Name) and expr.value in cpu_names:
        return False
    leaf = expr.attr.value if isinstance(expr, cst.Attribute) else expr.value if isinstance(expr, cst.Name) else ""
    return "device" in leaf.lower() or leaf.lower() == "dev"
