"""Blocks of a function that run only for host tensors: findings there read host data.

``if not t.is_cuda:`` (a CPU fallback), ``if device.type == "cpu":``, the code after
``if t.is_cuda: return ...`` and a ``with torch.device("cpu"):`` body handle CPU inputs, so a
tensor of unknown device read there is a host tensor too (its medium findings drop to low, as in
host code). The function itself is not host code: a device argument there is still no host's.
"""

from __future__ import annotations

import libcst as cst

# The host slot of a walker frame: host code by function (``forward_cpu``, a processor, a host
# module), or a region of a function that runs only for host tensors.
HOST_FUNCTION, HOST_REGION = 1, 2
HOST_SLOT = 3


class HostRegions:
    """Sets and restores the host slot of the walker's current frame as blocks are entered and left."""

    def __init__(self) -> None:
        self._bodies: set[int] = set()  # blocks that run only for host tensors
        self._saved: list[int] = []
        self._blocks: list[int] = []  # the blocks the walk is in, innermost last
        self._until: dict[int, int] = {}  # block -> host slot to restore when it ends

    def mark(self, body: cst.BaseSuite) -> None:
        self._bodies.add(id(body))

    def rest_of_block(self, frame: list[int]) -> None:
        """From here to the end of the enclosing block (a device path above returned)."""
        if self._blocks and not frame[HOST_SLOT]:
            self._until[self._blocks[-1]] = frame[HOST_SLOT]
            frame[HOST_SLOT] = HOST_REGION

    def enter(self, block: cst.BaseSuite, frame: list[int]) -> None:
        self._blocks.append(id(block))
        if id(block) in self._bodies:
            self._saved.append(frame[HOST_SLOT])
            frame[HOST_SLOT] = frame[HOST_SLOT] or HOST_REGION

    def leave(self, block: cst.BaseSuite, frame: list[int]) -> None:
        key = id(block)
        if key in self._bodies:
            frame[HOST_SLOT] = self._saved.pop()
        if key in self._until:
            frame[HOST_SLOT] = self._until.pop(key)
        self._blocks.pop()
