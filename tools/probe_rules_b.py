"""Measure the idioms behind SYNC3xx / SYNC6xx on a CUDA device, and run their rule pages.

Same method as shared/ground-truth/gpu_sync_probe.py: each snippet runs once to warm up, then
under ``torch.cuda.set_sync_debug_mode("warn")`` (count of sync warnings), then behind a ~100 ms
``torch.cuda._sleep`` kernel (host milliseconds: ~100 means the host waited).

``python3 tools/probe_rules_b.py`` writes ``rules_b_truth.json`` into $OUT (or the current folder).
With ``--pages rules/SYNC3*.md ...`` it instead runs each page's ``flag`` / ``ok`` examples whole:
a flag example must sync, an ok example must not.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import warnings

import torch
import torch.nn.functional as F

dev = torch.device("cuda")


def setup() -> dict[str, object]:
    g = torch.Generator(device="cpu").manual_seed(0)
    x = torch.randn(1024, generator=g).to(dev)
    m = torch.randn(8, 8, generator=g).to(dev)
    return dict(
        torch=torch, F=F, dev=dev, x=x, m=m,
        mask=(torch.randn(1024, generator=g) > 0).to(dev),
        idx=torch.randint(0, 1024, (64,), generator=g).to(dev),
        s=torch.tensor(7).to(dev),
        n=torch.tensor(16, dtype=torch.long).to(dev),
        cpu=torch.randn(1024, generator=g),
        cpu_n=torch.tensor(16),
        cpu_idx=torch.tensor([100, 500]),
        spd=m @ m.T + 8 * torch.eye(8, device=dev),
        b=torch.randn(8, 2, generator=g).to(dev),
        cls=torch.randint(0, 10, (64,), generator=g).to(dev),
        rep=torch.tensor([1, 2, 0, 1]).to(dev),
        sorted_cls=torch.randint(0, 10, (64,), generator=g).sort().values.to(dev),
        f=torch.tensor(2.5).to(dev),
    )


SNIPPETS = {
    # data-dependent shapes
    "nonzero_method": "mask.nonzero()",
    "argwhere_method": "mask.argwhere()",
    "nonzero_static_method": "mask.nonzero_static(size=16)",
    "unique_method": "cls.unique()",
    "unique_sorted_false": "torch.unique(cls, sorted=False)",
    "unique_consecutive": "torch.unique_consecutive(sorted_cls)",
    "unique_consecutive_method": "sorted_cls.unique_consecutive()",
    "masked_select_method": "x.masked_select(mask)",
    "repeat_interleave_method_tensor": "idx[:4].repeat_interleave(rep)",
    "repeat_interleave_single_arg": "torch.repeat_interleave(rep)",
    "repeat_interleave_method_int": "x.repeat_interleave(2)",
    "repeat_interleave_output_size_method": "idx[:4].repeat_interleave(rep, output_size=4)",
    "bincount_method": "cls.bincount()",
    "bincount_weights": "torch.bincount(cls, weights=x[:64])",
    "one_hot_num_classes_minus1": "F.one_hot(cls, -1)",
    "one_hot_positional_num_classes": "F.one_hot(cls, 10)",
    "histc_method": "x.histc(bins=10)",
    "histc_min_max": "torch.histc(x, bins=10, min=-4.0, max=4.0)",
    "histc_min_max_positional": "torch.histc(x, 10, -4.0, 4.0)",
    "histogram_tensor_bins": "torch.histc(x, 10, 0, 0)",
    "count_nonzero": "torch.count_nonzero(mask)",
    "searchsorted": "torch.searchsorted(sorted_cls, cls)",
    # sizes and scalars taken from tensors
    "arange_tensor_end": "torch.arange(n, device=dev)",
    "arange_tensor_start_end": "torch.arange(0, n, device=dev)",
    "arange_cpu_tensor_end": "torch.arange(cpu_n, device=dev)",
    "zeros_tensor_size": "torch.zeros(n, device=dev)",
    "zeros_tuple_tensor_size": "torch.zeros((n, 4), device=dev)",
    "empty_tensor_size": "torch.empty(n, device=dev)",
    "ones_cpu_tensor_size": "torch.ones(cpu_n, device=dev)",
    "randn_tensor_size": "torch.randn(n, device=dev)",
    "new_zeros_tensor_size": "x.new_zeros(n)",
    "new_empty_tensor_size": "x.new_empty((n, 2))",
    "view_tensor": "x.view(n, -1)",
    "view_cpu_tensor": "x.view(cpu_n, -1)",
    "reshape_tuple_tensor": "x.reshape((n, -1))",
    "expand_tensor": "x[:1].expand(n)",
    "repeat_tensor": "x[:4].repeat(n)",
    "narrow_tensor_start": "x.narrow(0, n, 4)",
    "narrow_cpu_tensor_length": "x.narrow(0, 0, cpu_n)",
    "narrow_tensor_length_int_start": "x.narrow(0, 0, n)",
    "full_tensor_fill": "torch.full((4,), f, device=dev)",
    "full_cpu_tensor_fill": "torch.full((4,), cpu_n, device=dev)",
    "full_like_tensor_fill": "torch.full_like(x, f)",
    "new_full_tensor_fill": "x.new_full((4,), f)",
    "fill_tensor": "x.clone().fill_(f)",
    "topk_tensor_k": "torch.topk(x, n)",
    "topk_method_tensor_k": "x.topk(n)",
    "topk_int": "x.topk(4)",
    "kthvalue_tensor_k": "x.kthvalue(n)",
    "split_tensor_size": "x.split(n)",
    "tensor_split_cpu_tensor": "torch.tensor_split(x, cpu_idx)",
    "tensor_split_cpu_tensor_method": "x.tensor_split(cpu_idx)",
    "tensor_split_list": "torch.tensor_split(x, [100, 500])",
    "tensor_split_cuda_tensor": "torch.tensor_split(x, idx[:2])",
    "randint_tensor_high": "torch.randint(0, n, (4,), device=dev)",
    "linspace_tensor_steps": "torch.linspace(0, 1, n, device=dev)",
    "linspace_tensor_end": "torch.linspace(0, f, 4, device=dev)",
    "randperm_tensor": "torch.randperm(n, device=dev)",
    "eye_tensor": "torch.eye(n, device=dev)",
    "roll_tensor_shift": "x.roll(n)",
    "add_tensor_alpha": "x.add(x, alpha=f)",
    "pow_tensor": "x.pow(f)",
    "mul_0d": "x * f",
    "clamp_tensor_bound": "x.clamp(max=f)",
    # checked and comparing ops
    "cholesky_ex_L": "torch.linalg.cholesky_ex(spd).L",
    "inv_ex_inverse": "torch.linalg.inv_ex(m).inverse",
    "solve": "torch.linalg.solve(spd, b)",
    "solve_ex": "torch.linalg.solve_ex(spd, b)",
    "lu_factor": "torch.linalg.lu_factor(m)",
    "lu_factor_ex": "torch.linalg.lu_factor_ex(m)",
    "ldl_factor": "torch.linalg.ldl_factor(spd)",
    "ldl_factor_ex": "torch.linalg.ldl_factor_ex(spd)",
    "torch_inverse": "torch.inverse(m)",
    "tensor_inverse": "m.inverse()",
    "torch_cholesky_old": "torch.cholesky(spd)",
    "tensor_cholesky_old": "spd.cholesky()",
    "linalg_cholesky_upper": "torch.linalg.cholesky(spd, upper=True)",
    "linalg_lu": "torch.linalg.lu(m)",
    "linalg_det": "torch.linalg.det(m)",
    "linalg_eigh": "torch.linalg.eigh(spd)",
    "linalg_svd": "torch.linalg.svd(m)",
    "linalg_qr": "torch.linalg.qr(m)",
    "linalg_pinv": "torch.linalg.pinv(m)",
    "linalg_matrix_rank": "torch.linalg.matrix_rank(m)",
    "linalg_lstsq": "torch.linalg.lstsq(m, b)",
    "equal_method_distinct": "x.equal(x.clone())",
    "equal_method_same": "x.equal(x)",
    "equal_distinct_names": "torch.equal(x, x + 0)",
    "allclose_method": "x.allclose(x + 1e-9)",
    "allclose_distinct": "torch.allclose(x, x + 1e-9)",
    "isclose_all": "torch.isclose(x, x).all()",
    "is_nonzero_method": "s.is_nonzero()",
    "is_nonzero_fn": "torch.is_nonzero(s)",
    "equal_cpu": "torch.equal(cpu, cpu.clone())",
    "allclose_cpu": "torch.allclose(cpu, cpu)",
}


def sleep_oracle(run) -> float:
    torch.cuda.synchronize()
    best = None
    for _ in range(2):
        torch.cuda._sleep(int(2e8))
        t0 = time.perf_counter()
        run()
        dt = (time.perf_counter() - t0) * 1e3
        torch.cuda.synchronize()
        best = dt if best is None else min(best, dt)
    return round(best, 3)


def measure(run) -> dict[str, object]:
    try:
        run()
    except Exception as e:  # noqa: BLE001
        return dict(error=f"{type(e).__name__}: {e}"[:200])
    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            run()
        finally:
            torch.cuda.set_sync_debug_mode("default")
    msgs = [str(w.message) for w in caught if "synchronizing" in str(w.message)]
    return dict(syncs=len(msgs), blocked_ms=sleep_oracle(run))


def probe_snippets() -> list[dict[str, object]]:
    rows = []
    for name, code in SNIPPETS.items():
        ns = setup()
        row = dict(name=name, code=code, **measure(lambda: eval(code, ns)))
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


_FENCE = re.compile(r"^```python[ \t]+(flag|ok)[^\n]*\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)


def probe_pages(paths: list[str]) -> list[dict[str, object]]:
    rows = []
    for path in paths:
        text = open(path, encoding="utf-8").read()
        for i, match in enumerate(_FENCE.finditer(text)):
            kind, code = match.group(1), match.group(2)
            compiled = compile(code, f"{os.path.basename(path)}#{i}", "exec")
            row = dict(page=os.path.basename(path), example=i, kind=kind,
                       **measure(lambda: exec(compiled, {"__name__": "__main__"})))
            synced = row.get("syncs", 0) > 0 or row.get("blocked_ms", 0) > 50  # type: ignore[operator]
            row["verdict"] = "ERROR" if "error" in row else ("ok" if synced == (kind == "flag") else "WRONG")
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def main() -> int:
    out = os.environ.get("OUT", ".")
    torch.zeros(1, device=dev).sum().item()
    if len(sys.argv) > 2 and sys.argv[1] == "--pages":
        rows = probe_pages(sys.argv[2:])
        name = "rules_b_pages.json"
    else:
        rows = probe_snippets()
        name = "rules_b_truth.json"
    info = dict(torch=torch.__version__, cuda=torch.version.cuda, gpu=torch.cuda.get_device_name(), rows=rows)
    with open(os.path.join(out, name), "w") as f:
        json.dump(info, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
