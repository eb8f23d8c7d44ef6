"""The setup of ``shared/ground-truth/gpu_sync_probe.py``, statement for statement.

Two tests read it: the ground-truth coverage test lints each idiom after this text (so inference
sees the devices and dtypes the GPU saw), and the emulation agreement test runs it.
"""

GPU_PROBE_SETUP = """\
import torch
import torch.nn.functional as F

dev = torch.device("cuda")
g = torch.Generator(device="cpu").manual_seed(0)
x = torch.randn(1024, generator=g).to(dev)
mask = (torch.randn(1024, generator=g) > 0).to(dev)
idx = torch.randint(0, 1024, (64,), generator=g).to(dev)
s = torch.tensor(7).to(dev)
n = torch.tensor(16, dtype=torch.long).to(dev)
cpu = torch.randn(1024, generator=g)
lst = list(range(64))
pinned = torch.arange(64).pin_memory()
m = torch.randn(8, 8, generator=g).to(dev)
spd = (m @ m.T + 8 * torch.eye(8, device=dev))
cls = torch.randint(0, 10, (64,), generator=g).to(dev)
rep = torch.tensor([1, 2, 0, 1]).to(dev)
"""
