"""Private helpers that only host code calls, and data-sampler folders: their unknown tensors are host data."""

from __future__ import annotations

import textwrap

import pytest

from syncllint.config import Settings
from syncllint.diagnostics import Confidence
from syncllint.engine import lint_source


def shown(source: str, filename: str = "kernels/swiglu.py") -> list[tuple[str, int]]:
    """(code, line) of the findings shown at the default threshold (medium)."""
    result = lint_source(textwrap.dedent(source), filename, Settings(min_confidence=Confidence.MEDIUM))
    return sorted((d.code, d.start.row) for d in result.diagnostics)


# OLMo-core's ``swiglu.py``: a Triton kernel for CUDA inputs, a plain-torch reference path for the rest.
REFERENCE_PATH = """\
import torch

def _prefix_torch(x: torch.Tensor, n: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    out[: n].copy_(x[: n])
    return _scale(out, n)

def _scale(out: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
    return out * n.item()

def prefix(x: torch.Tensor, n: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    if not x.is_cuda:
        return _prefix_torch(x, n, out)
    return _kernel(x, n, out)
"""


def test_a_helper_only_a_host_branch_calls_reads_host_tensors() -> None:
    # Its callee, called only from it, is host code too.
    assert shown(REFERENCE_PATH) == []


def test_the_same_helper_called_from_the_device_path_is_reported() -> None:
    both_paths = REFERENCE_PATH.replace("    return _kernel(x, n, out)", "    return _prefix_torch(x, n, out)")
    assert shown(both_paths) == [("SYNC101", 8), ("SYNC504", 4), ("SYNC504", 4)]


def test_the_rest_of_the_function_after_a_device_return_is_a_host_caller() -> None:
    after_return = REFERENCE_PATH.replace(
        "    if not x.is_cuda:\n        return _prefix_torch(x, n, out)\n    return _kernel(x, n, out)",
        "    if x.is_cuda:\n        return _kernel(x, n, out)\n    return _prefix_torch(x, n, out)",
    )
    assert shown(after_return) == []


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # A public function: other modules may call it with device tensors.
        ("_prefix_torch", "prefix_torch"),
        # Handed on as a callback: who calls it, and with what, is unknown.
        ("    return _kernel(x, n, out)", "    return _dispatch(_prefix_torch, x, n, out)"),
    ],
)
def test_helpers_whose_callers_are_not_all_seen_are_reported(old: str, new: str) -> None:
    assert ("SYNC101", 8) in shown(REFERENCE_PATH.replace(old, new))


METHOD = """\
import torch

class Quantizer:
    def _reference(self, scales: torch.Tensor, offs: torch.Tensor) -> list[int]:
        offs_cpu = offs.to(device="cpu")
        return offs_cpu.tolist() + [int(scales.max())]

    def __call__(self, scales: torch.Tensor, offs: torch.Tensor) -> list[int]:
        if scales.device.type == "cpu":
            return self._reference(scales, offs)
        return self._triton(scales, offs)

    def check(self) -> None:
        assert torch.ones(1, device="cuda").item() == 1.0
"""


def test_a_method_only_called_for_cpu_inputs_reads_host_tensors() -> None:
    # A known device tensor is still a device tensor there.
    assert shown(METHOD, "quant/mxfp8.py") == [("SYNC101", 14)]


SAMPLER = """\
import torch

class PrioritizedSampler:
    def sample(self, priorities: torch.Tensor, n: int) -> list[int]:
        if not priorities.any():
            raise ValueError("no priority")
        picked = torch.multinomial(priorities, n)
        return picked.tolist()
"""


@pytest.mark.parametrize(
    ("filename", "expected"),
    [
        ("rl/data/samplers/prioritized.py", []),
        ("graph/sampler/neighbor.py", []),
        # Token samplers pick from logits on the device.
        ("engine/sample/rejection_sampler.py", [("SYNC102", 8), ("SYNC502", 5)]),
    ],
)
def test_data_sampler_folders_are_host_code(filename: str, expected: list[tuple[str, int]]) -> None:
    assert shown(SAMPLER, filename) == expected
