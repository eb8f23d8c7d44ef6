"""Dicts whose every value the code copies to the host, and what ranks gather from them.

Checkpoint code often copies a state dict to the host in place, then gathers every rank's copy::

    for key, value in state_dict.items():
        state_dict[key] = value.cpu()             # each value replaced by a host copy
    dist.all_gather_object(full, state_dict)      # every rank's state dict, unpickled here
    torch.cat([full[i][key].cpu() for i in r])    # host tensors already: no copy from the device

After such a loop the dict holds host tensors (a container of host tensors passes for a host tensor,
as ``DeviceInference._container`` has it). ``all_gather_object`` pickles the object on each rank and
unpickles it into the output list: tensors come back on the device they were pickled from, so the
list holds host data when the object does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import libcst as cst

from syncllint.analysis import torch_api as api
from syncllint.analysis.arguments import sole_index
from syncllint.analysis.values import HOST_TENSOR, Place
from syncllint.traversal import assignments, nested_blocks

if TYPE_CHECKING:
    from syncllint.analysis.devices import DeviceInference

_GATHERS = frozenset(("torch.distributed.all_gather_object",))


def note_values_copied_to_host(inference: DeviceInference, loop: cst.For) -> None:
    """``for k, v in d.items(): d[k] = v.cpu()``: after the loop, ``d`` holds host tensors."""
    container = copied_to_host(loop)
    if container is not None:
        inference.bind(cst.Name(container), HOST_TENSOR)


def copied_to_host(loop: cst.For) -> str | None:
    """The dict ``d`` of ``for k, v in d.items(): d[k] = v.cpu()``, else None."""
    call = loop.iter
    if not (
        isinstance(call, cst.Call)
        and not call.args
        and isinstance(call.func, cst.Attribute)
        and call.func.attr.value == "items"
        and isinstance(call.func.value, cst.Name)
        and isinstance(loop.target, cst.Tuple)
        and len(loop.target.elements) == 2
        and isinstance(loop.body, cst.IndentedBlock)
    ):
        return None
    key, value = (element.value for element in loop.target.elements)
    if not (isinstance(key, cst.Name) and isinstance(value, cst.Name)):
        return None
    container = call.func.value.value
    # Written directly in the loop body, so every iteration replaces its key's value.
    for target, assigned in assignments(loop.body):
        if _item_of(target, container, key.value) and _copies_to_host(assigned, value.value):
            return container
    return None


def copied_to_host_in(suite: cst.BaseSuite) -> Iterator[str]:
    """The dicts such loops copy to the host anywhere in ``suite`` (nested blocks included)."""
    for block in nested_blocks(suite):
        for line in block.body if isinstance(block, cst.IndentedBlock) else ():
            if isinstance(line, cst.For) and (container := copied_to_host(line)) is not None:
                yield container


def note_gathered_objects(inference: DeviceInference, call: cst.Call) -> None:
    """``dist.all_gather_object(out, obj)`` of a host ``obj``: ``out`` holds host data after it."""
    if inference.imports.qualify(call.func) not in _GATHERS or len(call.args) < 2:
        return
    out, sent = call.args[0], call.args[1]
    if out.keyword is not None or sent.keyword is not None or not isinstance(out.value, cst.Name):
        return
    if inference.infer(sent.value).place is Place.HOST_TENSOR:
        inference.bind(out.value, HOST_TENSOR)


def _item_of(target: cst.BaseExpression, container: str, key: str) -> bool:
    """``container[key]``."""
    if not (isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and target.value.value == container):
        return False
    index = sole_index(target)
    return isinstance(index, cst.Name) and index.value == key


def _copies_to_host(expr: cst.BaseExpression, name: str) -> bool:
    """``name.cpu()``, ``name.detach().to("cpu")``: a host copy of ``name`` (and nothing else)."""
    if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute)):
        return False
    method = expr.func.attr.value
    if method == "to":
        target = expr.args[0].value if len(expr.args) == 1 else None
        if not (isinstance(target, cst.SimpleString) and target.evaluated_value == "cpu"):
            return False
    elif method not in api.HOST_RESULT_METHODS:  # the chain's last call: ``value.detach().cpu()``
        return False
    receiver = expr.func.value
    while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute):
        receiver = receiver.func.value  # ``.detach()``, ``.float()`` on the way
    return isinstance(receiver, cst.Name) and receiver.value == name
