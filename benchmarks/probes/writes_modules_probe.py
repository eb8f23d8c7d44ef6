"""Probe: scalar writes through mixed int/slice indices, moves of host-built modules, self-device copies.

Same method as conversions_probe.py (debug-mode warnings + host ms behind a ~100 ms sleep kernel),
which it reuses. Writes writes_modules_truth.json to $OUT (or the current folder).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conversions_probe as probe  # noqa: E402

dev = torch.device("cuda")


def setup():
    g = torch.Generator(device="cpu").manual_seed(0)
    ns = dict(
        torch=torch,
        dev=dev,
        x1=torch.randn(1024, generator=g).to(dev),
        x2=torch.randn(64, 64, generator=g).to(dev),
        x3=torch.randn(8, 16, 32, generator=g).to(dev),
        i=3,
        idx=torch.randint(0, 64, (8,), generator=g).to(dev),
    )
    torch.cuda.synchronize()
    return ns


SNIPPETS = {
    "write_1d_int": "x1[3] = 0.0",
    "write_2d_row_int": "x2[3] = 0.0",
    "write_2d_row_int_var": "x2[i] = 5",
    "write_2d_int_int": "x2[0, 1] = 5",
    "write_2d_slice_int": "x2[:, 0] = 5",
    "write_2d_int_slice": "x2[0, :] = 5",
    "write_3d_slice_slice_neg": "x3[:, :, -1] = 1.0",
    "write_3d_int_only": "x3[1] = 1.0",
    "write_1d_neg": "x1[-1] = 2",
    "write_ellipsis_int": "x3[..., 0] = 1.0",
    "write_2d_idx_tensor_rows": "x2[idx] = 0.0",
    "write_2d_slice_idx": "x2[:, idx] = 0.0",
    "module_cuda": "m = torch.nn.Linear(1024, 1024).cuda()",
    "module_to_dev": "m = torch.nn.Linear(1024, 1024).to(dev)",
    "module_to_dev_small": "m = torch.nn.LayerNorm(64).to(dev)",
    "as_tensor_self_device": "y = torch.as_tensor(x1, device=x1.device)",
    "tensor_ctor_legacy_cuda": "y = torch.Tensor([1.0, 2.0]).cuda()",
}


def main():
    probe.run_all(SNIPPETS, setup, "writes_modules_truth.json")


if __name__ == "__main__":
    sys.exit(main())
