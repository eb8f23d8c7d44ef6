"""Probe: host->device constants built inside ``torch.compile``d functions (Transformer Engine's
``torch.tensor(1, device=t.device)``, sglang's ``t.new_tensor(BOUNDS)`` under ``@torch.compile``).

Same method as conversions_probe.py (debug-mode warnings + host ms behind a ~100 ms sleep kernel);
the first, unmeasured run of each snippet compiles it. Writes compile_truth.json to $OUT (or the
current folder).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import conversions_probe as probe  # noqa: E402

dev = torch.device("cuda")


def eager_scalar(x):
    return x + torch.tensor(1.0, device=x.device)


@torch.compile
def compiled_scalar(x):
    return x + torch.tensor(1.0, device=x.device)


@torch.compile(dynamic=True)
def compiled_dynamic_scalar(x):
    return x + torch.tensor(1.0, device=x.device)


@torch.compile
def compiled_int_then_cast(x):
    one = torch.tensor(1, device=x.device).to(torch.float32)
    return x * one


@torch.compile
def compiled_new_tensor_list(x):
    bounds = x.new_tensor([0.25, 0.75, 1.25, 1.75])
    return torch.bucketize(x, bounds)


@torch.compile
def compiled_as_tensor_list(x):
    return x[:3] * torch.as_tensor([1.0, 2.0, 3.0], device=x.device)


@torch.compile(backend="aot_eager")
def aot_eager_scalar(x):
    return x + torch.tensor(1.0, device=x.device)


@torch.compile(backend="eager")
def eager_backend_scalar(x):
    return x + torch.tensor(1.0, device=x.device)


@torch.compile
def compiled_item(x):
    return x * x.sum().item()


@torch.compile
def compiled_upload_of_argument(x, values):
    return x[: len(values)] + torch.tensor(values, device=x.device)


def setup():
    ns = dict(torch=torch, dev=dev, ref=torch.rand(1024, device=dev), **{
        f.__name__: f for f in (
            eager_scalar, compiled_scalar, compiled_dynamic_scalar, compiled_int_then_cast,
            compiled_new_tensor_list, compiled_as_tensor_list, aot_eager_scalar, eager_backend_scalar,
            compiled_item, compiled_upload_of_argument,
        )
    })
    torch.cuda.synchronize()
    return ns


SNIPPETS = {
    "eager_scalar_constant": "y = eager_scalar(ref)",
    "compiled_scalar_constant": "y = compiled_scalar(ref)",
    "compiled_dynamic_scalar_constant": "y = compiled_dynamic_scalar(ref)",
    "compiled_int_constant_then_cast": "y = compiled_int_then_cast(ref)",
    "compiled_new_tensor_list_constant": "y = compiled_new_tensor_list(ref)",
    "compiled_as_tensor_list_constant": "y = compiled_as_tensor_list(ref)",
    "aot_eager_backend_scalar_constant": "y = aot_eager_scalar(ref)",
    "eager_backend_scalar_constant": "y = eager_backend_scalar(ref)",
    "compiled_item_graph_break": "y = compiled_item(ref)",
    "compiled_upload_of_list_argument": "y = compiled_upload_of_argument(ref, [1.0, 2.0, 3.0])",
}


def main():
    probe.run_all(SNIPPETS, setup, "compile_truth.json")


if __name__ == "__main__":
    sys.exit(main())
