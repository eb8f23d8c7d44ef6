"""Device inference for method calls: tensor methods (``x.cpu()``, ``x.to(dev)``, ``x.sum()``) and the
container methods that hand on what they hold."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, cast

import libcst as cst

from syncllint.analysis import torch_api as api
from syncllint.analysis.arguments import is_tensor_to, keyword
from syncllint.analysis.module_state import MODULE_MOVES, holds_a_built_module
from syncllint.analysis.naming import names_a_class
from syncllint.analysis.ranks import SAME_SHAPE_METHODS, shape_rank
from syncllint.analysis.tensor_methods import TENSOR_METHODS
from syncllint.analysis.values import (
    HOST_TENSOR,
    LAYER,
    NUMPY,
    PYTHON,
    PYTHON_SCALAR,
    UNKNOWN,
    DeviceLiteral,
    DType,
    Place,
    Value,
)

if TYPE_CHECKING:
    from syncllint.analysis.devices import DeviceInference

# Methods that count when applied to booleans: their result is an integer tensor.
_COUNTING_METHODS = frozenset(("sum", "cumsum", "cumprod", "prod"))


class MethodInference:
    """Mixin of DeviceInference, beside CallInference (which hands it the calls on an attribute)."""

    if TYPE_CHECKING:  # provided by DeviceInference and CallInference

        def infer(self, node: cst.BaseExpression) -> Value: ...

        def layer_call(self, call: cst.Call) -> Value | None: ...

        def host_key(self, index: cst.BaseSlice | cst.BaseExpression | None) -> bool: ...

        def device_spec(self, node: cst.BaseExpression | None) -> DeviceLiteral | None: ...

        def dtype_of(self, node: cst.BaseExpression | None) -> DType: ...

        def names_a_dtype(self, node: cst.BaseExpression) -> bool: ...

        def host_named_item(self, container: cst.BaseExpression, owner: Value) -> Value | None: ...

        def _place_for_device(self, device: cst.BaseExpression | None, fallback: Value) -> Value: ...

    def _infer_method(self, func: cst.Attribute, call: cst.Call) -> Value:
        layer_result = self.layer_call(call)
        if layer_result is not None:
            return layer_result
        method = func.attr.value
        if method in ("pop", "get") and call.args and self.host_key(call.args[0].value):
            return HOST_TENSOR  # ``kwargs.pop("image_sizes")`` of a field kept on the host
        if method in ("get_state", "get_rng_state"):
            return HOST_TENSOR  # ``Generator.get_state()``, ``get_rng_state()``: CPU ByteTensors
        # The receiver is inferred once: a chain ``x.float().sum().mean()`` would otherwise be
        # walked again at every link.
        owner = self.infer(func.value)
        result = self._method_on(owner, method, func, call)
        if owner.collated and method in api.SAME_PLACE_METHODS:
            # ``chosen_ids.squeeze(1)`` of a loader's batch: still the collated host data.
            return replace(result, collated=True)
        return result

    def _method_on(self, owner: Value, method: str, func: cst.Attribute, call: cst.Call) -> Value:
        if method in ("items", "values", "get", "pop", "get_tensor") and owner.place is Place.HOST_TENSOR:
            return HOST_TENSOR  # what ``torch.load(p, map_location="cpu")`` holds is on the host
        if method in ("get", "pop") and (held := self.host_named_item(func.value, owner)) is not None:
            return held  # ``host_data.get("count")``
        if method in api.NON_TENSOR_METHODS:
            return UNKNOWN  # ``name.endswith(...)``: whatever the receiver is, it is no tensor
        if method in api.METADATA_METHODS:
            # ``x.numel()``, ``x.size(0)``: a Python number; ``x.size()``, ``x.stride()``: a tuple of them.
            counted = method in api.METADATA_NUMBERS or method in ("size", "stride") and len(call.args) == 1
            return PYTHON_SCALAR if counted else PYTHON
        if method in api.PYTHON_RESULT_METHODS and owner.place is not Place.UNKNOWN:
            return PYTHON_SCALAR
        if method.startswith("__") and method.endswith("__"):
            return UNKNOWN  # ``t.__tensor_flatten__()``: protocol methods return anything
        if method.startswith("is_") and owner.is_tensor:
            return PYTHON_SCALAR  # ``t.is_shared()``, ``t.is_signed()``: Python bools
        if method in ("item", "tolist"):
            return PYTHON_SCALAR if method == "item" else PYTHON
        if owner.place == Place.NUMPY:
            return NUMPY
        if owner.place == Place.PYTHON:
            return UNKNOWN
        if method in ("cpu", "cuda", "to") and owner.place is Place.UNKNOWN and names_a_class(func.value):
            return UNKNOWN  # ``Quantizer.cuda(W_q, meta, device)``: a class's own method, no tensor move
        if method in MODULE_MOVES and (owner.layer or holds_a_built_module(func.value, cast("DeviceInference", self))):
            return LAYER  # ``tp = tp.to(device)`` of a module: the module itself, no tensor
        if method == "cpu":
            if owner.place == Place.UNKNOWN and call.args:
                return UNKNOWN
            return Value(Place.HOST_TENSOR, owner.dtype, owner.zero_dim, rank=owner.rank)
        if method == "numpy":
            return NUMPY
        if method == "cuda":
            return Value(Place.DEVICE, owner.dtype, owner.zero_dim, rank=owner.rank)
        if method == "pin_memory":
            return Value(Place.HOST_TENSOR, owner.dtype, pinned=True, rank=owner.rank)
        if method in SAME_SHAPE_METHODS and owner.is_tensor:
            return replace(owner, pinned=False)
        if method in ("view", "reshape") and owner.is_tensor:
            return Value(owner.place, owner.dtype, rank=shape_rank(call))
        if method == "to":
            return self._infer_to(owner, call) if is_tensor_to(call) else UNKNOWN
        if method == "new_tensor" or method.startswith("new_"):
            if owner.is_tensor:
                return self._place_for_device(keyword(call, "device"), Value(owner.place))
            return UNKNOWN
        if not owner.is_tensor:
            return UNKNOWN
        if method not in TENSOR_METHODS and owner.place is Place.TENSOR:
            # ``cache.get_seq_length()``: no tensor method, whatever the annotation said. (A host or
            # device value keeps its place: ``torch.load(p, map_location="cpu").items()``.)
            return UNKNOWN
        if method in api.SAME_PLACE_BOOL_METHODS:
            dtype = DType.BOOL
        elif method in api.SAME_PLACE_INT_METHODS:
            dtype = DType.INT
        elif method in api.SAME_PLACE_FLOAT_METHODS:
            dtype = DType.FLOAT
        elif owner.dtype is DType.BOOL and method in _COUNTING_METHODS:
            dtype = DType.INT  # ``flags.sum(dim=1)``: counts of true elements
        else:
            dtype = owner.dtype
        zero_dim = method in api.REDUCTIONS_TO_0D and not call.args
        # On a tensor by convention only, an unknown method (``past.get_seq_length()``) says
        # nothing more; a tensor method (``x.any()``) confirms it is a tensor.
        known = method in api.KNOWN_TENSOR_METHODS
        return Value(owner.place, dtype, zero_dim, assumed=owner.assumed and not known)

    def _infer_to(self, owner: Value, call: cst.Call) -> Value:
        moved = self._moved(owner, call)
        # ``flags.to(torch.long)``: the new dtype (a boolean mask turned into positions or counts).
        dtypes = [self.dtype_of(a.value) for a in call.args if a.keyword is None] + [self.dtype_of(keyword(call, "dtype"))]
        dtype = next((d for d in dtypes if d is not DType.UNKNOWN), DType.UNKNOWN)
        return replace(moved, dtype=dtype) if dtype is not DType.UNKNOWN and moved.is_tensor else moved

    def _moved(self, owner: Value, call: cst.Call) -> Value:
        target = keyword(call, "device")
        cast_to: cst.BaseExpression | None = None
        for arg in call.args:
            if arg.keyword is None and target is None:
                if self.names_a_dtype(arg.value):
                    cast_to = arg.value
                else:
                    target = arg.value
                break
        if target is None:
            if cast_to is not None and self.infer(cast_to).names_dtype:
                # ``t.to(model_dtype)`` with ``model_dtype = w.dtype``: a tensor, of a place left as
                # unsure as a move to a variable's device (measured on the labels: keeping the
                # owner's place here trusts host places inferred through layer calls too far).
                return Value(Place.TENSOR, owner.dtype)
            return owner if owner.is_tensor else UNKNOWN
        spec = self.device_spec(target)
        # A move keeps dtype and rank: ``torch.tensor(7).to(dev)`` is a 0-d device tensor.
        if spec is DeviceLiteral.CPU:
            return Value(Place.HOST_TENSOR, owner.dtype, owner.zero_dim, rank=owner.rank)
        if spec is DeviceLiteral.ACCELERATOR:
            return Value(Place.DEVICE, owner.dtype, owner.zero_dim, rank=owner.rank)
        other = self.infer(target)
        if other.is_tensor:  # ``x.to(other)`` takes other's device and dtype
            return Value(other.place)
        return Value(Place.TENSOR, owner.dtype)
