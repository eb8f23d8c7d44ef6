"""The ``else`` of an ``if`` that moves a tensor starts from the tensor as it was before the ``if``.

The inference is flow-ordered: an ``else`` arm sees what the ``if`` arm bound, which is usually
harmless and often helps (see the closing note of issue 3: making all arms independent lost more
true findings than it removed false ones). One pattern is plainly wrong under flow order, the
choice of a device for one tensor::

    cu_seqlens = torch.from_numpy(lens)
    if not on_npu:
        cu_seqlens = cu_seqlens.to(device, non_blocking=True)
    else:
        cu_seqlens = cu_seqlens.to("cpu")       # a host tensor here, not the device copy above

So for names the ``if`` arm moves onto themselves (``x = x.to(...)`` / ``.cuda()`` / ``.cpu()``),
the ``else`` arm reads the value from before the ``if``. After the statement, a name the ``else``
arm left alone holds the ``if`` arm's value again, as flow order had it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from syncllint.analysis.values import Value
from syncllint.traversal import name_assignments

if TYPE_CHECKING:
    from syncllint.analysis.devices import DeviceInference

_MOVES = frozenset(("to", "cuda", "cpu"))


class MovingArms:
    def __init__(self, inference: DeviceInference) -> None:
        self._inference = inference
        self._before: dict[int, dict[str, Value]] = {}  # else body id -> values before the ``if``
        # else body id -> name -> (the ``if`` arm's value, the value the ``else`` arm started from)
        self._kept: dict[int, dict[str, tuple[Value, Value]]] = {}

    def enter_if(self, node: cst.If) -> None:
        if not isinstance(node.orelse, cst.Else):
            return
        before: dict[str, Value] = {}
        for name in _self_moves(node.body):
            value = self._inference.lookup(name)
            if value is not None:
                before[name] = value
        if before:
            self._before[id(node.orelse.body)] = before

    def enter_suite(self, suite: cst.BaseSuite) -> None:
        before = self._before.pop(id(suite), None)
        if before is None:
            return
        kept: dict[str, tuple[Value, Value]] = {}
        for name, value in before.items():
            first_arm = self._inference.lookup(name)
            self._inference.bind(cst.Name(name), value)
            entered = self._inference.lookup(name)
            if first_arm is not None and entered is not None:
                kept[name] = (first_arm, entered)
        self._kept[id(suite)] = kept

    def leave_suite(self, suite: cst.BaseSuite) -> None:
        for name, (first_arm, entered) in self._kept.pop(id(suite), {}).items():
            if self._inference.lookup(name) is entered:  # the ``else`` arm left it alone
                self._inference.bind(cst.Name(name), first_arm)


def _self_moves(body: cst.BaseSuite) -> list[str]:
    """Names the block's own statements rebind as moves of themselves: ``x = x.to(device)``."""
    return [name for name, value in name_assignments(body) if _moves(value, name)]


def _moves(value: cst.BaseExpression, name: str) -> bool:
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value in _MOVES
        and isinstance(value.func.value, cst.Name)
        and value.func.value.value == name
    )
