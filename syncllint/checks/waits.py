"""SYNC701-703: explicit host waits. Intentional and visible, so info and off by default:
``--select SYNC7`` (or ``extend-select``) lists them when auditing where a loop blocks."""

from __future__ import annotations

from typing import ClassVar

import libcst as cst

from syncllint.analysis.waits import WaitKind, host_wait
from syncllint.checks.base import Rule, RuleContext
from syncllint.diagnostics import Confidence, Severity


class _ExplicitWait(Rule):
    family = "explicit waits"
    enabled_by_default = False
    fixed_severity = Severity.INFO
    kind: ClassVar[WaitKind]
    message: ClassVar[str]

    def visit_Call(self, node: cst.CSTNode, ctx: RuleContext) -> None:
        if isinstance(node, cst.Call) and host_wait(node, ctx.inference) is self.kind:
            ctx.report(self, node, self.message, Confidence.HIGH)


class DeviceSynchronize(_ExplicitWait):
    code = "SYNC701"
    triggers = ("synchronize",)
    name = "device-synchronize"
    summary = "`torch.cuda.synchronize()` blocks the host until every stream is idle (off by default)"
    kind = WaitKind.DEVICE
    message = (
        "`torch.cuda.synchronize()` blocks the host until all work on every stream of the device is done; "
        "torch's sync debug mode does not report it (measured); wait on an event recorded after the work "
        "you need instead, or drop the wait"
    )


class StreamSynchronize(_ExplicitWait):
    code = "SYNC702"
    triggers = ("synchronize",)
    name = "stream-synchronize"
    summary = "`Stream.synchronize()` blocks the host until the stream is idle (off by default)"
    kind = WaitKind.STREAM
    message = (
        "`Stream.synchronize()` blocks the host until all work queued on the stream is done; record an "
        "event after the work you need and wait on that (or let the GPU wait with `stream.wait_event`)"
    )


class EventSynchronize(_ExplicitWait):
    code = "SYNC703"
    triggers = ("synchronize",)
    name = "event-synchronize"
    summary = "`Event.synchronize()` blocks the host until the event has happened (off by default)"
    kind = WaitKind.EVENT
    message = (
        "`Event.synchronize()` blocks the host until the GPU reaches the event; torch's sync debug mode does "
        "not report it (measured); make sure it is the one wait the step needs, placed as late as possible"
    )


RULES = (DeviceSynchronize, StreamSynchronize, EventSynchronize)
