"""What the project index reads as host data in an argument (``PlaceReader.shows_host``)."""

from __future__ import annotations

import ast

import pytest

from syncllint.analysis.conventions import names_no_device_data
from syncllint.project.places import PlaceReader
from tests.conftest import lint

READER = PlaceReader(lambda node: None, ("_cpu", "_np"), factories_on_host=True)


@pytest.mark.parametrize(
    ("expression", "host"),
    [
        ("ids_cpu == token_id", True),  # a comparison beside a host tensor stays on the host
        ("mask & (ids_cpu == token_id)", True),  # and so does a mask combined with it
        ("mask | ids_cpu", True),
        ("logits > 0.5", False),  # a literal is no host tensor
        ("mask & (logits > 0.5)", False),
        ("ids_cpu == x_gpu", False),  # the other side is shown on the device
        ("ids_cpu + offsets", False),  # arithmetic needs both sides on the host
    ],
)
def test_comparisons_and_mask_combinations_beside_a_host_tensor(expression: str, host: bool) -> None:
    assert READER.shows_host(ast.parse(expression, mode="eval").body) is host


@pytest.mark.parametrize(
    ("expression", "device"),
    [
        ("x_gpu", True),
        ("self.ids_gpu + 1", True),
        ("args.train.max_tokens_per_gpu", False),  # a quantity per device: a config number
        ("max_tokens_per_gpu", False),
        ("num_gpu", False),
        ("is_cuda", False),  # flags and deviations: no data on a device
        ("self.use_gpu", False),
        ("inputs_on_cuda", False),
        ("noise_std_dev", False),
        ("hidden_cuda", True),
    ],
)
def test_a_device_suffix_shows_device_data_unless_it_names_none(expression: str, device: bool) -> None:
    assert READER.shows_device(ast.parse(expression, mode="eval").body, {}) is device


def test_a_callers_assignment_outranks_the_suffix_of_the_name_it_passes() -> None:
    locals_ = {"x_gpu": ast.parse("torch.zeros(3)", mode="eval").body}
    assert not READER.shows_device(ast.parse("x_gpu", mode="eval").body, locals_)


def test_a_reduction_of_a_host_buffer_returned_by_a_helper_is_host_data() -> None:
    source = """\
import torch

def validate(model, loader, n: int):
    losses = torch.zeros(n)
    for k, batch in enumerate(loader):
        losses[k] = model(batch)
    return losses.mean()

def peak(scores: torch.Tensor):
    return scores.cuda().max()

def report(model, loader, scores):
    loss = validate(model, loader, 4).item()
    return loss, peak(scores).item()
"""
    assert [(d.code, d.start.row) for d in lint(source)] == [("SYNC101", 14)]


def test_a_helper_indexing_a_module_constant_built_on_the_host_returns_host_data() -> None:
    source = """\
import torch

_CODES = torch.tensor([16, 17, 18])
_SCALE = torch.ones(3, device="cuda")

def nearest(rgb):
    return _CODES[rgb.argmin(1)]

def scaled(rgb):
    return _SCALE[rgb.argmin(1)]

def render(image):
    flat = image.cpu()
    codes = torch.cat([nearest(c) for c in flat.split(4)]).tolist()
    return codes, scaled(image).tolist()
"""
    assert [(d.code, d.start.row) for d in lint(source)] == [("SYNC103", 13), ("SYNC102", 15)]


def test_a_module_function_called_with_masks_built_beside_host_ids_reads_host_masks() -> None:
    source = """\
import torch

def check_interleaved(is_video: torch.Tensor, is_audio: torch.Tensor) -> bool:
    va_pos = (is_video | is_audio).nonzero(as_tuple=True)[0]
    return bool(va_pos.numel())

class Model(torch.nn.Module):
    def embed(self, input_ids, mm_mask):
        ids = input_ids.cpu()
        is_video = mm_mask & (ids == 5)
        is_audio = mm_mask & (ids == 6)
        return check_interleaved(is_video, is_audio)
"""
    # Masks built beside the host copy of the ids are host masks; beside a device copy they are not.
    assert [(d.code, d.start.row) for d in lint(source)] == [("SYNC103", 9)]
    assert [(d.code, d.start.row) for d in lint(source.replace("input_ids.cpu()", "input_ids.cuda()"))] == [
        ("SYNC302", 4)
    ]


def test_helpers_and_closures_returning_host_arithmetic_give_host_results() -> None:
    source = """\
import torch

def scaled(count, shift):
    values = torch.linspace(1, 0.1, count)
    return shift * values

class Scheduler:
    def set_timesteps(self, n):
        def grid(count, shift):
            values = torch.linspace(1, 0.1, count)
            return shift * values / (1 + (shift - 1) * values)

        sigmas = grid(n, 3.0)
        return torch.unique_consecutive(sigmas), torch.unique_consecutive(scaled(n, 2.0))

def on_device(count, shift):
    return shift * torch.linspace(1, 0.1, count, device="cuda")

def top(n):
    return torch.unique_consecutive(on_device(n, 2.0))
"""
    # Factories without ``device=`` build on the host; arithmetic with numbers keeps them there.
    assert [(d.code, d.start.row) for d in lint(source)] == [("SYNC304", 20)]


def test_helpers_returning_a_comparison_of_host_tensors_give_host_masks() -> None:
    source = """\
import torch

def pad(sizes, device):
    def length_to_mask(lens):
        lens = torch.tensor(lens, dtype=torch.long)
        base = torch.arange(int(max(lens))).expand(len(lens), -1)
        return base < lens.unsqueeze(1)

    def keeps(lens, limit):
        return lens.unsqueeze(1) < limit

    return length_to_mask(sizes).to(device), keeps(sizes, 3).to(device)
"""
    # A mask compared from two host tensors is on the host, so moving it blocks (12); a comparison
    # of a parameter shows nothing.
    assert [(d.code, d.start.row) for d in lint(source)] == [("SYNC202", 12)]


def test_an_attribute_built_by_torch_tensor_of_a_parameter_is_host_data_for_its_readers() -> None:
    source = """\
import torch

def best_fit(image, possible_resolutions):
    scales = possible_resolutions[:, 0] / image.shape[-1]
    options = scales[scales >= 1]
    return tuple(possible_resolutions[scales == options.min()][0].tolist())

class Transform:
    def __init__(self, possible_resolutions: list[tuple[int, int]] | None = None, tiles: int = 4):
        if not possible_resolutions:
            possible_resolutions = find_supported_resolutions(tiles)
        self.possible_resolutions = torch.tensor(possible_resolutions).reshape(-1, 2)

    def __call__(self, image):
        return best_fit(image, possible_resolutions=self.possible_resolutions)
"""
    # ``torch.tensor`` copies whatever it is given into host memory (the data is no tensor: that is
    # what ``as_tensor`` is for), so the one caller passes host rows; ``as_tensor`` says nothing.
    assert lint(source) == []
    as_tensor = source.replace("torch.tensor(possible_resolutions)", "torch.as_tensor(possible_resolutions)")
    assert "SYNC102" in [d.code for d in lint(as_tensor)]


@pytest.mark.parametrize(
    ("name", "holds_none"),
    [
        ("num_gpu", True),  # a count
        ("is_cuda", True),  # flags
        ("use_gpu", True),
        ("kv_on_gpu", True),
        ("noise_std_dev", True),  # a standard deviation
        ("st_dev", True),
        ("first_dev", False),  # data on the first device
        ("hidden_dev", False),
        ("tokens_gpu", False),
    ],
)
def test_a_device_suffix_names_no_device_data_in_counts_flags_and_deviations(name: str, holds_none: bool) -> None:
    assert names_no_device_data(name) is holds_none
