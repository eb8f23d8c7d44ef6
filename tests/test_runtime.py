"""The runtime API on a CPU-only torch: sync_check, gpu_sync_allowed, the emulation's device tensors."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from syncllint.runtime import (
    SyncCheckError,
    SyncWarning,
    async_tensor_h2d,
    gpu_sync_allowed,
    reset_first_only,
    sync_check,
)
from syncllint.runtime.context import ALLOWED, CURRENT_CHECK
from syncllint.runtime.events import rule_code_for

HERE = str(Path(__file__).resolve())


def emulated(mode: str = "record") -> sync_check:
    return sync_check(mode=mode, emulate=True)


def test_record_mode_collects_events_with_user_frame_kind_and_rule() -> None:
    with emulated() as report:
        x = torch.randn(8, device="cuda")
        line = sys._getframe().f_lineno + 1
        x.sum().item()
    [event] = report.events
    assert (event.kind, event.op, event.rule_code, event.emulated, event.allowed) == ("scalar read", "item", "SYNC101", True, False)
    assert (event.filename, event.lineno) == (HERE, line)
    assert event.source_line == "x.sum().item()"


def test_error_mode_raises_at_the_sync_naming_the_line() -> None:
    with pytest.raises(SyncCheckError, match=r"test_runtime.py:\d+: SYNC102 .*tolist"), emulated("error"):
        torch.arange(4, device="cuda").tolist()


def test_warn_mode_warns_and_goes_on() -> None:
    with pytest.warns(SyncWarning, match="SYNC103"), emulated("warn"):
        host = torch.ones(3, device="cuda").cpu()
    assert host.tolist() == [1.0, 1.0, 1.0]


def test_device_tensors_answer_as_cuda_tensors_and_compute_right() -> None:
    with emulated() as report:
        x = torch.arange(6, device="cuda", dtype=torch.float32)
        y = (x * 2).reshape(2, 3).sum(0)
        assert x.is_cuda and x.device == torch.device("cuda", 0) and y.is_cuda
        z = torch.zeros(3).cuda()
        assert z.is_cuda and z.to("cuda") is z
    assert torch.equal(y.cpu(), torch.tensor([6.0, 10.0, 14.0]))
    assert [e.op for e in report.events] == ["cuda"]  # blocking upload


def test_numpy_of_a_device_tensor_raises_as_on_cuda() -> None:
    with emulated():
        x = torch.ones(2, device="cuda")
        with pytest.raises(TypeError, match="can't convert cuda:0"):
            x.numpy()


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("x[mask]", [("shape read", "mask index")]),
        ("x.clone().__setitem__(mask, 0.0)", []),
        ("x.clone().__setitem__(mask, x.max())", [("shape read", "masked write")]),
        ("torch.nonzero(mask)", [("shape read", "nonzero")]),
        ("torch.repeat_interleave(x[:2], torch.arange(1, 3, device='cuda'))", [("shape read", "repeat_interleave")]),
        ("torch.repeat_interleave(x[:2], torch.arange(1, 3, device='cuda'), output_size=3)", []),
        ("torch.nn.functional.one_hot(torch.arange(3, device='cuda'))", [("shape read", "one_hot")]),
        ("torch.nn.functional.one_hot(torch.arange(3, device='cuda'), num_classes=3)", []),
        ("bool(x.sum() > 0)", [("scalar read", "__bool__")]),
        ("torch.tensor([1, 2], device='cuda')", [("H2D", "torch.tensor")]),
        ("torch.tensor([1, 2]).to('cuda', non_blocking=True)", []),
        ("torch.empty(1 << 20).to('cuda', non_blocking=True)", [("H2D", "to(cuda)")]),
        ("torch.empty(1 << 20, pin_memory=True).to('cuda', non_blocking=True)", []),
        ("torch.cuda.synchronize()", [("explicit wait", "torch.cuda.synchronize")]),
        ("torch.cuda.current_stream().query()", []),
        ("x.to('cpu', non_blocking=True).sum()", [("race", "read before copy done")]),
        ("torch.where(mask, x, 0.0)", []),
        ("torch.where(mask, x, torch.tensor(0.0))", [("H2D", "where (host tensor)")]),
        ("torch.where(mask)", [("shape read", "nonzero")]),
        ("x.numpy(force=True)", [("D2H", "numpy(force=True)")]),
        ("f'{x.sum():.4f}'", [("scalar read", "__format__")]),
        ("x[torch.tensor([1, 2])]", [("H2D", "index (host tensor)")]),
        ("x[[1, 2]]", [("H2D", "index (host list)")]),
        ("x[torch.arange(16) > 3]", []),
        ("x[torch.tensor(3)]", []),
        ("x[torch.arange(2, device='cuda')]", []),
        ("torch.tensor([x[0], x[1]])", [("D2H", "torch.tensor(device tensors)")]),
        ("torch.zeros(4).__setitem__(0, x[0])", [("D2H", "setitem (device value into host tensor)")]),
        ("torch.zeros(4).__setitem__(0, 1.0)", []),
    ],
)
def test_emulated_rules(code: str, expected: list[tuple[str, str]]) -> None:
    with emulated() as report:
        namespace = {"torch": torch, "x": torch.randn(16, device="cuda")}
        namespace["mask"] = namespace["x"] > 0
        eval(code, namespace)
    assert [(e.kind, e.op) for e in report.events] == expected


def test_device_values_gathered_into_a_host_tensor_give_a_host_tensor() -> None:
    with emulated():
        x = torch.arange(4, device="cuda")
        bounds = torch.tensor([x[0], x[-1]])
        formatted = f"{x.sum().float():.1f}"
    assert not bounds.is_cuda and bounds.tolist() == [0, 3]
    assert formatted == "6.0"


def test_a_wait_completes_the_copy_so_reading_it_is_no_race() -> None:
    with emulated() as report:
        staged = torch.randn(16, device="cuda").to("cpu", non_blocking=True)
        done = torch.cuda.Event()
        done.record()
        done.synchronize()
        staged.sum()
    assert [e.kind for e in report.events] == ["explicit wait"]


def test_allowed_regions_nest_and_are_recorded_as_allowed() -> None:
    with emulated("error") as report:
        x = torch.ones(4, device="cuda")
        with gpu_sync_allowed(reason="warm-up"):
            with gpu_sync_allowed():
                x.sum().item()
            x.max().item()
        with pytest.raises(SyncCheckError):
            x.min().item()
    assert [e.allowed for e in report.events] == [True, True, False]


def test_allowed_as_decorator() -> None:
    @gpu_sync_allowed()
    def read(t: torch.Tensor) -> float:
        return t.sum().item()

    with emulated("error") as report:
        assert read(torch.ones(2, device="cuda")) == 2.0
    assert [e.allowed for e in report.events] == [True]


def test_first_only_allows_the_first_checked_entry_per_call_site() -> None:
    reset_first_only()
    allowed = []
    with emulated() as report:
        x = torch.ones(2, device="cuda")
        for _ in range(3):
            with gpu_sync_allowed(first_only=True):
                x.sum().item()
    allowed = [e.allowed for e in report.events]
    assert allowed == [True, False, False]


def test_allowed_is_a_no_op_while_nothing_is_checked() -> None:
    with gpu_sync_allowed():
        assert ALLOWED.get() == (None,)
    assert ALLOWED.get() == () and CURRENT_CHECK.get() is None


def test_decorator_checks_only_when_the_environment_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    @sync_check(emulate=True)
    def step(t: torch.Tensor) -> float:
        return t.sum().item()

    with emulated():
        x = torch.ones(2, device="cuda")
    monkeypatch.delenv("SYNCLLINT_SYNC_CHECK", raising=False)
    assert step(x) == 2.0
    monkeypatch.setenv("SYNCLLINT_SYNC_CHECK", "error")
    with pytest.raises(SyncCheckError):
        step(x)
    monkeypatch.setenv("SYNCLLINT_SYNC_CHECK", "off")
    assert step(x) == 2.0


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a CPU-only torch")
def test_explicit_mode_decorator_is_disabled_by_off(monkeypatch: pytest.MonkeyPatch) -> None:
    @sync_check(mode="error", emulate=True)
    def step() -> list[float]:
        return torch.ones(2, device="cuda").tolist()

    monkeypatch.delenv("SYNCLLINT_SYNC_CHECK", raising=False)
    with pytest.raises(SyncCheckError):
        step()
    monkeypatch.setenv("SYNCLLINT_SYNC_CHECK", "off")
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        step()  # unchecked and unemulated: CPU-only torch refuses "cuda"


def test_record_mode_writes_events_where_the_environment_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "events.jsonl"
    monkeypatch.setenv("SYNCLLINT_SYNC_REPORT", str(out))
    with emulated():
        torch.ones(2, device="cuda").sum().item()
    [line] = out.read_text().splitlines()
    assert json.loads(line)["rule_code"] == "SYNC101"


def test_other_threads_are_not_checked() -> None:
    seen: list[object] = []
    with emulated() as report:
        x = torch.ones(4, device="cuda")

        def worker() -> None:
            seen.append(CURRENT_CHECK.get())
            x.sum().item()  # no check, no emulation modes on this thread

        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
    assert seen == [None] and report.events == []


def test_asyncio_tasks_are_checked_separately() -> None:
    with emulated():
        x = torch.ones(4, device="cuda")

    async def checked() -> int:
        with emulated() as report:
            await asyncio.sleep(0)
            x.sum().item()
            await asyncio.sleep(0)
        return len(report.events)

    async def unchecked() -> object:
        await asyncio.sleep(0)
        return CURRENT_CHECK.get()

    async def both() -> tuple[int, object]:
        return await asyncio.gather(checked(), unchecked())  # type: ignore[return-value]

    events, other = asyncio.run(both())
    assert events == 1 and other is None


def test_global_state_is_restored_after_emulation() -> None:
    synchronize = torch.cuda.synchronize
    with emulated():
        with emulated():
            assert torch.cuda.synchronize is not synchronize
        assert torch._C._len_torch_function_stack() >= 1
    assert torch.cuda.synchronize is synchronize
    assert torch._C._len_torch_function_stack() == 0
    assert CURRENT_CHECK.get() is None


def test_async_tensor_h2d_makes_no_sync_and_keeps_values() -> None:
    with emulated("error"):
        t = async_tensor_h2d([1, 2, 3], "cuda", dtype=torch.int32)
        assert t.is_cuda and t.dtype == torch.int32
    assert t.cpu().tolist() == [1, 2, 3]


def test_rule_codes_fall_back_to_the_family() -> None:
    assert rule_code_for("scalar read", "item") == "SYNC101"
    assert rule_code_for("explicit wait", "not-an-op").startswith("SYNC7")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rule_code_for("race", "read before copy done").startswith("SYNC8")


def test_module_moved_to_cuda_has_device_parameters_and_grads() -> None:
    with emulated() as report:
        layer = torch.nn.Linear(4, 4).cuda()
        assert isinstance(layer.weight, torch.nn.Parameter) and layer.weight.is_cuda
        layer(torch.randn(2, 4, device="cuda")).sum().backward()
        assert layer.weight.grad is not None and layer.weight.grad.is_cuda
    assert [e.op for e in report.events] == ["cuda", "cuda"]  # weight and bias uploads
    assert torch.__future__.get_overwrite_module_params_on_conversion() is False
