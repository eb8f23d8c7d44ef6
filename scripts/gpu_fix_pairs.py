"""Run every rule page's flag/fixed pair on a CUDA device: syncs before and after, same results?

Usage (on a GPU machine, from the repository root): ``python scripts/gpu_fix_pairs.py [OUT.json]``.
For each pair, both snippets run from the same seed under ``torch.cuda.set_sync_debug_mode("warn")``;
we count "called a synchronizing" warnings, time the host while a ~100 ms GPU sleep kernel is
queued (about 100 ms = the host waited), and compare every tensor both snippets bind (values, dtype, shape).
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from syncllint.catalogue import load_catalogue  # noqa: E402


def _run(code: str) -> tuple[dict[str, object], int, float]:
    torch.manual_seed(0)
    ns: dict[str, object] = {}
    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            exec(compile(code, "<example>", "exec"), ns)
        finally:
            torch.cuda.set_sync_debug_mode("default")
    syncs = sum("called a synchronizing" in str(w.message) for w in caught)
    torch.manual_seed(0)
    timed: dict[str, object] = {}
    torch.cuda.synchronize()
    torch.cuda._sleep(int(2e8))
    start = time.perf_counter()
    exec(compile(code, "<example>", "exec"), timed)
    host_ms = (time.perf_counter() - start) * 1e3
    torch.cuda.synchronize()
    return ns, syncs, host_ms


def _compare(a: dict[str, object], b: dict[str, object]) -> str:
    names = sorted(k for k, v in a.items() if isinstance(v, torch.Tensor) and isinstance(b.get(k), torch.Tensor))
    for name in names:
        x, y = a[name], b[name]
        assert isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)
        if x.dtype != y.dtype or x.shape != y.shape or x.device != y.device:
            return f"differs: {name} {x.dtype}{tuple(x.shape)}@{x.device} vs {y.dtype}{tuple(y.shape)}@{y.device}"
        if not torch.equal(x, y):
            return f"differs: {name} values"
    return f"equal ({len(names)} tensors)"


def main() -> None:
    rows = []
    for page in load_catalogue().values():
        for flag, fixed in page.fix_pairs():
            before, syncs_before, ms_before = _run(flag.code)
            after, syncs_after, ms_after = _run(fixed.code)
            row = {
                "pair": f"{page.code}:{fixed.line}",
                "before": {"syncs": syncs_before, "host_ms": round(ms_before, 3)},
                "after": {"syncs": syncs_after, "host_ms": round(ms_after, 3)},
                "result": _compare(before, after),
            }
            rows.append(row)
            print(json.dumps(row))
    out = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(), "rows": rows}
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("fix_pairs.json")
    target.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
