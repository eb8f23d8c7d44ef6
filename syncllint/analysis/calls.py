"""Device inference for calls: torch factories, numpy and builtins (tensor methods: ``method_calls``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from syncllint.analysis import torch_api as api
from syncllint.analysis.imports import dotted_name
from syncllint.analysis.ranks import factory_rank
from syncllint.analysis.values import (
    ACCELERATOR_DEVICE,
    CPU_DEVICE,
    DEVICE_MODULE,
    DEVICE_TENSOR,
    EVENT,
    HF_TENSORS,
    HOST_TENSOR,
    NUMPY,
    PYTHON,
    PYTHON_SCALAR,
    STREAM,
    TENSOR,
    UNKNOWN,
    DeviceLiteral,
    DType,
    Place,
    Value,
    combine_operands,
    compare_operands,
)

if TYPE_CHECKING:
    from syncllint.analysis.imports import ImportMap

_DTYPE_BY_NAME = {
    "bool": DType.BOOL,
    **dict.fromkeys("int8 int16 int32 int64 uint8 uint16 uint32 uint64 long int short".split(), DType.INT),
    **dict.fromkeys(
        "float16 float32 float64 bfloat16 half float double float8_e4m3fn float8_e5m2".split(), DType.FLOAT
    ),
}


_JOINS = frozenset(
    "torch." + n for n in "cat concat concatenate stack hstack vstack dstack column_stack row_stack".split()
)
_TORCH_FULL_REDUCTIONS = frozenset(
    "torch." + n for n in "sum mean max min prod amax amin argmax argmin any all count_nonzero norm".split()
)


def looks_up_a_torch_dtype(node: cst.BaseExpression, qualify: Callable[[cst.BaseExpression], str | None]) -> bool:
    """``getattr(torch, weight_info["dtype"])``: a dtype read off the torch module by name (devices
    are not attributes of it), the cast target of ``.to(...)``."""
    return (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value == "getattr"
        and len(node.args) >= 2
        and qualify(node.args[0].value) == "torch"
    )


def names_the_meta_device(target: cst.BaseExpression) -> bool:
    """``"meta"`` / ``torch.device("meta")``: a device that holds no data (measured on an H200:
    ``.to("meta")`` does not wait), though what is built there is often filled on a GPU later."""
    if isinstance(target, cst.Call) and isinstance(target.func, (cst.Attribute, cst.Name)) and target.args:
        name = target.func.attr.value if isinstance(target.func, cst.Attribute) else target.func.value
        if name == "device" and target.args[0].keyword is None:
            target = target.args[0].value
    return isinstance(target, cst.SimpleString) and target.value.strip("\"'").strip().lower() == "meta"


def keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def positional(call: cst.Call, index: int) -> cst.BaseExpression | None:
    pos = [a for a in call.args if a.keyword is None and not a.star]
    return pos[index].value if index < len(pos) else None


def is_true(node: cst.BaseExpression | None) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def _is_python_scalar(node: cst.BaseExpression | None, infer: Callable[[cst.BaseExpression], Value]) -> bool:
    """A number literal, or a name known to hold a Python number (not a list: ``torch.tensor(ids)``)."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.expression, (cst.Integer, cst.Float)):
        return True
    if node is None or not isinstance(node, (cst.Name, cst.Attribute)):
        return False
    value = infer(node)
    return value.place is Place.PYTHON and value.zero_dim


# torch functions whose result is known by name alone (API lists as data, in order).
_RESULT_BY_API = (
    (api.STREAM_FACTORIES, STREAM),
    (api.EVENT_FACTORIES, EVENT),
    (api.TORCH_PYTHON_RESULT_FUNCTIONS, PYTHON_SCALAR),
    (api.TORCH_ANY_RESULT_FUNCTIONS, UNKNOWN),
)


class CallInference:
    """Mixin of DeviceInference; ``infer`` and ``imports`` come from there."""

    imports: ImportMap
    # Module classes exposing ``__cuda_array_interface__``: their objects are views of device memory.
    device_memory_classes: set[str]

    if TYPE_CHECKING:  # provided by DeviceInference; declared here for the type checker only

        def infer(self, node: cst.BaseExpression) -> Value: ...

        def layer_call(self, call: cst.Call) -> Value | None: ...

        def own_function_result(self, call: cst.Call) -> Value | None: ...

        def host_key(self, index: cst.BaseSlice | cst.BaseExpression | None) -> bool: ...

        def _infer_method(self, func: cst.Attribute, call: cst.Call) -> Value: ...

        @property
        def default_device(self) -> DeviceLiteral | None: ...

    # -- device specs -----------------------------------------------------------------------
    def device_spec(self, node: cst.BaseExpression | None) -> DeviceLiteral | None:
        """What a ``device=`` argument denotes, when the code shows it."""
        if node is None:
            return None
        if isinstance(node, cst.SimpleString):
            text = node.evaluated_value
            if isinstance(text, bytes):
                return None
            text = text.strip().lower()
            if text in ("cpu", "meta") or text.startswith("cpu:"):
                return DeviceLiteral.CPU  # the meta device holds no data: nothing waits for a GPU
            if text.startswith(api.ACCELERATOR_PREFIXES):
                return DeviceLiteral.ACCELERATOR
            return None
        if isinstance(node, cst.Integer):
            return DeviceLiteral.ACCELERATOR  # ``device=0`` is CUDA device 0
        if isinstance(node, cst.Call):
            name = self.imports.qualify(node.func)
            if name == "torch.device":
                return self.device_spec(positional(node, 0) or keyword(node, "type"))
            if name in ("torch.cuda.current_device",):
                return DeviceLiteral.ACCELERATOR
        return self.infer(node).device_literal

    def dtype_of(self, node: cst.BaseExpression | None) -> DType:
        if node is None:
            return DType.UNKNOWN
        name = self.imports.qualify(node) or ""
        if name.startswith("torch."):
            return _DTYPE_BY_NAME.get(name.rsplit(".", 1)[-1], DType.UNKNOWN)
        if isinstance(node, (cst.IfExp, cst.Name, cst.Attribute)):
            # ``torch.float32 if v.dim() == 0 else torch.bfloat16``, ``dtype = torch.half``: a dtype
            # object (a Python value that carries a dtype; numbers carry none).
            held = self.infer(node)
            if held.place is Place.PYTHON and held.device_literal is None and not held.zero_dim:
                return held.dtype
        return DType.UNKNOWN

    def names_a_dtype(self, node: cst.BaseExpression) -> bool:
        """A cast target, not a device: a torch dtype, a name or conditional holding one, or
        ``getattr(torch, name)``."""
        return self.dtype_of(node) is not DType.UNKNOWN or looks_up_a_torch_dtype(node, self.imports.qualify)

    def _place_for_device(self, device: cst.BaseExpression | None, fallback: Value) -> Value:
        if device is None:
            if self.default_device is DeviceLiteral.ACCELERATOR:
                return DEVICE_TENSOR
            return fallback
        spec = self.device_spec(device)
        if spec is DeviceLiteral.CPU:
            return HOST_TENSOR
        if spec is DeviceLiteral.ACCELERATOR:
            return DEVICE_TENSOR
        return TENSOR

    # -- calls ------------------------------------------------------------------------------
    def infer_call(self, call: cst.Call) -> Value:
        func = call.func
        if isinstance(func, cst.Name) and func.value in self.device_memory_classes:
            return DEVICE_TENSOR  # ``torch.as_tensor(_DeviceBytes(ptr, n), device=d)``: no host data
        if (dotted_name(func) or "").rsplit(".", 1)[-1] in api.DEVICE_MODULE_ACCESSORS:
            return DEVICE_MODULE  # ``device = get_torch_device()``: ``torch.cuda`` on a GPU
        if _asks_for_torch_tensors(call):
            return HF_TENSORS  # ``self.tokenizer(prompt, return_tensors="pt")``
        own = self.own_function_result(call) or (self.layer_call(call) if isinstance(func, cst.Name) else None)
        if own is not None:
            return own
        if isinstance(func, cst.Attribute):
            qualified = self.imports.qualify(func)
            if qualified is not None and qualified.startswith(("torch.", "numpy.")):
                return self._infer_module_call(qualified, call)
            return self._infer_method(func, call)
        qualified = self.imports.qualify(func)
        if qualified is None:
            return self._built_on_the_cpu(call)
        if qualified.startswith(("torch.", "numpy.")):
            return self._infer_module_call(qualified, call)
        if qualified in ("safetensors.torch.load_file", "safetensors.torch.load"):
            device = keyword(call, "device") or positional(call, 1)
            return HOST_TENSOR if device is None or self.device_spec(device) is DeviceLiteral.CPU else TENSOR
        if qualified in ("safetensors.safe_open", "safetensors.torch.safe_open"):
            # ``with safe_open(path, framework="pt") as f: f.get_tensor(name)``: read into host memory
            # unless a device is named.
            device = keyword(call, "device")
            return HOST_TENSOR if device is None or self.device_spec(device) is DeviceLiteral.CPU else UNKNOWN
        if qualified.rsplit(".", 1)[-1] in api.FLATTENING_HELPERS and len(call.args) == 1:
            # ``flatten_nested_list([item.tgt_size for item in items])``: the same items, one level
            value = self.infer(call.args[0].value)
            return value if value.is_host else UNKNOWN
        if qualified in api.PYTHON_RESULT_BUILTINS and not self.imports.is_imported(qualified):
            if qualified in ("sum", "max", "min", "next", "abs"):
                args = [self.infer(a.value) for a in call.args]
                if any(a.is_tensor for a in args):
                    return combine_operands([a for a in args if a.is_tensor])
                return UNKNOWN if qualified == "next" else PYTHON_SCALAR
            if qualified in ("int", "float", "bool", "len", "round", "str", "repr", "hash", "id"):
                return PYTHON_SCALAR
            return PYTHON
        return self._built_on_the_cpu(call)

    def _built_on_the_cpu(self, call: cst.Call) -> Value:
        """``rope_init_fn(config, torch.device("cpu"))``, ``build(x, device="cpu")``: a function told to
        work on the CPU gives host data (what it gives is otherwise unknown)."""
        leaf = (dotted_name(call.func) or "").rsplit(".", 1)[-1]
        if not leaf or leaf[0].isupper():
            return UNKNOWN  # ``CudaCommunicator(device=...)``: an object, not data
        for arg in call.args:
            named_device = arg.keyword is not None and (arg.keyword.value == "device" or arg.keyword.value.endswith("_device"))
            a_device = arg.keyword is None and isinstance(arg.value, cst.Call) and self.imports.qualify(arg.value.func) == "torch.device"
            if (named_device or a_device) and self.device_spec(arg.value) is DeviceLiteral.CPU:
                # Not the meta device: a model built there is materialised wherever it is loaded.
                return UNKNOWN if names_the_meta_device(arg.value) else HOST_TENSOR
        return UNKNOWN

    def _infer_module_call(self, qualified: str, call: cst.Call) -> Value:
        if qualified.startswith("numpy."):
            return NUMPY
        if qualified in api.SPARSE_CONSTRUCTORS:
            given = [self.infer(a.value) for a in call.args if a.keyword is None]
            tensors = [v for v in given if v.is_tensor]
            if tensors:
                built = Value(combine_operands(tensors).place)
            else:
                built = HOST_TENSOR if given and all(v.place in (Place.PYTHON, Place.NUMPY) for v in given) else TENSOR
            return self._place_for_device(keyword(call, "device"), built)
        if qualified in api.TORCH_FACTORIES:
            # ``torch.full((), 0, **like)``: the keywords it is given may name any device.
            unpacked = any(arg.star == "**" for arg in call.args)
            place = self._place_for_device(keyword(call, "device"), TENSOR if unpacked else HOST_TENSOR)
            if qualified in api.HOST_DATA_CONSTRUCTORS and keyword(call, "device") is None:
                data = self.infer(positional(call, 0) or cst.Name("None"))
                if data.is_tensor:
                    place = Value(data.place)  # torch.tensor(t) / as_tensor(t) keep t's device
            if is_true(keyword(call, "pin_memory")):
                place = Value(Place.HOST_TENSOR, pinned=True)
            dtype = self.dtype_of(keyword(call, "dtype"))
            if dtype is DType.UNKNOWN:
                dtype = self._default_factory_dtype(qualified, call)
            zero_dim = self._factory_is_0d(qualified, call)
            rank = 0 if zero_dim else factory_rank(qualified, call)
            return Value(place.place, dtype, zero_dim, place.pinned, rank=rank)
        if qualified in api.TORCH_LIKE_FACTORIES:
            first = positional(call, 0)
            fallback = self.infer(first) if first is not None else TENSOR
            if not fallback.is_tensor:
                fallback = TENSOR
            place = self._place_for_device(keyword(call, "device"), Value(fallback.place))
            return Value(place.place, self.dtype_of(keyword(call, "dtype")))
        if qualified in api.MODULE_STATE_WRAPPERS:
            return TENSOR
        if qualified in api.HOST_TENSOR_FUNCTIONS:
            return HOST_TENSOR
        if qualified == "torch.load":
            # ``map_location="cpu"``: every tensor in what was saved lands in host memory.
            location = self.device_spec(keyword(call, "map_location"))
            return HOST_TENSOR if location is DeviceLiteral.CPU else UNKNOWN
        if qualified == "torch.device":
            spec = self.device_spec(call)
            return CPU_DEVICE if spec is DeviceLiteral.CPU else ACCELERATOR_DEVICE if spec else PYTHON
        for names, value in _RESULT_BY_API:
            if qualified in names:
                return value
        if qualified in api.TORCH_HOST_FUNCTIONS or qualified.startswith(("torch.cuda.", "torch.backends.")):
            return PYTHON
        if qualified.rsplit(".", 1)[-1].startswith(api.HOST_QUERY_PREFIXES):
            return PYTHON  # torch.get_num_threads(), torch.is_grad_enabled(), torch.set_...
        args = [self.infer(a.value) for a in call.args]
        for a in call.args:
            if isinstance(a.value, (cst.List, cst.Tuple)):  # torch.cat([a, b]), torch.stack((a, b))
                args.extend(self.infer(el.value) for el in a.value.elements)
        tensors = [v for v in args if v.is_tensor]
        if not tensors:
            return TENSOR if qualified.count(".") == 1 else UNKNOWN
        # ``torch.cat([torch.zeros(1), prefix])``: joined tensors share one device, so a host part
        # shows where the rest is (as in a comparison; arithmetic may mix in a 0-d host scalar).
        result = compare_operands(tensors) if qualified in _JOINS else combine_operands(tensors)
        if qualified in api.TORCH_BOOL_FUNCTIONS:
            result = result.with_dtype(DType.BOOL)
        if qualified in _TORCH_FULL_REDUCTIONS and len(call.args) == 1:
            result = result.with_zero_dim(True)  # ``torch.max(t)``: a 0-d tensor
        return result

    def _factory_is_0d(self, qualified: str, call: cst.Call) -> bool:
        first = positional(call, 0)
        if qualified in ("torch.tensor", "torch.scalar_tensor", "torch.as_tensor"):
            if isinstance(first, (cst.Integer, cst.Float)):
                return True
            return isinstance(first, cst.Name) and not self.infer(first).is_tensor and self.infer(first).zero_dim
        if qualified in api.SIZED_FACTORIES:
            size = first if first is not None else keyword(call, "size")
            return isinstance(size, (cst.Tuple, cst.List)) and not size.elements
        return False

    def _default_factory_dtype(self, qualified: str, call: cst.Call) -> DType:
        if qualified in api.INT_FACTORIES:
            return DType.INT
        args = [a.value for a in call.args if a.keyword is None]
        if qualified in ("torch.arange", "torch.range") and args and all(_visibly_int(a) for a in args):
            return DType.INT
        if qualified in api.HOST_DATA_CONSTRUCTORS and args:
            data = args[0]
            leaves = [el.value for el in data.elements] if isinstance(data, (cst.List, cst.Tuple)) else [data]
            if leaves and all(isinstance(v, cst.Integer) for v in leaves):
                return DType.INT
            if leaves and all(isinstance(v, (cst.Float, cst.Integer)) for v in leaves):
                return DType.FLOAT
            if leaves and all(isinstance(v, cst.Name) and v.value in ("True", "False") for v in leaves):
                return DType.BOOL
        return DType.UNKNOWN


__all__ = ["CallInference", "keyword", "positional", "is_true", "PYTHON", "PYTHON_SCALAR"]


def _visibly_int(expr: cst.BaseExpression) -> bool:
    """An integer the code shows: a literal, ``len(x)``, ``x.shape[i]``, ``x.size(i)``, ``x.numel()``, sums of them."""
    if isinstance(expr, cst.Integer):
        return True
    if isinstance(expr, cst.BinaryOperation) and isinstance(
        expr.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide)
    ):
        return _visibly_int(expr.left) and _visibly_int(expr.right)
    if isinstance(expr, cst.Subscript):
        return isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape"
    if isinstance(expr, cst.Call):
        if isinstance(expr.func, cst.Name):
            return expr.func.value == "len"
        return isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ("size", "numel") and (
            expr.func.attr.value == "numel" or len(expr.args) == 1
        )
    return False


def _asks_for_torch_tensors(call: cst.Call) -> bool:
    """``return_tensors="pt"``: Hugging Face's tokenizers, processors and feature extractors build
    their tensors on the CPU."""
    value = keyword(call, "return_tensors")
    return isinstance(value, cst.SimpleString) and value.evaluated_value == "pt"
