"""Does torch.where with a CPU operand beside CUDA ones copy (sync) or raise? Host time behind a GPU sleep."""
import json, os, time
import torch

def timed(fn):
    torch.cuda.synchronize()
    torch.cuda._sleep(200_000_000)  # ~100 ms of GPU work queued
    start = time.perf_counter()
    try:
        fn()
        outcome = "ok"
    except Exception as exc:  # noqa: BLE001
        outcome = f"{type(exc).__name__}: {str(exc)[:120]}"
    host_ms = (time.perf_counter() - start) * 1e3
    torch.cuda.synchronize()
    return {"host_ms": round(host_ms, 2), "outcome": outcome}

g = torch.randn(1024, device="cuda")
cases = {
    "where_cpu_0d": lambda: torch.where(g > 0, g, torch.tensor(0.0)),
    "where_cpu_1elem_1d": lambda: torch.where(g > 0, g, torch.Tensor([0.0])),
    "where_cpu_1d_list": lambda: torch.where(g != 0.0, g / 2, torch.tensor([1.0])),
    "where_python_scalar": lambda: torch.where(g > 0, g, 0.0),
}
for _ in range(2):
    result = {name: timed(fn) for name, fn in cases.items()}
print(json.dumps(result, indent=1))
with open(os.path.join(os.environ.get("OUT", "/tmp"), "where-probe.json"), "w") as fh:
    json.dump({"torch": torch.__version__, "device": torch.cuda.get_device_name(), "cases": result}, fh, indent=1)

# ``cpu.to(other)`` with ``other`` on CUDA: a move to other's device and dtype.
cpu_src = torch.ones(64)
to_tensor = {name: timed(fn) for name, fn in {
    "cpu_to_cuda_tensor": lambda: cpu_src.to(g),
    "cpu_to_cpu_tensor": lambda: cpu_src.to(torch.zeros(1)),
}.items()}
print(json.dumps(to_tensor, indent=1))
with open(os.path.join(os.environ.get("OUT", "/tmp"), "where-probe.json"), "w") as fh:
    json.dump({"torch": torch.__version__, "device": torch.cuda.get_device_name(), "cases": {**result, **to_tensor}}, fh, indent=1)
