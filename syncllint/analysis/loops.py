"""What loop targets hold: ``for i, row in enumerate(t)``, ``for name, p in m.named_parameters()``."""

from __future__ import annotations

import re

import libcst as cst

from syncllint.analysis.arguments import string_key
from syncllint.analysis.devices import DeviceInference
from syncllint.analysis.values import (
    LOADER_BATCH,
    PYTHON,
    PYTHON_SCALAR,
    TENSOR,
    UNKNOWN,
    Place,
    Value,
)


def bind_loop_target(inference: DeviceInference, target: cst.BaseExpression, iterable: cst.BaseExpression) -> None:
    """Bind ``for target in iterable`` (and comprehension targets): elements of what is iterated."""
    if (
        isinstance(iterable, cst.Call)
        and len(iterable.args) == 1
        and not iterable.args[0].star
        and iterable.args[0].keyword is None
        and inference.imports.qualify(iterable.func) == "reversed"
    ):
        # ``for val in reversed(pad_by)``: the same elements, last first.
        bind_loop_target(inference, target, iterable.args[0].value)
        return
    value = inference.infer(iterable)
    if isinstance(iterable, cst.Call) and inference.imports.qualify(iterable.func) in ("range", "enumerate"):
        if isinstance(target, cst.Tuple) and len(target.elements) == 2:
            inference.bind(target.elements[0].value, PYTHON_SCALAR)
            counted = iterable.args[0].value if iterable.args and not iterable.args[0].star else None
            if counted is not None and inference.imports.qualify(iterable.func) == "enumerate":
                # ``for i, (v, k) in enumerate(zip(values, keys))``: what the inner loop would bind.
                bind_loop_target(inference, target.elements[1].value, counted)
                return
            element = inference.infer(counted) if counted is not None else PYTHON
            inference.bind(target.elements[1].value, _element_of(element), rebinding=False)
            return
        inference.bind(target, PYTHON_SCALAR)
        return
    # ``zip(a, b, strict=True)``: the keyword is an option, not a sequence.
    zipped = [arg for arg in iterable.args if arg.keyword is None] if isinstance(iterable, cst.Call) else []
    if (
        isinstance(iterable, cst.Call)
        and inference.imports.qualify(iterable.func) == "zip"
        and isinstance(target, cst.Tuple)
        and len(target.elements) == len(zipped)
        and not any(arg.star for arg in iterable.args)
    ):
        # ``for hs, mask in zip(pooled, pooler_mask)``: rows of each, side by side
        for item, arg in zip(target.elements, zipped):
            inference.bind(item.value, _element_of(inference.infer(arg.value)), rebinding=False)
        return
    element = LOADER_BATCH if _iterates_a_data_loader(inference, iterable) else _element_of(value)
    if element.place is Place.UNKNOWN:
        element = _host_named_element(inference, iterable) or (
            TENSOR if _lists_group_parameters(iterable) else element
        )
    if _yields_named_pairs(iterable) and isinstance(target, cst.Tuple) and len(target.elements) == 2:
        # ``for name, param in model.named_parameters()`` / ``for key, t in state.items()``
        inference.bind(target.elements[0].value, PYTHON)
        inference.bind(target.elements[1].value, element, rebinding=False)
        return
    inference.bind(target, element, rebinding=False)


def _host_named_element(inference: DeviceInference, iterable: cst.BaseExpression) -> Value | None:
    """``for key, t in cpu_tensors.items()``, ``for t in host_batch.values()``: what a Python
    container named as host data holds is on the host."""
    container = iterable
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and not iterable.args:
        if iterable.func.attr.value not in ("items", "values"):
            return None
        container = iterable.func.value
    return inference.host_named_item(container, inference.infer(container))


# ``train_loader``, ``self.val_dataloader``, ``data_loader``: one loader (not ``loaders``); the
# loaders of weights, models or checkpoints yield no batches.
_DATA_LOADER_NAME = re.compile(r"(?:^|_)(?:data_?)?loader$")
_NOT_DATA_LOADERS = ("weight", "model", "checkpoint", "ckpt", "state", "param", "offload", "shard", "file")
# Wrappers that iterate the loader they are given: progress bars and ``iter``.
_ITERATING_WRAPPERS = frozenset(("tqdm", "tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "iter"))


def _iterates_a_data_loader(inference: DeviceInference, iterable: cst.BaseExpression) -> bool:
    """``for x, y in train_loader`` / ``enumerate(tqdm(dataloader))`` / ``DataLoader(ds, ...)``:
    a DataLoader collates its batches in host memory (pinned at best); the loop's own
    ``.to(device)`` is what puts them on the GPU."""
    while isinstance(iterable, cst.Call) and iterable.args and not iterable.args[0].star:
        qualified = inference.imports.qualify(iterable.func) or ""
        if qualified.endswith("DataLoader"):
            return True
        if qualified not in _ITERATING_WRAPPERS:
            break
        iterable = iterable.args[0].value
    if isinstance(iterable, cst.Call) and not iterable.args:
        iterable = iterable.func  # ``self.train_dataloader()``: the loader a Lightning module builds
    name = iterable.attr.value if isinstance(iterable, cst.Attribute) else getattr(iterable, "value", None)
    if not isinstance(name, str):
        return False
    lowered = name.lower()
    return _DATA_LOADER_NAME.search(lowered) is not None and not any(word in lowered for word in _NOT_DATA_LOADERS)


def _lists_group_parameters(iterable: cst.BaseExpression) -> bool:
    """``for p in group["params"]``: an optimizer's parameter group lists the model's parameters,
    tensors wherever the model lives."""
    return isinstance(iterable, cst.Subscript) and string_key(iterable) == "params"


def _yields_named_pairs(iterable: cst.BaseExpression) -> bool:
    if not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute)):
        return False
    method = iterable.func.attr.value
    return method == "items" or method.startswith("named_")


def _element_of(value: Value) -> Value:
    """What iterating over ``value`` yields."""
    if value.host_record:
        return value  # items of ``items: List[MultimodalDataItem]``
    if value.is_tensor or value.place is Place.NUMPY:
        # Rows of a tensor by convention only (``seq_lens`` beside ``seq_lens_cpu``) are no surer.
        # ``for i in torch.arange(n)``: the rows of a 1-d tensor are 0-d tensors (a CPU one indexes
        # as a Python int would).
        rank = value.rank - 1 if value.rank else None
        return Value(value.place, value.dtype, zero_dim=rank == 0, assumed=value.assumed, rank=rank)
    return UNKNOWN
