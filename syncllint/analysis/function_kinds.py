"""Kinds of definitions the walk treats apart: device kernels, ``nn.Module`` classes and views of
device memory."""

from __future__ import annotations

import libcst as cst

from syncllint.analysis.arguments import keyword
from syncllint.analysis.imports import ImportMap, dotted_name
from syncllint.traversal import walk

# Decorators from these modules compile the function into device code. numba's own (``@cuda.jit``,
# also ``@njit``) compile it away from torch: its body holds no tensor to wait on.
_KERNEL_DECORATOR_MODULES = frozenset(("triton", "cute", "tilelang", "helion", "numba_cuda", "numba"))
_FORWARDS = frozenset(("forward", "forward_native", "forward_cuda"))


def is_kernel(node: cst.FunctionDef, imports: ImportMap) -> bool:
    """``@triton.jit`` (also re-exported: ``vllm.triton_utils.triton.jit``): the body runs on the device."""
    for decorator in node.decorators:
        expr = decorator.decorator
        if isinstance(expr, cst.Call):
            expr = expr.func
        modules = (imports.qualify(expr) or "").split(".")[:-1]
        if any(part in _KERNEL_DECORATOR_MODULES for part in modules):
            return True
    return False


def is_compiled(node: cst.FunctionDef, imports: ImportMap) -> bool:
    """``@torch.compile`` / ``@torch.compile(dynamic=True)``: the body is traced into a graph, where a
    constant built on the device (``torch.tensor(1.0, device=x.device)``) is made by a kernel, not
    copied from the host (measured: benchmarks/probes/compile_truth.h200.torch2.11.json). Not with
    ``backend="eager"``, which runs the traced ops one by one, copies included."""
    for decorator in node.decorators:
        expr = decorator.decorator
        call = expr if isinstance(expr, cst.Call) else None
        if imports.qualify(call.func if call is not None else expr) != "torch.compile":
            continue
        backend = keyword(call, "backend") if call is not None else None
        return not (isinstance(backend, cst.SimpleString) and backend.evaluated_value == "eager")
    return False


def kernel_body(call: cst.Call, imports: ImportMap) -> str | None:
    """``fn`` of ``helion.kernel(fn, config=...)`` / ``triton.jit(fn)``: a kernel built by a call, not
    a decorator. Its body runs on the device too."""
    modules = (imports.qualify(call.func) or "").split(".")[:-1]
    if not any(part in _KERNEL_DECORATOR_MODULES for part in modules) or not call.args:
        return None
    first = call.args[0]
    return first.value.value if first.keyword is None and isinstance(first.value, cst.Name) else None


def is_torch_module(node: cst.ClassDef) -> bool:
    """A class that derives from a ``Module``, or from another class and defines ``forward``: an
    ``nn.Module`` by its shape (a plain class with ``forward``, such as a lazily built runner, is not)."""
    bases = [(dotted_name(base.value) or "").rsplit(".", 1)[-1] for base in node.bases if base.keyword is None]
    if "Module" in bases:
        return True
    if not [name for name in bases if name and name != "object"]:
        return False
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    return any(isinstance(member, cst.FunctionDef) and member.name.value in _FORWARDS for member in body)


def is_dataset(node: cst.ClassDef) -> bool:
    """A ``Dataset`` by its name or a base's (``class _MNIST(Dataset)``, ``PackedDataset``): its
    samples are built in DataLoader workers, on the host."""
    bases = [(dotted_name(base.value) or "").rsplit(".", 1)[-1] for base in node.bases if base.keyword is None]
    return any(name.endswith("Dataset") for name in (node.name.value, *bases))


def exposes_device_memory(node: cst.ClassDef) -> bool:
    """A class that defines ``__cuda_array_interface__`` (a method, a property, or an attribute its
    methods set): its objects describe device memory, so ``torch.as_tensor(obj, device=d)`` wraps
    them without a host copy."""
    finder = _InterfaceFinder()
    walk(node.body, finder)
    return finder.found


class _InterfaceFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.FunctionDef) and node.name.value == _INTERFACE:
            self.found = True
        elif isinstance(node, cst.AssignTarget):
            target = node.target
            name = target.attr.value if isinstance(target, cst.Attribute) else getattr(target, "value", None)
            self.found = self.found or name == _INTERFACE
        return not self.found and not isinstance(node, (cst.ClassDef, cst.Lambda))


_INTERFACE = "__cuda_array_interface__"
