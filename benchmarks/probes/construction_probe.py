"""Probe: tensors built under a default device (how vLLM and sglang build model layers), empty copies.

Same method as conversions_probe.py (debug-mode warnings + host ms behind a ~100 ms sleep kernel).
Writes construction_truth.json to $OUT (or the current folder).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conversions_probe as probe  # noqa: E402

dev = torch.device("cuda")


def setup():
    ns = dict(torch=torch, dev=dev, ref=torch.zeros(1024, device=dev), nn=torch.nn)
    torch.cuda.synchronize()
    return ns


SNIPPETS = {
    "scalar_under_device_context": "with torch.device(dev):\n    y = torch.tensor(2.0)",
    "list_under_device_context": "with torch.device(dev):\n    y = torch.tensor([1.0, 2.0])",
    "arange_under_device_context": "with torch.device(dev):\n    y = torch.arange(16)",
    "arange_under_context_to_dev": "with torch.device(dev):\n    y = torch.arange(16).to(dev)",
    "empty_list_to_device": "y = torch.tensor([], device=dev)",
    "empty_list_under_device_context": "with torch.device(dev):\n    y = torch.tensor([])",
    "nested_empty_list_to_device": "y = torch.tensor([[]], device=dev)",
    "empty_legacy_constructor_to_device": "y = torch.Tensor().to(dev)",
    "empty_typed_constructor_to_device": "y = torch.FloatTensor().to(dev)",
    "empty_list_set_storage": "y = torch.tensor([], dtype=torch.float32, device=ref.device).set_(ref.untyped_storage())",
    "module_under_device_context": "with torch.device(dev):\n    m = nn.Linear(1024, 1024)",
    "module_under_context_to_dev": "with torch.device(dev):\n    m = nn.Linear(1024, 1024).to(dev)",
}


def main():
    probe.run_all(SNIPPETS, setup, "construction_truth.json")


if __name__ == "__main__":
    sys.exit(main())
