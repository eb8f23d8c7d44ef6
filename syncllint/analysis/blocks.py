"""What the walk learns from the block structure of a function: device checks, host-only regions
and ``if``/``else`` arms, kept up to date as ``if`` statements, blocks and asserts are entered and left.

Three analyses read the same events: ``Narrowing`` (``if t.is_cuda:`` / ``assert t.is_cpu``),
``HostRegions`` (blocks that run only for host tensors) and ``MovingArms`` (an ``else`` that must
not see the ``if`` arm's move). The walker drives them through this one object.
"""

from __future__ import annotations

import libcst as cst

from syncllint.analysis.arms import MovingArms
from syncllint.analysis.devices import DeviceInference
from syncllint.analysis.host_regions import OFF_CUDA_REGION, HostRegions, runs_off_cuda
from syncllint.analysis.narrowing import Narrowing
from syncllint.traversal import ends_flow


class BlockFacts:
    def __init__(self, inference: DeviceInference) -> None:
        self._narrowing = Narrowing(inference)
        self._arms = MovingArms(inference)
        self._regions = HostRegions()
        # Arms of conditional expressions whose test is a device check: facts hold inside them.
        self.arms: set[int] = set()

    def enter_if(self, node: cst.If) -> None:
        self._arms.enter_if(node)  # first: an ``elif`` test reads the values from before its ``if``
        branches = self._narrowing.enter_if(node)
        if branches.splits_devices:
            self._arms.split_on_devices(node)
        for branch in branches.host:
            self._regions.mark(branch)
        self.arms.update(id(elif_) for elif_ in branches.elifs)
        if runs_off_cuda(node.test):
            self._regions.mark(node.body, OFF_CUDA_REGION)

    def leave_if(self, node: cst.If, frame: list[int]) -> None:
        if self._narrowing.leave_if(node, ends_flow(node.body)):
            self._regions.rest_of_block(frame)  # the device path returned above
        self._arms.leave_if(node)

    def enter_try(self, node: cst.Try | cst.TryStar) -> None:
        self._arms.enter_try(node)

    def leave_try(self, node: cst.Try | cst.TryStar) -> None:
        self._arms.leave_try(node)

    def mark_host(self, body: cst.BaseSuite) -> None:
        """A block that runs for host tensors only (``with torch.device("cpu"):``)."""
        self._regions.mark(body)

    def enter_suite(self, node: cst.BaseSuite, frame: list[int]) -> None:
        self._regions.enter(node, frame)
        self._narrowing.enter_suite(node)
        self._arms.enter_suite(node)

    def leave_suite(self, node: cst.BaseSuite, frame: list[int]) -> None:
        self._arms.leave_suite(node)
        self._narrowing.leave_suite(node)
        self._regions.leave(node, frame)

    def assert_(self, node: cst.Assert) -> None:
        self._narrowing.assert_(node)

    def enter_conditional(self, node: cst.IfExp) -> None:
        self.arms.update(id(arm) for arm in self._narrowing.enter_conditional(node))

    def enter_arm(self, arm: cst.CSTNode) -> None:
        self._narrowing.enter_suite(arm)  # an arm holds its test's facts as a block does

    def leave_arm(self, arm: cst.CSTNode) -> None:
        self.arms.discard(id(arm))
        self._narrowing.leave_suite(arm)

    def enter_and(self, node: cst.BooleanOperation) -> None:
        self._narrowing.enter_and(node)

    def leave_and(self, node: cst.BooleanOperation) -> None:
        self._narrowing.leave_and(node)
