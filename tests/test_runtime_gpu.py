"""The runtime detector on a real CUDA device: debug mode routing, its blind spots, restored state."""

from __future__ import annotations

import threading
import warnings

import pytest

torch = pytest.importorskip("torch")

from syncllint.runtime import (
    SyncCheckError,
    async_tensor_h2d,
    gpu_sync_allowed,
    sync_check,
)

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]


def _global_state() -> tuple[object, ...]:
    return (
        torch.cuda.get_sync_debug_mode(),
        warnings.showwarning,
        len(warnings.filters),
        torch.cuda.synchronize,
        torch.cuda.Event.synchronize,
        "to" in vars(torch.Tensor),
        "copy_" in vars(torch.Tensor),
    )


def test_item_is_reported_with_user_frame_and_rule() -> None:
    x = torch.randn(64, device="cuda")
    with sync_check(mode="record", emulate=False) as report:
        value = x.sum().item()  # the line reported
    assert isinstance(value, float)
    [event] = [e for e in report.events if e.is_sync]
    assert event.filename == __file__
    assert "x.sum().item()" in event.source_line
    assert (event.kind, event.op, event.rule_code, event.emulated) == ("scalar read", "item", "SYNC101", False)


def test_error_mode_raises_at_the_sync() -> None:
    x = torch.randn(64, device="cuda")
    with pytest.raises(SyncCheckError, match="SYNC103"), sync_check(mode="error", emulate=False):
        x.cpu()


def test_no_event_for_sync_free_code() -> None:
    x = torch.randn(1024, device="cuda")
    with sync_check(mode="record", emulate=False) as report:
        for _ in range(10):
            x = torch.where(x > 0, x * 0.5, x) + 1
    assert report.events == []


def test_blind_spots_are_covered() -> None:
    x = torch.randn(64, device="cuda")
    big_pageable = torch.empty(16 << 20, dtype=torch.uint8)  # 16 MiB
    small_pageable = torch.arange(64)
    with sync_check(mode="record", emulate=False) as report:
        torch.cuda.synchronize()
        event = torch.cuda.Event()
        event.record()
        event.synchronize()
        big_pageable.to("cuda", non_blocking=True)
        small_pageable.to("cuda", non_blocking=True)
        torch.empty(64).copy_(x, non_blocking=True)  # D2H into pageable memory blocks
        torch.empty(64, pin_memory=True).copy_(x, non_blocking=True)  # pinned: async
    ops = [e.op for e in report.events]
    assert ops == ["torch.cuda.synchronize", "Event.synchronize", "to(cuda)", "copy_(D2H)"]


def test_allowed_regions_are_recorded_not_raised() -> None:
    x = torch.randn(64, device="cuda")
    with sync_check(mode="error", emulate=False) as report, gpu_sync_allowed(reason="warm-up"):
        x.max().item()
    assert [e.allowed for e in report.events] == [True]


def test_other_threads_are_not_reported() -> None:
    x = torch.randn(64, device="cuda")
    worker_errors: list[BaseException] = []

    def worker() -> None:
        try:
            for _ in range(20):
                x.sum().item()
        except BaseException as err:  # noqa: BLE001
            worker_errors.append(err)

    with sync_check(mode="error", emulate=False) as report:
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
    assert worker_errors == [] and report.events == []


def test_global_state_is_restored() -> None:
    before = _global_state()
    with sync_check(mode="record", emulate=False):
        with sync_check(mode="record", emulate=False):
            torch.randn(4, device="cuda").sum().item()
        assert torch.cuda.get_sync_debug_mode() == 1
    assert _global_state() == before


def test_async_tensor_h2d_does_not_sync_and_keeps_values() -> None:
    data = list(range(1000))
    with sync_check(mode="error", emulate=False):
        t = async_tensor_h2d(data, "cuda", dtype=torch.int32)
    assert t.is_cuda and t.dtype == torch.int32
    assert t.cpu().tolist() == data


def test_compile_time_syncs_are_allowed() -> None:
    @torch.compile
    def step(x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x) * 2 + 1

    x = torch.randn(256, device="cuda")
    with sync_check(mode="record", emulate=False) as report:
        step(x)
        step(x)
    assert [e for e in report.events if not e.allowed] == []
