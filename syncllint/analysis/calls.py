"""Device inference for calls: the torch and numpy API, builtins, loaders (factories: ``factories``; tensor methods: ``method_calls``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from syncllint.analysis import torch_api as api
from syncllint.analysis.arguments import keyword, positional
from syncllint.analysis.factories import (
    FactoryInference,
    looks_up_a_torch_dtype,
    names_the_meta_device,
)
from syncllint.analysis.imports import dotted_name
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

_JOINS = frozenset(
    "torch." + n for n in "cat concat concatenate stack hstack vstack dstack column_stack row_stack".split()
)
# Words in a helper's name that say it moves its data (``to_device``, ``move_to_cuda``, ``upload``).
_MOVING_WORDS = ("cuda", "gpu", "device", "move", "transfer", "upload", "h2d", "pin", "copy", "accel", "to_")
_TORCH_FULL_REDUCTIONS = frozenset(
    "torch." + n for n in "sum mean max min prod amax amin argmax argmin any all count_nonzero norm".split()
)


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


_COMPREHENSIONS = (cst.GeneratorExp, cst.ListComp)


class CallInference(FactoryInference):
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

    # -- calls ------------------------------------------------------------------------------
    def infer_call(self, call: cst.Call) -> Value:
        func = call.func
        if isinstance(func, cst.Name) and func.value in self.device_memory_classes:
            return DEVICE_TENSOR  # ``torch.as_tensor(_DeviceBytes(ptr, n), device=d)``: no host data
        if (dotted_name(func) or "").rsplit(".", 1)[-1] in api.DEVICE_MODULE_ACCESSORS:
            return DEVICE_MODULE  # ``device = get_torch_device()``: ``torch.cuda`` on a GPU
        if _asks_for_torch_tensors(call):
            return HF_TENSORS  # ``self.tokenizer(prompt, return_tensors="pt")``
        if isinstance(func, cst.Call) and looks_up_a_torch_dtype(func, self.imports.qualify):
            # ``getattr(torch, return_mode)(times)``: some torch function, picked by name.
            return self._infer_module_call("torch.getattr", call)
        qualified = self.imports.qualify(func)
        if qualified == "typing.cast" and len(call.args) == 2:
            # ``cast(Tensor, layer.weight)``: the value itself; the type says at least "a tensor".
            held = self.infer(call.args[1].value)
            said = self.imports.qualify(call.args[0].value)
            return held if held.place is not Place.UNKNOWN or said != "torch.Tensor" else TENSOR
        own = self.own_function_result(call) or (self.layer_call(call) if isinstance(func, cst.Name) else None)
        if own is not None:
            return own
        if qualified in api.HOST_READERS:
            return self._read_into(keyword(call, "device"))
        # Before the method calls: ``safetensors.torch.load_file(path)`` is spelled as one.
        if qualified in ("safetensors.torch.load_file", "safetensors.torch.load"):
            return self._read_into(keyword(call, "device") or positional(call, 1))
        if qualified in ("safetensors.safe_open", "safetensors.torch.safe_open"):
            # ``with safe_open(path, framework="pt") as f: f.get_tensor(name)``: read into host memory
            # unless a device is named.
            device = keyword(call, "device")
            return HOST_TENSOR if device is None or self.device_spec(device) is DeviceLiteral.CPU else UNKNOWN
        if isinstance(func, cst.Attribute):
            if qualified is not None and _module_function(qualified):
                return self._infer_module_call(qualified, call)
            return self._infer_method(func, call)
        if qualified is None:
            return self._built_on_the_cpu(call)
        if _module_function(qualified):
            return self._infer_module_call(qualified, call)
        if qualified.rsplit(".", 1)[-1] in api.FLATTENING_HELPERS and len(call.args) == 1:
            # ``flatten_nested_list([item.tgt_size for item in items])``: the same items, one level
            value = self.infer(call.args[0].value)
            return value if value.is_host else UNKNOWN
        if qualified in api.PYTHON_RESULT_BUILTINS and not self.imports.is_imported(qualified):
            if qualified in ("sum", "max", "min", "next", "abs"):
                # ``sum(F.mse_loss(q, t) for q in qs)``: over the elements a comprehension makes.
                args = [
                    self.infer(a.value.elt if isinstance(a.value, _COMPREHENSIONS) else a.value) for a in call.args
                ]
                if any(a.is_tensor for a in args):
                    return combine_operands([a for a in args if a.is_tensor])
                if qualified == "sum" and args and args[0].place is Place.UNKNOWN:
                    return UNKNOWN  # ``sum(loss_record)``: of numbers, or of tensors (a tensor then)
                return UNKNOWN if qualified == "next" else PYTHON_SCALAR
            if qualified in ("int", "float", "bool", "len", "round", "str", "repr", "hash", "id"):
                return PYTHON_SCALAR
            return PYTHON
        return self._built_on_the_cpu(call)

    def _read_into(self, device: cst.BaseExpression | None) -> Value:
        """What a reader gives (``torchaudio.load``, ``safetensors.torch.load_file``): host memory,
        unless told a device that may not be the CPU."""
        return HOST_TENSOR if device is None or self.device_spec(device) is DeviceLiteral.CPU else TENSOR

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
        return HOST_TENSOR if self._given_only_host_tensors(call, leaf) else UNKNOWN

    def _given_only_host_tensors(self, call: cst.Call, leaf: str) -> bool:
        """``softplus_inv(torch.tensor(s) ** 2)``, ``fn(z)`` with ``z`` built on the host: a function
        given host tensors and nothing that may be a device or device data computes on the host
        (torch refuses to mix a host and a device tensor), unless its name says it moves data."""
        if any(word in leaf.lower() for word in _MOVING_WORDS):
            return False
        shown = False
        for arg in call.args:
            if arg.star:
                return False
            value = self.infer(arg.value)
            if value.place is Place.HOST_TENSOR and not value.assumed:
                shown = True
            elif value.place not in (Place.PYTHON, Place.NUMPY) or value.device_literal not in (None, DeviceLiteral.CPU):
                return False  # a tensor of unknown place, a device, or a value we cannot see
        return shown

    def _infer_module_call(self, qualified: str, call: cst.Call) -> Value:
        if api.is_host_array_api(qualified):
            return NUMPY  # ``np.zeros(n)``; ``pd.read_csv(path)``: a host table, which acts like an array
        built = self.infer_factory(qualified, call)
        if built is not None:
            return built
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
            if args and all(v.place is Place.PYTHON and v.zero_dim for v in args) and self.default_device is None:
                # ``torch.div(h, 2)`` of Python numbers wraps them in a new tensor on the CPU.
                return HOST_TENSOR if qualified.count(".") == 1 and keyword(call, "device") is None else UNKNOWN
            return TENSOR if qualified.count(".") == 1 else UNKNOWN
        # ``torch.cat([torch.zeros(1), prefix])``: joined tensors share one device, so a host part
        # shows where the rest is (as in a comparison; arithmetic may mix in a 0-d host scalar).
        result = compare_operands(tensors) if qualified in _JOINS else combine_operands(tensors)
        if qualified in api.TORCH_BOOL_FUNCTIONS:
            result = result.with_dtype(DType.BOOL)
        if qualified in _TORCH_FULL_REDUCTIONS and len(call.args) == 1:
            result = result.with_zero_dim(True)  # ``torch.max(t)``: a 0-d tensor
        return result



__all__ = ["CallInference"]


def _asks_for_torch_tensors(call: cst.Call) -> bool:
    """``return_tensors="pt"``: Hugging Face's tokenizers, processors and feature extractors build
    their tensors on the CPU."""
    value = keyword(call, "return_tensors")
    return isinstance(value, cst.SimpleString) and value.evaluated_value == "pt"


def _module_function(qualified: str) -> bool:
    """A function of torch, numpy or a table library, read by ``_infer_module_call``."""
    return qualified.startswith("torch.") or api.is_host_array_api(qualified)
