"""The runtime checker's overhead on a GPU loop of small kernels that never syncs.

Checked (``sync_check(mode="error")`` around the loop) and unchecked runs alternate in one process,
several repeats; the figure is the median per-step time of each. Target: <= 1% overhead.
``--pageable-probe`` also times pageable ``non_blocking`` uploads of growing size behind a
~100 ms sleep kernel (where the host starts to wait: the detector's threshold).

    python benchmarks/runtime_overhead.py [--steps 2000] [--repeats 7] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch

from syncllint.runtime import sync_check


def small_kernel_loop(x: torch.Tensor, steps: int) -> torch.Tensor:
    for _ in range(steps):
        x = torch.addcmul(x, x, x, value=1e-6).relu_() * 0.999 + 1e-3
    return x


def timed(steps: int, checked: bool, x: torch.Tensor) -> float:
    torch.cuda.synchronize()
    start = time.perf_counter()
    if checked:
        with sync_check(mode="error", emulate=False):
            small_kernel_loop(x, steps)
    else:
        small_kernel_loop(x, steps)
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / steps * 1e6


def timed_check_per_step(steps: int, x: torch.Tensor) -> float:
    """The decorator use: a check entered and left around every step (arms and restores each time)."""
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        with sync_check(mode="error", emulate=False):
            small_kernel_loop(x, 1)
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / steps * 1e6


def overhead(steps: int, repeats: int) -> dict[str, object]:
    x = torch.randn(4096, device="cuda")
    for checked in (False, True):
        timed(200, checked, x)  # warm-up
    timed_check_per_step(200, x)
    plain, checked, per_step = [], [], []
    for i in range(repeats):  # alternate the order so drifts hit both sides alike
        pair = (False, True) if i % 2 == 0 else (True, False)
        for flag in pair:
            (checked if flag else plain).append(timed(steps, flag, x))
        per_step.append(timed_check_per_step(steps // 4, x))
    plain_us, checked_us = statistics.median(plain), statistics.median(checked)
    ratios = [c / p for c, p in zip(checked, plain)]
    return {
        "steps": steps,
        "repeats": repeats,
        "kernels_per_step": 4,
        "unchecked_us_per_step": round(plain_us, 3),
        "checked_us_per_step": round(checked_us, 3),
        "overhead_percent": round((checked_us / plain_us - 1) * 100, 2),
        "median_pair_overhead_percent": round((statistics.median(ratios) - 1) * 100, 2),
        "check_entered_every_step_us_per_step": round(statistics.median(per_step), 3),
        "unchecked_runs": [round(v, 3) for v in plain],
        "checked_runs": [round(v, 3) for v in checked],
    }


def pageable_probe() -> list[dict[str, float]]:
    rows = []
    for size in (64 << 10, 256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20, 64 << 20):
        src = torch.empty(size, dtype=torch.uint8)
        src.to("cuda", non_blocking=True)
        best = float("inf")
        for _ in range(2):
            torch.cuda.synchronize()
            torch.cuda._sleep(int(2e8))
            start = time.perf_counter()
            src.to("cuda", non_blocking=True)
            best = min(best, (time.perf_counter() - start) * 1e3)
            torch.cuda.synchronize()
        rows.append({"bytes": size, "host_ms": round(best, 3)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=4000)
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--pageable-probe", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("runtime_overhead.py needs a CUDA device")
    result: dict[str, object] = {"torch": torch.__version__, "device": torch.cuda.get_device_name()}
    result["overhead"] = overhead(args.steps, args.repeats)
    if args.pageable_probe:
        result["pageable_non_blocking_h2d"] = pageable_probe()
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
