"""The CPU emulation against the measured ground truth (H200, torch 2.11).

TRUTH is ``shared/ground-truth/gpu_sync_truth.h200.torch2.11.json`` reduced to a verdict per
snippet (syncs > 0 or blocked_ms > 50 means sync), with the snippets and their ``setup()`` from
``gpu_sync_probe.py``; ``cuda_tensor_numpy`` is left out (it raises on CUDA). The same table is
run through the real detector on a GPU (``gpu`` marker).
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from syncllint.runtime import sync_check
from syncllint.runtime.events import KINDS
from tests.probe_setup import GPU_PROBE_SETUP

# Disagreements with the H200 that are known and accepted: none on this table (see
# docs/verify/emulation.md for the ones outside it).
KNOWN_DISAGREEMENTS: frozenset[str] = frozenset()
MUST_NOT_MISS = ("scalar read", "shape read", "D2H", "H2D")


def setup() -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(GPU_PROBE_SETUP, namespace)  # noqa: S102 - the probe's own setup, shared with the lint test
    torch.cuda.synchronize()
    return namespace


TRUTH: list[tuple[str, str, bool]] = [
    ('item', 'x.sum().item()', True),
    ('tolist', 'x[:8].tolist()', True),
    ('cpu', 'x.cpu()', True),
    ('to_cpu', "x.to('cpu')", True),
    ('to_cpu_nonblocking', "x.to('cpu', non_blocking=True)", False),
    ('numpy_via_cpu', 'x.cpu().numpy()', True),
    ('int()', 'int(s)', True),
    ('float()', 'float(s)', True),
    ('bool()', 'bool(s > 0)', True),
    ('if_tensor', '1 if (x > 100).any() else 0', True),
    ('assert_all', 'None if bool((x < 100).all()) else None', True),
    ('str()', 'str(x[:4])', True),
    ('len()', 'len(x)', False),
    ('shape', 'x.shape[0]', False),
    ('iterate', '[t for t in x[:4]]', False),
    ('index_0d_tensor', 'x[s]', True),
    ('range_tensor', 'list(range(s))', True),
    ('mask_read', 'x[mask]', True),
    ('mask_setitem_scalar', 'x.clone().__setitem__(mask, 0.0)', False),
    ('mask_setitem_tensor', 'x.clone().__setitem__(mask, torch.zeros(1, device=dev))', True),
    ('mask_setitem_0d_tensor', 'x.clone().__setitem__(mask, s.float())', True),
    ('masked_fill_', 'x.clone().masked_fill_(mask, 0.0)', False),
    ('where_3arg', 'torch.where(mask, x, 0.0)', False),
    ('where_1arg', 'torch.where(mask)', True),
    ('nonzero', 'torch.nonzero(mask)', True),
    ('nonzero_static', 'torch.nonzero_static(mask, size=16)', False),
    ('argwhere', 'torch.argwhere(mask)', True),
    ('masked_select', 'torch.masked_select(x, mask)', True),
    ('mask_any_if', '(x[mask] if mask.any() else x)', True),
    ('int_index_read', 'x[idx]', False),
    ('int_index_setitem', 'x.clone().__setitem__(idx, 0.0)', True),
    ('index_fill_', 'x.clone().index_fill_(0, idx, 0.0)', False),
    ('index_put_', 'x.clone().index_put_((idx,), torch.zeros(64, device=dev))', False),
    ('index_select', 'x.index_select(0, idx)', False),
    ('unique', 'torch.unique(cls)', True),
    ('repeat_interleave', 'torch.repeat_interleave(idx[:4], rep)', True),
    ('repeat_interleave_output_size', 'torch.repeat_interleave(idx[:4], rep, output_size=4)', False),
    ('bincount', 'torch.bincount(cls)', True),
    ('bincount_minlength', 'torch.bincount(cls, minlength=10)', True),
    ('one_hot', 'F.one_hot(cls)', True),
    ('one_hot_num_classes', 'F.one_hot(cls, num_classes=10)', False),
    ('histc', 'torch.histc(x, bins=10)', True),
    ('equal', 'torch.equal(x, x)', False),
    ('allclose', 'torch.allclose(x, x)', True),
    ('isclose', 'torch.isclose(x, x)', False),
    ('arange_item', 'torch.arange(n.item(), device=dev)', True),
    ('arange_int', 'torch.arange(16, device=dev)', False),
    ('multinomial', 'torch.multinomial(torch.softmax(x[:16], 0), 4)', False),
    ('topk', 'torch.topk(x, 4)', False),
    ('sort', 'torch.sort(x)', False),
    ('cholesky', 'torch.linalg.cholesky(spd)', True),
    ('cholesky_ex', 'torch.linalg.cholesky_ex(spd)', False),
    ('inv', 'torch.linalg.inv(m)', True),
    ('clamp_tensor_item', 'x.clamp(min=s.item())', True),
    ('clamp_tensor', 'x.clamp(min=s)', False),
    ('fill_item', 'x.clone().fill_(s.item())', True),
    ('fill_tensor', 'x.clone().fill_(s)', False),
    ('copy_slice', 'x.clone()[-1:].copy_(s.view(1))', False),
    ('tensor_list_device', 'torch.tensor(lst, device=dev)', True),
    ('tensor_scalar_device', 'torch.tensor(3, device=dev)', True),
    ('as_tensor_list_device', 'torch.as_tensor(lst, device=dev)', True),
    ('tensor_to_cuda', 'torch.tensor(lst).to(dev)', True),
    ('tensor_cuda()', 'torch.tensor(lst).cuda()', True),
    ('tensor_to_cuda_nonblocking_pageable', 'torch.tensor(lst).to(dev, non_blocking=True)', False),
    ('pinned_to_cuda_nonblocking', 'pinned.to(dev, non_blocking=True)', False),
    ('pin_then_nonblocking', 'torch.tensor(lst, pin_memory=True).to(dev, non_blocking=True)', False),
    ('cpu_tensor_to_cuda', 'cpu.to(dev)', True),
    ('new_tensor', 'x.new_tensor(lst)', True),
    ('from_numpy_cuda', 'torch.from_numpy(cpu.numpy()).to(dev)', True),
    ('zeros_device', 'torch.zeros(16, device=dev)', False),
    ('full_device', 'torch.full((16,), 5, device=dev)', False),
    ('pin_memory_alloc', 'torch.empty(64, pin_memory=True)', False),
    ('copy_into_cuda_from_pinned_nb', 'torch.empty(64, device=dev, dtype=torch.long).copy_(pinned, non_blocking=True)', False),
    ('copy_into_cuda_from_pageable', 'torch.empty(64, device=dev).copy_(cpu[:64])', True),
    ('copy_into_pinned_from_cuda_nb', 'torch.empty(1024, pin_memory=True).copy_(x, non_blocking=True)', False),
    ('cuda_synchronize', 'torch.cuda.synchronize()', True),
    ('stream_synchronize', 'torch.cuda.current_stream().synchronize()', True),
    ('event_synchronize', '(lambda e: (e.record(), e.synchronize()))(torch.cuda.Event())', True),
    ('tensor_compare_scalar', 'x == 3', False),
    ('max_dim', 'x.view(32, 32).max(dim=0)', False),
    ('cumsum', 'torch.cumsum(x, 0)', False),
    ('cat', 'torch.cat([x, x])', False),
    ('scalar_tensor_arith', 'x * s', False),
    ('equal_distinct', 'torch.equal(x, x.clone())', True),
    ('nonzero_as_tuple', 'mask.nonzero(as_tuple=True)', True),
    ('int_index_setitem_tensor_value', 'x.clone().__setitem__(idx, torch.zeros(64, device=dev))', False),
    ('int_index_setitem_0d_value', 'x.clone().__setitem__(idx, s.float())', False),
    ('index_put_scalar_cpu_value', 'x.clone().index_put_((idx,), torch.tensor(0.0))', True),
    ('slice_setitem_scalar', 'x.clone().__setitem__(slice(0, 8), 0.0)', False),
    ('int_setitem_scalar', 'x.clone().__setitem__(3, 0.0)', True),
    ('mask2d_last_dim', 'x.view(32, 32)[:, mask[:32]]', True),
    ('slice_by_tensor', 'x[:s]', True),
    ('view_by_item', 'x.view(s.item() + 1, -1)', True),
    ('reshape_tensor_arg', 'x.reshape(n, -1)', True),
    ('narrow_tensor', 'x.narrow(0, 0, n)', True),
    ('builtin_max', 'max(x[:4])', True),
    ('builtin_sum', 'sum(x[:4])', False),
    ('sorted_tensor', 'sorted(x[:4])', True),
    ('while_tensor', '[None for _ in range(0) if (x > 0).any()]', False),
    ('to_dtype', 'x.to(torch.float16)', False),
    ('to_same_device', 'x.to(dev)', False),
    ('tensor_copy_ctor_cuda', 'torch.tensor(x)', False),
    ('as_tensor_cuda_tensor', 'torch.as_tensor(x, device=dev)', False),
    ('as_tensor_numpy_device', 'torch.as_tensor(cpu.numpy(), device=dev)', True),
    ('d2h_nonblocking_then_read', "x.to('cpu', non_blocking=True).sum()", False),
    ('topk_k_item', 'torch.topk(x, int(n.item()))', True),
    ('stream_query', 'torch.cuda.current_stream().query()', False),
    ('randint_device', 'torch.randint(0, 10, (16,), device=dev)', False),
    ('split_list', 'torch.split(x, [512, 512])', False),
    ('tensor_split_tensor', 'torch.tensor_split(x, idx[:2].sort().values.cpu())', True),
    ('cumsum_then_item_last', 'torch.cumsum(idx, 0)[-1].item()', True),
    ('logical_any_no_bool', '(x > 0).any()', False),
    ('max_reduce', 'x.max()', False),
    ('argmax', 'x.argmax()', False),
    ('masked_scatter_', 'x.clone().masked_scatter_(mask, x)', False),
    ('index_copy_', 'x.clone().index_copy_(0, idx, torch.zeros(64, device=dev))', False),
    ('scatter_', 'x.clone().scatter_(0, idx, torch.zeros(64, device=dev))', False),
    ('gather', 'torch.gather(x, 0, idx)', False),
    ('searchsorted', 'torch.searchsorted(torch.sort(x).values, x[:8])', False),
    ('empty_like_pin', 'torch.empty_like(cpu, pin_memory=True)', False),
    ('data_ptr', 'x.data_ptr()', False),
    ('record_stream', 'x.record_stream(torch.cuda.current_stream())', False),
    ('kthvalue', 'torch.kthvalue(x, 3)', False),
    ('median', 'torch.median(x)', False),
    ('nan_to_num', 'torch.nan_to_num(x)', False),
    ('isin', 'torch.isin(cls, idx[:4])', False),
    ('unique_consecutive', 'torch.unique_consecutive(cls)', True),
    ('count_nonzero', 'torch.count_nonzero(mask)', False),
    ('sum_bool_item', 'mask.sum().item()', True),
]


def run_snippet(code: str, emulate: bool) -> list[Any]:
    """Events of one snippet; setup runs inside the check (so its tensors are device tensors) but
    its own copies are not counted."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if not emulate:
            namespace = setup()
            eval(code, dict(namespace))  # warm-up, as the probe did
            torch.cuda.synchronize()
        with sync_check(mode="record", emulate=emulate) as report:
            namespace = setup()
            report.events.clear()
            eval(code, namespace)
    return [e for e in report.events if e.is_sync]


def agreement(emulate: bool) -> tuple[float, list[str], list[str]]:
    wrong, missed = [], []
    for name, code, synced in TRUTH:
        events = run_snippet(code, emulate)
        if bool(events) != synced and name not in KNOWN_DISAGREEMENTS:
            wrong.append(f"{name}: H200 {'sync' if synced else 'no sync'}, got {[(e.kind, e.op) for e in events]}")
            if synced:
                missed.append(name)
    return 1 - len(wrong) / len(TRUTH), wrong, missed


def test_emulation_agrees_with_the_h200() -> None:
    rate, wrong, missed = agreement(emulate=True)
    assert rate >= 0.95, wrong
    assert not missed, f"false negatives: {missed}"


@pytest.mark.parametrize(("name", "code", "synced"), [row for row in TRUTH if row[2]], ids=[row[0] for row in TRUTH if row[2]])
def test_every_measured_sync_is_reported_as_emulated_with_a_kind(name: str, code: str, synced: bool) -> None:
    events = run_snippet(code, emulate=True)
    assert events, f"{name} syncs on the H200 but the emulation saw nothing"
    assert all(e.emulated and e.kind in KINDS for e in events)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_detector_agrees_with_the_h200_on_a_gpu() -> None:
    rate, wrong, missed = agreement(emulate=False)
    print(f"real detector agreement: {rate:.3f}", wrong)
    assert rate >= 0.95, wrong
    assert not missed, f"false negatives: {missed}"
