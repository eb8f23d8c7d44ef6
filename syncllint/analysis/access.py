"""Reading through attributes and subscripts: ``x.device``, ``x.T``, ``torch.sort(x).values``,
``item.tgt_size``, ``mm_kwargs["image_sizes"]``, ``m[0]``.

A mixin of DeviceInference: ``infer``, ``lookup``, ``imports`` and the naming conventions come from there.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import libcst as cst

from syncllint.analysis import torch_api as api
from syncllint.analysis.imports import dotted_name
from syncllint.analysis.module_state import holds_a_built_module
from syncllint.analysis.values import (
    DTYPE_OBJECT,
    HOST_TENSOR,
    LOADER_BATCH,
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
    from syncllint.analysis.imports import ImportMap


_FLOAT_CONSTANTS = frozenset(
    f"{module}.{name}" for module in ("math", "numpy") for name in ("inf", "nan", "pi", "e", "tau", "euler_gamma")
) | frozenset(("numpy.Inf", "numpy.NaN", "numpy.NINF", "numpy.PINF", "numpy.NAN", "numpy.Infinity"))


# What a layer holds as its parameters (``nn.Linear``, ``nn.Embedding``, norms, convolutions).
_PARAMETER_ATTRS = frozenset(("weight", "bias"))


class AccessInference:
    if TYPE_CHECKING:  # provided by DeviceInference
        imports: ImportMap

        def infer(self, node: cst.BaseExpression) -> Value: ...

        def lookup(self, key: str) -> Value | None: ...

        def host_key(self, index: cst.BaseSlice | cst.BaseExpression | None) -> bool: ...

        def own_function_elements(self, call: cst.Call) -> tuple[Place | None, ...] | None: ...

        def dtype_of(self, node: cst.BaseExpression | None) -> DType: ...

        def _suffix_value(self, name: str, attribute: bool = False, conventions_only: bool = False) -> Value | None: ...

    def _infer_attribute(self, node: cst.Attribute) -> Value:
        qualified = self.imports.qualify(node)
        if qualified is not None and qualified.startswith("torch."):
            # ``torch.version.cuda``, ``torch.float16``, ``torch.cuda``: strings, dtypes and modules;
            # a dtype says which (``F64 = torch.float64`` names a dtype wherever it is used).
            dtype = self.dtype_of(node)
            return PYTHON if dtype is DType.UNKNOWN else PYTHON.with_dtype(dtype)
        if qualified in _FLOAT_CONSTANTS:
            return PYTHON_SCALAR  # ``np.inf`` and ``math.pi`` are Python floats, not numpy scalars
        key = dotted_name(node)
        if key is not None:
            found = self.lookup(key)
            if found is not None and (found.place is not Place.UNKNOWN or found.layer):
                return found
        attr = node.attr.value
        if attr in api.METADATA_ATTRS:
            if attr == "dtype":
                return DTYPE_OBJECT
            if attr == "device":
                owner = self.infer(node.value)
                if owner.place == Place.DEVICE:
                    return Value(Place.PYTHON, device_literal=DeviceLiteral.ACCELERATOR)
                if owner.place == Place.HOST_TENSOR:
                    return Value(Place.PYTHON, device_literal=DeviceLiteral.CPU)
            return PYTHON
        if attr in api.VIEW_ATTRS:
            owner = self.infer(node.value)
            if owner.is_tensor or owner.place == Place.NUMPY:
                return owner
        if attr in api.SAME_PLACE_ATTRS:
            owner = self.infer(node.value)
            if owner.is_tensor:
                return Value(owner.place, assumed=owner.assumed)
        if attr in api.RESULT_FIELDS:
            owner = self.infer(node.value)
            if owner.is_tensor:  # ``torch.sort(x).values``, ``cholesky_ex(a).L`` stay on x's device
                return Value(owner.place, DType.INT if attr in api.INT_RESULT_FIELDS else DType.UNKNOWN)
        if attr in api.PACKED_SEQUENCE_HOST_FIELDS and not (isinstance(node.value, cst.Name) and node.value.value == "self"):
            return Value(Place.HOST_TENSOR, DType.INT)  # ``packed.batch_sizes[0].item()``
        if attr == "mesh" and _names_a_device_mesh(node.value):
            # ``DeviceMesh.mesh``: the table of ranks, which torch always keeps on the CPU.
            return Value(Place.HOST_TENSOR, DType.INT)
        if self._record_field_on_host(node.value, attr):
            # ``item.tgt_size`` of an sglang ``MultimodalDataItem``; ``tokenizer(...).input_ids``
            return HOST_TENSOR
        if isinstance(node.value, cst.Name) and (self.lookup(node.value.value) or UNKNOWN).collated:
            return LOADER_BATCH  # ``batch.input_ids`` of a loader's batch
        named = self._suffix_value(attr, attribute=True)
        if named is not None:
            return named
        if attr in _PARAMETER_ATTRS and holds_a_built_module(node.value, cast("DeviceInference", self), moved=False):
            # ``self.embedding.weight`` after ``self.embedding = nn.Embedding(n, d)`` above: the
            # module was built on the host and has not moved yet.
            return HOST_TENSOR
        if self.infer(node.value).place == Place.NUMPY:
            # ``np.finfo(np.float32).eps``, ``history.iloc`` of a pandas table: what an array or a
            # table holds is host data, no tensor
            return NUMPY
        return UNKNOWN

    def _record_field_on_host(self, owner: cst.BaseExpression, attr: str) -> bool:
        if isinstance(owner, cst.Name):
            value = self.lookup(owner.value)
        elif isinstance(owner, cst.Call):
            value = self.infer(owner)
        else:
            return False
        return value is not None and value.host_record and not any(
            attr in device_fields for device_fields in api.HOST_RECORDS.values()
        )

    def _infer_subscript(self, node: cst.Subscript) -> Value:
        base = node.value
        if self.host_key(node.slice[0].slice if len(node.slice) == 1 else None):
            return HOST_TENSOR  # ``mm_kwargs["image_sizes"]`` of a field kept on the host
        if isinstance(base, cst.Attribute) and base.attr.value == "shape":
            return PYTHON_SCALAR
        if isinstance(base, cst.Call) and (element := self._returned_element(base, node)) is not None:
            return element
        owner = self.infer(base)
        if owner.is_tensor or owner.place == Place.NUMPY:
            # An element of a tensor by convention (``num_computed_tokens[i]`` beside a ``*_cpu``
            # mirror) is no more surely a tensor than its container.
            rank = self._rank_after_index(owner.rank, node)
            return Value(owner.place, owner.dtype, rank=rank, assumed=owner.assumed)
        return self.host_named_item(base, owner) or (LOADER_BATCH if owner.collated else UNKNOWN)

    def host_named_item(self, container: cst.BaseExpression, owner: Value) -> Value | None:
        """An item of a Python container the code names as host data (``host_data["count"]``,
        ``batch_cpu.get("ids")``): what it holds is on the host."""
        name = dotted_name(container) if owner.place is Place.PYTHON else None
        named = self._suffix_value(name, conventions_only=True) if name is not None else None
        return named if named is not None and named.is_host else None

    def _returned_element(self, call: cst.Call, node: cst.Subscript) -> Value | None:
        """``coordinate(...)[1]`` of a helper returning tuples whose element there shows its place."""
        places = self.own_function_elements(call)
        index = node.slice[0].slice if places is not None and len(node.slice) == 1 else None
        if not (isinstance(index, cst.Index) and isinstance(index.value, cst.Integer)) or places is None:
            return None
        position = int(index.value.value)
        place = places[position] if position < len(places) else None
        return None if place is None else Value(place)

    def _rank_after_index(self, rank: int | None, node: cst.Subscript) -> int | None:
        """``m[0]`` of a 2-D tensor is 1-D; slices keep their dimension; anything else: unknown."""
        if rank is None:
            return None
        for element in node.slice:
            index = element.slice
            if isinstance(index, cst.Slice):
                continue
            if not isinstance(index, cst.Index) or isinstance(index.value, cst.Name) and index.value.value == "None":
                return None
            value = self.infer(index.value)
            if not (value.place is Place.PYTHON and value.zero_dim):
                return None
            rank -= 1
        return rank if rank >= 0 else None


def _names_a_device_mesh(node: cst.BaseExpression) -> bool:
    """``device_mesh`` / ``dp_mesh`` / ``dtensor.device_mesh``: a DeviceMesh by the name torch gives it
    (``spec.mesh`` is a DeviceMesh itself, not its rank table)."""
    leaf = node.attr.value if isinstance(node, cst.Attribute) else node.value if isinstance(node, cst.Name) else ""
    return leaf == "mesh" or leaf.endswith("_mesh")
