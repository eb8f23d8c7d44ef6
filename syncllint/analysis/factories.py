"""What device and dtype arguments denote, and what torch's factories build from them."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from syncllint.analysis import torch_api as api
from syncllint.analysis.arguments import is_true, keyword, positional
from syncllint.analysis.ranks import factory_rank
from syncllint.analysis.values import (
    DEVICE_TENSOR,
    HOST_TENSOR,
    TENSOR,
    DeviceLiteral,
    DType,
    Place,
    Value,
    combine_operands,
)

if TYPE_CHECKING:
    from syncllint.analysis.imports import ImportMap

_DTYPE_BY_NAME = {
    "bool": DType.BOOL,
    **dict.fromkeys("int8 int16 int32 int64 uint8 uint16 uint32 uint64 long int short".split(), DType.INT),
    **dict.fromkeys(("uint1 uint2 uint3 uint4 uint5 uint6 uint7 int1 int2 int3 int4 int5 int6 int7").split(), DType.INT),
    **dict.fromkeys(
        ("float16 float32 float64 bfloat16 half float double float8_e4m3fn float8_e5m2 float8_e4m3fnuz "
         "float8_e5m2fnuz float8_e8m0fnu float4_e2m1fn_x2").split(),
        DType.FLOAT,
    ),
    # Complex and quantized tensors: numbers, never masks (``.to(torch.cfloat)`` is a cast, no device).
    **dict.fromkeys(
        "complex32 complex64 complex128 cfloat cdouble chalf qint8 quint8 qint32 quint4x2 quint2x4".split(),
        DType.NUMBER,
    ),
}


# torch functions that return a dtype: ``x.to(torch.promote_types(x.dtype, torch.float32))`` casts.
_DTYPE_FUNCTIONS = frozenset(("torch.promote_types", "torch.result_type", "torch.get_default_dtype"))


def looks_up_a_torch_dtype(node: cst.BaseExpression, qualify: Callable[[cst.BaseExpression], str | None]) -> bool:
    """``getattr(torch, weight_info["dtype"])``: a dtype (or a function) read off the torch module by
    name (devices are not attributes of it), the cast target of ``.to(...)``; or a dtype a torch
    function computes (``torch.promote_types(a, b)``)."""
    if not isinstance(node, cst.Call):
        return False
    if qualify(node.func) in _DTYPE_FUNCTIONS:
        return True
    return (
        isinstance(node.func, cst.Name)
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


class FactoryInference:
    """Mixin of DeviceInference (through CallInference); ``infer`` and ``imports`` come from there."""

    imports: ImportMap

    if TYPE_CHECKING:  # provided by DeviceInference; declared here for the type checker only

        def infer(self, node: cst.BaseExpression) -> Value: ...

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
        if isinstance(node, (cst.Name, cst.Attribute)) and _leaf(node).lower() in _CPU_DEVICE_NAMES:
            return DeviceLiteral.CPU  # ``device=CPU`` (fairseq2's ``CPU: Final = Device("cpu")``), ``cpu_device``
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
        if isinstance(node, (cst.Name, cst.Attribute)) and self.infer(node).names_dtype:
            return True  # ``orig_type = x.dtype`` ... ``.to(orig_type)``
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

    # -- factories --------------------------------------------------------------------------
    def infer_factory(self, qualified: str, call: cst.Call) -> Value | None:
        """What a torch factory builds (None: ``qualified`` is no factory)."""
        if qualified in api.SPARSE_CONSTRUCTORS:
            # The index and value tensors decide the device (host data for lists) unless ``device=`` does.
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
        return None

    def _factory_is_0d(self, qualified: str, call: cst.Call) -> bool:
        first = positional(call, 0)
        if qualified in ("torch.tensor", "torch.scalar_tensor", "torch.as_tensor"):
            if isinstance(first, (cst.Integer, cst.Float)):
                return True
            if not isinstance(first, (cst.Name, cst.Call, cst.UnaryOperation)):
                return False
            # ``torch.tensor(eps)``, ``torch.tensor(float("nan"))``, ``torch.tensor(-1)``: one number.
            held = self.infer(first)
            return not held.is_tensor and held.zero_dim
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


# Names that hold the host device wherever they appear (a constant, a variable named for it).
_CPU_DEVICE_NAMES = frozenset(("cpu", "cpu_device", "device_cpu", "host_device"))


def _leaf(node: cst.Name | cst.Attribute) -> str:
    return node.attr.value if isinstance(node, cst.Attribute) else node.value
