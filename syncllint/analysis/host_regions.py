"""Blocks of a function that run only for host tensors: findings there read host data.

``if not t.is_cuda:`` (a CPU fallback), ``if device.type == "cpu":``, the code after
``if t.is_cuda: return ...``, a ``with torch.device("cpu"):`` body and a branch for a platform
without a CUDA queue (``if current_platform.is_cpu():`` / ``is_tpu()``, whose XLA tensors are
lazy) handle other inputs than CUDA ones, so a tensor of unknown device read there is a host tensor too (its medium findings drop to low, as in
host code). The function itself is not host code: a device argument there is still no host's.
"""

from __future__ import annotations

import re

import libcst as cst

# The host slot of a walker frame: host code by function (``forward_cpu``, a processor, a host
# module), or a region of a function that runs only for host tensors.
HOST_FUNCTION, HOST_REGION = 1, 2
# A branch for a platform without a CUDA queue: nothing there waits for a CUDA GPU, not even a copy
# of known host data (every finding drops to low).
OFF_CUDA_REGION = 3
HOST_SLOT = 3


# Platform queries (``current_platform.is_tpu()``) whose branch runs where no CUDA queue is.
_NON_CUDA_PLATFORMS = frozenset(("is_cpu", "is_tpu"))
_XLA_NAMES = frozenset(("xla", "tpu"))


# ``XLAStrategy``, ``TPUAccelerator``, ``_xla_broadcast``, ``strategies/xla_fsdp.py``: code written for
# a lazy XLA device. Uploading there queues a transfer and runs nothing pending, so the host does
# not wait (reading back, ``.cpu()`` / ``.item()``, still runs the graph and waits).
_LAZY_DEVICE_CLASS = re.compile(r"XLA|Xla|TPU|Tpu")
_LAZY_DEVICE_WORD = re.compile(r"(?:^|_)(?:xla|tpu)(?:_|$)")


def names_a_lazy_device(name: str, is_class: bool = False) -> bool:
    """Whether a class, function or module name says its code is for an XLA (TPU) device."""
    return bool((_LAZY_DEVICE_CLASS if is_class else _LAZY_DEVICE_WORD).search(name))


def runs_off_cuda(test: cst.BaseExpression) -> bool:
    """``current_platform.is_cpu()`` / ``is_tpu()`` (a query without arguments, not ``t.is_cpu``),
    or a backend compared equal to XLA: ``self._ddp_backend == "xla"``, ``distributed_type ==
    DistributedType.TPU`` (Catalyst, Accelerate)."""
    if isinstance(test, cst.Comparison):
        return (
            len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.Equal)
            and (_names_xla(test.left) or _names_xla(test.comparisons[0].comparator))
        )
    return (
        isinstance(test, cst.Call)
        and not test.args
        and isinstance(test.func, cst.Attribute)
        and test.func.attr.value in _NON_CUDA_PLATFORMS
    )


def _names_xla(side: cst.BaseExpression) -> bool:
    """``"xla"`` / ``"tpu"``, or an enum member ``Kind.TPU`` / ``Kind.XLA``."""
    if isinstance(side, cst.SimpleString):
        return side.evaluated_value in _XLA_NAMES
    return isinstance(side, cst.Attribute) and side.attr.value.lower() in _XLA_NAMES


class HostRegions:
    """Sets and restores the host slot of the walker's current frame as blocks are entered and left."""

    def __init__(self) -> None:
        self._bodies: dict[int, int] = {}  # blocks that run only for host tensors -> their kind
        self._saved: list[int] = []
        self._blocks: list[int] = []  # the blocks the walk is in, innermost last
        self._until: dict[int, int] = {}  # block -> host slot to restore when it ends

    def mark(self, body: cst.BaseSuite, kind: int = HOST_REGION) -> None:
        self._bodies[id(body)] = max(kind, self._bodies.get(id(body), 0))

    def rest_of_block(self, frame: list[int]) -> None:
        """From here to the end of the enclosing block (a device path above returned)."""
        if self._blocks and not frame[HOST_SLOT]:
            self._until[self._blocks[-1]] = frame[HOST_SLOT]
            frame[HOST_SLOT] = HOST_REGION

    def enter(self, block: cst.BaseSuite, frame: list[int]) -> None:
        self._blocks.append(id(block))
        if id(block) in self._bodies:
            self._saved.append(frame[HOST_SLOT])
            kind = self._bodies[id(block)]
            frame[HOST_SLOT] = kind if kind == OFF_CUDA_REGION else frame[HOST_SLOT] or kind

    def leave(self, block: cst.BaseSuite, frame: list[int]) -> None:
        key = id(block)
        if key in self._bodies:
            frame[HOST_SLOT] = self._saved.pop()
        if key in self._until:
            frame[HOST_SLOT] = self._until.pop(key)
        self._blocks.pop()
