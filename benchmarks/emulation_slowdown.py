"""How much slower code runs under the CPU emulation (``sync_check(emulate=True)``) than plain on the CPU.

Each workload is a typical unit test body of a PyTorch project (an MLP training step, attention,
a sampling step, an embedding + layer-norm forward, a loop of small element-wise ops). It runs
plain with ``device="cpu"`` and checked with ``device="cuda"`` under the emulation (record mode);
both in this process, alternating, several repeats; the figure is the ratio of medians. Also times
the pytest plugin on a generated suite of the same tests (``--sync-check=record --sync-emulate``
vs. no plugin), torch import excluded.

    python benchmarks/emulation_slowdown.py [--repeats 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from syncllint.runtime import sync_check  # noqa: E402


def mlp_train_step(device: str) -> None:
    torch.manual_seed(0)
    shapes = [(128, 64), (128,), (10, 128), (10,)]
    weights = [(torch.randn(shape, device=device) * 0.1).requires_grad_() for shape in shapes]
    x, y = torch.randn(32, 64, device=device), torch.randint(0, 10, (32,), device=device)
    for _ in range(5):
        h = torch.relu(x @ weights[0].T + weights[1])
        loss = torch.nn.functional.cross_entropy(h @ weights[2].T + weights[3], y)
        grads = torch.autograd.grad(loss, weights)
        with torch.no_grad():
            for w, g in zip(weights, grads):
                w -= 0.01 * g


def attention(device: str) -> None:
    q = k = v = torch.randn(4, 8, 64, 32, device=device)
    for _ in range(5):
        scores = (q @ k.transpose(-1, -2)) / 32**0.5
        out = torch.softmax(scores.masked_fill(torch.ones(64, 64, device=device).triu(1).bool(), float("-inf")), -1) @ v
        q = out


def sampling_step(device: str) -> None:
    logits = torch.randn(16, 32000, device=device)
    for _ in range(5):
        probs = torch.softmax(logits / 0.8, -1)
        top = torch.topk(probs, 50)
        keep = torch.where(top.values > 0.001, top.values, torch.zeros_like(top.values))
        choice = torch.gather(top.indices, 1, keep.argmax(-1, keepdim=True))
        logits = logits.scatter(1, choice, 0.0)


def embed_norm(device: str) -> None:
    table = torch.randn(1000, 128, device=device)
    ids = torch.randint(0, 1000, (32, 64), device=device)
    for _ in range(5):
        h = torch.nn.functional.embedding(ids, table)
        h = torch.nn.functional.layer_norm(h, (128,))
        table = table + h.mean((0, 1)) * 1e-3


def small_ops(device: str) -> None:
    x = torch.randn(256, device=device)
    for _ in range(200):
        x = (x * 1.0001 + 1e-3).relu_()


WORKLOADS: dict[str, Callable[[str], None]] = {
    "mlp_train_step": mlp_train_step,
    "attention": attention,
    "sampling_step": sampling_step,
    "embed_norm": embed_norm,
    "small_ops": small_ops,
}


def _time(fn: Callable[[str], None], emulated: bool) -> float:
    start = time.perf_counter()
    if emulated:
        with sync_check(mode="record", emulate=True) as report:
            fn("cuda")
        assert not report.syncs, report.syncs  # the workloads are sync-free by construction
    else:
        fn("cpu")
    return time.perf_counter() - start


def in_process(repeats: int) -> dict[str, dict[str, float]]:
    rows = {}
    for name, fn in WORKLOADS.items():
        _time(fn, False), _time(fn, True)  # warm-up
        plain, emulated = [], []
        for _ in range(repeats):
            plain.append(_time(fn, False))
            emulated.append(_time(fn, True))
        p, e = statistics.median(plain), statistics.median(emulated)
        rows[name] = {"plain_ms": round(p * 1e3, 2), "emulated_ms": round(e * 1e3, 2), "slowdown": round(e / p, 2)}
    return rows


SUITE = '''
import os, sys, time
import pytest
sys.path.insert(0, {bench!r})
from emulation_slowdown import WORKLOADS

DEVICE = os.environ["BENCH_DEVICE"]


def test_000_warm_up():
    # One-time costs (torch._dynamo is imported by the first TorchDispatchMode) are not per test.
    WORKLOADS["small_ops"](DEVICE)

@pytest.mark.parametrize("name", sorted(WORKLOADS) * {copies})
def test_workload(name):
    WORKLOADS[name](DEVICE)
'''


def pytest_suite(copies: int) -> dict[str, float]:
    """Wall time of the suite's test phase (pytest's own figure minus the collection)."""
    import os

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "test_suite.py"
        path.write_text(SUITE.format(bench=str(Path(__file__).parent), copies=copies))
        out = {}
        for label, device, extra in (("plain", "cpu", []), ("emulated", "cuda", ["--sync-check=record", "--sync-emulate"])):
            env = dict(os.environ, BENCH_DEVICE=device, PYTHONPATH=str(REPO))
            from syncllint.harness.fixrun import plugin_registered

            plugin = [] if plugin_registered() else ["-p", "syncllint.pytest_plugin"]
            cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugin, str(path), "--durations=0", *extra]
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise SystemExit(done.stdout[-3000:] + done.stderr[-3000:])
            total = sum(float(line.split("s", 1)[0]) for line in done.stdout.splitlines() if " call " in line and "test_workload" in line)
            out[f"{label}_call_s"] = round(total, 3)
        out["slowdown"] = round(out["emulated_call_s"] / out["plain_call_s"], 2)
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--copies", type=int, default=4, help="copies of each workload in the pytest suite")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    result: dict[str, object] = {"torch": torch.__version__, "workloads": in_process(args.repeats)}
    slowdowns = [row["slowdown"] for row in result["workloads"].values()]  # type: ignore[attr-defined]
    result["median_slowdown"] = statistics.median(slowdowns)
    result["pytest_suite"] = pytest_suite(args.copies)
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
