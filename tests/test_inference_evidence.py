"""What the code shows about devices beyond factories: checks, submodules, mirrors, loads."""

from __future__ import annotations

import pytest

from syncllint.diagnostics import Applicability, Confidence
from tests.conftest import lint


def found(source: str, code: str) -> list[tuple[int, Confidence]]:
    return [(d.start.row, d.confidence) for d in lint(source) if d.code == code]


NARROWED = """\
import torch

def compute(m: torch.Tensor):
    assert m.device.type == "cpu"
    return m[m >= 0]

def guarded(raw, other: torch.Tensor):
    if not raw.pos.is_cuda and not torch.equal(raw.pos, other):
        raise RuntimeError("differ")
    if other.is_cuda:
        a = other.item()
    else:
        b = other.tolist()
    return other.item()

def cpu_only(t: torch.Tensor):
    if t.device.type != "cpu":
        raise ValueError("cpu only")
    return t.tolist()
"""


def test_device_checks_narrow_the_place() -> None:
    assert found(NARROWED, "SYNC301") == []  # asserted on the CPU
    assert found(NARROWED, "SYNC602") == []  # only evaluated when raw.pos is not on CUDA
    # Inside ``if other.is_cuda`` a device read for sure; after the if-else, as before.
    assert found(NARROWED, "SYNC101") == [(11, Confidence.HIGH), (14, Confidence.MEDIUM)]
    assert found(NARROWED, "SYNC102") == []  # the else branch and the early exit say host


SUBMODULES = """\
import torch

class Model(torch.nn.Module):
    def __init__(self):
        self.embed = VocabParallelEmbedding(10, 8)
        self.config = make_config()

    def embed_input_ids(self, input_ids):
        embeds = self.embed(input_ids)
        keep_mask = compute_mask(embeds)
        return embeds[keep_mask], self.config(3)
"""


def test_calling_a_submodule_returns_a_tensor() -> None:
    assert found(SUBMODULES, "SYNC301") == [(11, Confidence.MEDIUM)]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("m = torch.nn.Linear(4, 4).cuda()", True),
        ("m = layers.RMSNorm(8).to(device)", True),
        ("m = AutoModel.from_pretrained('x').to('cuda')", True),
        ("m = torch.nn.Linear(4, 4, device='cuda').cuda()", False),
        ("m = Foo(3).to(torch.float16)", False),
    ],
)
def test_moving_a_module_built_on_the_host(line: str, expected: bool) -> None:
    source = f"import torch\n\ndef build(device):\n    {line}\n"
    assert bool(found(source, "SYNC202")) is expected


MOVED_LATER = """\
import torch
from torch import nn

def check(device):
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU())
    model.to(device)
    model.cuda()
    placed = Net(3, device="cuda")
    placed.to(device)
    sharded = AutoModel.from_pretrained("x", device_map="auto")
    sharded.to(device)
    copy = Net(3)
    copy = copy.to(device)
    return model, placed, sharded, copy

class Embedder(nn.Module):
    def resize(self, n):
        self.embed = nn.Embedding(n, 4)
        self.embed.to(self.device)

    def move(self):
        self.embed.to(self.device)
"""


def test_a_module_built_above_in_the_function_is_on_the_host_until_moved() -> None:
    # Once moved (``model.to(device)`` moves the module itself) a second move copies nothing; a
    # module built with ``device=`` or a ``device_map`` is where it will live; another method
    # does not know where the module is by then.
    assert [row for row, _ in found(MOVED_LATER, "SYNC202")] == [6, 13, 19]


def test_a_device_that_is_the_cpu_on_one_path_is_a_guess() -> None:
    source = (
        "import torch\n\ndef load(model, dtype, low_memory, rank, weights):\n"
        "    model.to(dtype=dtype, device='cpu' if low_memory else rank)\n"
        "    return torch.ones(4).to('cuda:0' if rank == 0 else 'cuda:1')\n"
    )
    # A module of unknown place is not flagged either way; a host tensor moved to one of two GPUs
    # is, surely: both strings name one.
    assert found(source, "SYNC202") == [(5, Confidence.HIGH)]
    host = source.replace("    model.to(", "    torch.ones(4).to(")
    assert found(host, "SYNC202") == [(4, Confidence.LOW), (5, Confidence.HIGH)]


def test_modules_built_under_a_device_context_are_already_there() -> None:
    source = "import torch\n\ndef build():\n    with torch.device('cuda'):\n        m = torch.nn.Linear(4, 4).cuda()\n"
    assert found(source, "SYNC202") == []


WAITS = """\
import torch
from vllm.platforms import current_platform

def step(slots):
    current_platform.synchronize()
    copy_done = slots[0]
    copy_done.synchronize()
    job.synchronize()
"""


def test_platform_synchronize_and_events_named_for_what_they_mark() -> None:
    assert found(WAITS, "SYNC701") == [(5, Confidence.HIGH)]
    assert [row for row, _ in found(WAITS, "SYNC703")] == [7]


def test_a_name_with_a_cpu_mirror_is_the_device_half() -> None:
    source = "import torch\n\ndef f(batch):\n    n = batch.seq_lens_cpu[0]\n    return batch.seq_lens.tolist()\n"
    assert [(row, conf >= Confidence.MEDIUM) for row, conf in found(source, "SYNC102")] == [(5, True)]
    # Without the mirror, ``.tolist()`` of an unknown attribute is only a guess.
    assert found(source.replace("seq_lens_cpu", "lens_host_copy"), "SYNC102") == [(5, Confidence.LOW)]


def test_as_tensor_of_a_tensor_on_its_own_device_copies_nothing() -> None:
    assert found("import torch\n\ndef f(ix):\n    return torch.as_tensor(ix, device=ix.device)\n", "SYNC201") == []


SPARSE = """\
import torch

def delta(indices, weight: torch.Tensor, scale):
    built = torch.sparse_coo_tensor(indices, weight * scale, (4, 4))
    if not torch.isfinite(built).all():
        raise ValueError("NaN in the merged weight")

def from_lists():
    built = torch.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2.0], (2, 2))
    return built.sum().item()

def placed(indices, values):
    return torch.sparse_csr_tensor(indices, indices, values, device="cuda").sum().item()
"""


REGISTERED = """\
import torch
from torch import nn

class Observer(nn.Module):
    def __init__(self, factory_kwargs):
        super().__init__()
        self.register_buffer("min_val", torch.tensor(float("inf"), **factory_kwargs))
        self.register_buffer("mask", None)
        self.limit = 4.0

    def forward(self, x):
        if self.min_val == float("inf") or self.limit == 4.0:
            return x
        return x
"""


def test_a_registered_buffer_is_a_tensor_that_moves_with_its_module() -> None:
    assert found(REGISTERED, "SYNC502") == [(12, Confidence.MEDIUM)]


def test_a_torch_function_picked_by_name_keeps_its_inputs_place() -> None:
    source = (
        "import torch\n\ndef summary(times_ms: list[float], mode: str, x):\n"
        "    times = torch.tensor(times_ms, dtype=torch.float)\n"
        "    y = x.to('cuda')\n"
        "    return getattr(torch, mode)(times).item(), getattr(torch, mode)(y).item()\n"
    )
    assert found(source, "SYNC101") == [(6, Confidence.HIGH)]


def test_typing_cast_is_its_value() -> None:
    source = (
        "import typing\nfrom typing import cast\nimport torch\nfrom torch import Tensor\n\n"
        "def prune(layer, mask: Tensor, rows):\n"
        "    weight = cast(Tensor, layer.weight)\n"
        "    kept = typing.cast(torch.Tensor, rows)[mask]\n"
        "    listed = cast(list, rows)[mask]\n"
        "    return weight[:, ~mask], kept, listed\n"
    )
    # A cast to ``Tensor`` of something unknown is a tensor; a cast to ``list`` says nothing.
    assert found(source, "SYNC301") == [(8, Confidence.MEDIUM), (9, Confidence.LOW), (10, Confidence.MEDIUM)]


def test_a_sparse_tensor_is_where_its_values_are() -> None:
    # Not a host factory: without ``device=`` it lives with the tensors it is built from.
    assert found(SPARSE, "SYNC502") == [(5, Confidence.MEDIUM)]
    assert found(SPARSE, "SYNC101") == [(13, Confidence.HIGH)]


@pytest.mark.parametrize(
    "source",
    [
        "x = torch.Tensor([1.0, 2.0])\nx.item()",
        "x = torch.LongTensor([1, 2])\nx.tolist()",
        "state = torch.load('p', map_location='cpu')\nstate['w'].item()",
        "from safetensors.torch import load_file\nstate = load_file('p')\nstate['w'].tolist()",
        "import safetensors.torch\nstate = safetensors.torch.load_file('p')\nstate['w'].tolist()",
    ],
)
def test_host_constructors_and_loads(source: str) -> None:
    assert [d.code for d in lint("import torch\n" + source) if d.code.startswith("SYNC10")] == []


KEPT_ON_CPU = """\
import torch

class Processor:
    def _get_mm_fields_config(self, hf_inputs, hf_processor_mm_kwargs):
        fields = dict(
            pixel_values=MultiModalFieldConfig.batched("image"),
            image_sizes=MultiModalFieldConfig.batched("image", keep_on_cpu=True),
        )
        return fields | {
            "grid_thw": MultiModalFieldConfig.batched(
                "image", keep_on_cpu=True
            ),
        }

class Model(torch.nn.Module):
    def forward(self, **kwargs):
        image_sizes = kwargs.pop("image_sizes")
        a = image_sizes.tolist()
        b = kwargs["grid_thw"].tolist()
        pixel_values: torch.Tensor = kwargs.pop("pixel_values")
        return a, b, pixel_values.tolist()

    def _merge(self, image_size: torch.Tensor):
        return image_size.tolist()
"""


def test_fields_registered_keep_on_cpu_are_host_data() -> None:
    assert [row for row, conf in found(KEPT_ON_CPU, "SYNC102") if conf >= Confidence.MEDIUM] == [21]


def test_one_item_of_a_plural_field_kept_on_cpu_is_host_data() -> None:
    source = """\
    import torch

    class Processor:
        def _get_mm_fields_config(self, hf_inputs, hf_processor_mm_kwargs):
            return dict(images_spatial_crop=MultiModalFieldConfig.batched("image", keep_on_cpu=True))

    class Model(torch.nn.Module):
        def _tokens(self, image_spatial_crop: torch.Tensor, images_crop: torch.Tensor):
            crop = image_spatial_crop.tolist()
            return crop, images_crop.tolist()
    """
    # ``image_spatial_crop`` is one image's ``images_spatial_crop``; ``images_crop`` is another field.
    assert [row for row, conf in found(source, "SYNC102") if conf >= Confidence.MEDIUM] == [10]


def test_a_device_parameter_defaulting_to_none_is_a_guess() -> None:
    source = "import torch\n\ndef rope(config, device=None):\n    f = torch.arange(4)\n    return f.to(device)\n"
    assert found(source, "SYNC202") == [(5, Confidence.LOW)]
    assert found(source.replace("device=None", "device"), "SYNC202") == [(5, Confidence.MEDIUM)]


@pytest.mark.parametrize("name", ["seq_lens_cpu_upper_bound", "host_indices", "token_ids_cpu_tensor"])
def test_names_that_say_host(name: str) -> None:
    assert found(f"import torch\n\ndef f(batch):\n    return batch.{name}.tolist()\n", "SYNC102") == []


def test_optional_forward_inputs_are_tensors() -> None:
    source = """\
    import torch

    class M(torch.nn.Module):
        def forward(self, input_ids, labels=None):
            train_mask = ~(labels[:, :, 1:] == -100).all(dim=-1)
            return labels[train_mask]
    """
    assert found(source, "SYNC301") == [(6, Confidence.MEDIUM)]


def test_torch_module_attributes_and_string_methods_are_no_tensors() -> None:
    source = """\
    import torch

    def check(model: torch.nn.Module):
        major = torch.version.cuda.split(".")[0]
        model = model.cuda()
        for name, param in model.named_parameters():
            if name.endswith("norm.weight"):
                pass
        return int(major)
    """
    assert [d.code for d in lint(source) if d.code in ("SYNC501", "SYNC502")] == []


def test_device_module_synchronize_and_rng_state() -> None:
    source = """\
    import torch

    def step(gen):
        torch.get_device_module().synchronize()
        return torch.equal(gen.get_rng_state(), gen.get_state())
    """
    assert found(source, "SYNC701") == [(4, Confidence.HIGH)]
    assert found(source, "SYNC602") == []


def test_a_local_alias_of_a_submodule_is_called_like_it() -> None:
    source = """\
    import torch

    class Model(torch.nn.Module):
        def __init__(self):
            self.vision_tower = VisionTower()

        def embed(self, pixel_values):
            vt = self.vision_tower
            pooled, pooler_mask = vt(pixel_values)
            return pooled[pooler_mask]
    """
    assert found(source, "SYNC301") == [(10, Confidence.MEDIUM)]


@pytest.mark.parametrize(
    ("source", "code"),
    [
        ("def f(emb: torch.Tensor):\n    return torch.arange(4).to(torch.get_default_dtype())\n", "SYNC202"),
        ("def f(n: int):\n    return torch.tensor([1, 2], device='meta')\n", "SYNC201"),
        ("def f(w: np.ndarray, device: str = 'cpu'):\n    return torch.from_numpy(w).to(device)\n", "SYNC202"),
        ("def f(m):\n    if isinstance(m, np.generic):\n        return m.item()\n", "SYNC101"),
        ("def f(x):\n    if isinstance(x, (list, tuple)):\n        return x[0] if x else None\n", "SYNC502"),
        # a path or a string, never a tensor (pytorch-ignite's ``_encode_str``)
        ("from pathlib import Path\ndef f(t: torch.Tensor):\n    if isinstance(t, (str, Path)):\n        return str(t)\n", "SYNC503"),
    ],
)
def test_dtypes_meta_cpu_defaults_and_isinstance_say_no_copy(source: str, code: str) -> None:
    assert found("import numpy as np\nimport torch\n\n" + source, code) == []


def test_private_helpers_take_the_place_their_callers_show() -> None:
    source = """\
    import torch

    def _pack(offsets, n):
        return offsets.cpu().tolist()

    def _other(offsets):
        return offsets.cpu()

    def run(case, x: torch.Tensor):
        a = _pack(case["offsets"].cpu(), 3)
        b = _pack(torch.arange(4), n=2)
        return a, b, _other(x), _other(case["y"].cpu())
    """
    assert [row for row, _ in found(source, "SYNC103")] == [7, 10, 12]


def test_grid_metadata_is_host_data_in_vllm_and_sglang_modules_only() -> None:
    body = "import torch\n\ndef embed(grid_thw: torch.Tensor):\n    return grid_thw.tolist()\n"
    in_vllm = "from vllm.config import VllmConfig\n" + body
    assert [conf for _, conf in found(in_vllm, "SYNC102")] == []
    assert [conf for _, conf in found(body, "SYNC102")] == [Confidence.MEDIUM]


def test_mmengine_batches_as_the_loader_gave_them_are_host_data() -> None:
    # ``BaseMetric.process(data_batch, data_samples)``: the raw batch, beside the model's outputs.
    body = (
        "import torch\n\nclass Reward(BaseMetric):\n    def process(self, data_batch, data_samples):\n"
        "        labels = data_batch['data']['labels']\n        return torch.where(labels == 0), data_samples[0].item()\n"
    )
    in_mmengine = "from mmengine.evaluator import BaseMetric\n" + body
    assert [row for row, _ in found(in_mmengine, "SYNC302")] == []
    assert [row for row, _ in found(in_mmengine, "SYNC101")] == [7]
    assert [row for row, _ in found(body, "SYNC302")] == [6]


def test_an_opaque_rebinding_keeps_a_tensor_a_tensor() -> None:
    source = """\
    import torch

    def f(labels: torch.Tensor, merged: dict, cache: dict):
        labels = merged["labels"]
        idx = torch.arange(8)
        idx, other = cache[8]
        return labels.sum().item(), idx[idx > 2].tolist()
    """
    assert [(d.code, d.confidence) for d in lint(source) if d.code in ("SYNC101", "SYNC102", "SYNC301")] == [
        ("SYNC101", Confidence.MEDIUM)
    ]


def test_a_helper_returning_host_factories_returns_host_data() -> None:
    source = """\
    import torch

    def _tensors():
        video = torch.randn(1, 24, 2)
        context = torch.tensor([1.0, 2.0])
        return video, context

    def _moved(t: torch.Tensor):
        return torch.as_tensor(t)

    def test_x(out: torch.Tensor):
        video, context = _tensors()
        assert torch.equal(out, context[0])
        assert torch.equal(out, _moved(video))
    """
    assert [row for row, _ in found(source, "SYNC602")] == [14]


CONTAINERS = """\
import torch

def gather(world_size, xs, dev_t):
    gather_list = [torch.tensor([0], device="cpu") for _ in range(world_size)]
    ids = [t.item() for t in gather_list]
    host = [x.cpu() for x in xs]
    first = host[0].item()
    on_device = [dev_t.cuda() for _ in range(3)]
    values = [t.item() for t in on_device]
    return ids, first, values
"""


def test_containers_of_host_tensors_hold_host_tensors_and_loop_targets_start_afresh() -> None:
    # The second comprehension's ``t`` is a device tensor's element, not the first one's host ``t``.
    assert found(CONTAINERS, "SYNC101") == [(9, Confidence.MEDIUM)]


INDEX_WRITES = """\
import torch

def mark(attention_mask: torch.Tensor, output_lengths):
    attention_mask = torch.zeros((3, 4), device=attention_mask.device)
    attention_mask[(torch.arange(attention_mask.shape[0], device=attention_mask.device), output_lengths - 1)] = 1
    attention_mask[:, torch.arange(2, device="cuda")] = 0.0
    attention_mask[:, 0] = 5
    attention_mask[torch.arange(3, device="cuda"), 1] = attention_mask[0, 0]
    part = slice(0, 1)
    return attention_mask[:, part]
"""


def test_integer_index_tensors_among_several_indices_and_slice_objects() -> None:
    # ``arange`` of a shape is an integer tensor; a tensor value (line 8) takes no scalar copy.
    assert [row for row, _ in found(INDEX_WRITES, "SYNC403")] == [5, 6]
    assert found(INDEX_WRITES, "SYNC301") == []


MIXED_OPERANDS = """\
import torch

def replan(kv_lens: torch.Tensor, num_tokens: int, scale_cpu: torch.Tensor):
    lens_cpu = torch.full((64,), 0, dtype=torch.int32)
    planned = lens_cpu[:num_tokens]
    if not bool((planned >= kv_lens).all()):
        return None
    return bool((kv_lens > torch.zeros(64, device="cuda")).all())
"""


def test_a_tensor_beside_a_host_tensor_of_one_or_more_dimensions_is_on_the_host() -> None:
    # Two devices meet in one op only through a 0-d host scalar: ``kv_lens`` is a host tensor here.
    assert found(MIXED_OPERANDS, "SYNC501") == [(8, Confidence.HIGH)]


def test_other_accelerators_flags_narrow_like_is_cuda() -> None:
    source = """\
    import torch

    def load(weight: torch.Tensor, rank: int):
        if not weight.is_npu:
            weight = weight.to(f"npu:{rank}")
        return weight
    """
    # Only a host tensor takes the branch: the move is a blocking copy of pageable memory.
    assert [row for row, _ in found(source, "SYNC202")] == [5]


def test_a_device_variable_tested_for_the_cpu_names_the_cpu_in_that_branch() -> None:
    source = """\
    import torch

    def build(values, device: torch.device):
        if device.type == "cpu":
            return torch.tensor(values, device=device)
        return torch.tensor(values, device=device)
    """
    assert found(source, "SYNC201") == [(6, Confidence.HIGH)]


def test_what_follows_a_device_path_that_returned_is_the_cpu_path() -> None:
    source = """\
    import torch

    def topk(logits: torch.Tensor, starts: torch.Tensor):
        if logits.is_cuda:
            return logits.topk(4)
        return [int(starts[row]) for row in range(logits.shape[0])]

    def other(starts: torch.Tensor):
        return int(starts[0])
    """
    assert found(source, "SYNC501") == [(6, Confidence.LOW), (9, Confidence.MEDIUM)]


def test_a_parameter_its_comment_calls_a_cpu_tensor_is_a_host_tensor() -> None:
    source = """\
    import torch

    def shrink(
        num_active_loras: torch.Tensor,  # CPU tensor [1], number of active LoRAs
        lens: torch.Tensor,  # lengths on the GPU
    ):
        return num_active_loras.item(), lens.max().item()
    """
    assert found(source, "SYNC101") == [(7, Confidence.MEDIUM)]


def test_a_device_taken_from_a_tensor_follows_a_later_assert_on_that_tensor() -> None:
    source = """\
    import torch

    def replica_counts(mapping: torch.Tensor, n: int):
        device = mapping.device
        assert mapping.device.type == "cpu"
        counts = torch.zeros(n, device=device)
        return int(counts.max().item())

    def unchecked(mapping: torch.Tensor, n: int):
        device = mapping.device
        counts = torch.zeros(n, device=device)
        return int(counts.max().item())

    def rebound(mapping: torch.Tensor, n: int):
        device = mapping.device
        device = pick_device()
        assert mapping.device.type == "cpu"
        counts = torch.zeros(n, device=device)
        return int(counts.max().item())
    """
    # Asserted on the CPU: ``device`` names the CPU too. Unchecked or rebound: still reported.
    assert [row for row, _ in found(source, "SYNC101")] == [12, 19]


def test_an_assert_in_one_arm_of_an_if_holds_in_that_arm_only() -> None:
    source = """\
    import torch

    def neighbours(positions: torch.Tensor, method: str):
        if method == "cuml":
            assert positions.device.type == "cuda"
            first = positions[0].item()
        elif method == "scipy":
            data = positions.cpu().numpy()
        else:
            assert positions.device.type == "cuda"
        return positions.sum().item()

    def checked(positions: torch.Tensor):
        assert positions.device.type == "cuda"
        return positions.sum().item()
    """
    # Asserted on the GPU in the first arm (6: high); the scipy arm (8) and the code after the
    # statement (11) do not know the device; at the function's top level the assert holds on (15).
    assert found(source, "SYNC101") == [(6, Confidence.HIGH), (11, Confidence.MEDIUM), (15, Confidence.HIGH)]
    assert found(source, "SYNC103") == [(8, Confidence.MEDIUM)]


def test_a_kept_field_named_after_a_model_input_leaves_the_input_on_the_device() -> None:
    source = """\
    import torch

    class Processor:
        def _get_mm_fields_config(self, hf_inputs, hf_processor_mm_kwargs):
            fields = {}
            fields["video_input_ids"] = MultiModalFieldConfig.batched("video", keep_on_cpu=True)
            fields["video_grid_thw"] = MultiModalFieldConfig.batched("video", keep_on_cpu=True)
            return fields

    class Model(torch.nn.Module):
        def embed(self, input_ids: torch.Tensor, grid_thw: torch.Tensor, video_input_ids: torch.Tensor):
            ids = input_ids.tolist()
            grid = grid_thw.tolist()
            return ids, grid, video_input_ids.tolist()
    """
    # ``grid_thw`` is a part of a kept field's name; ``input_ids`` is every model's device input.
    assert [row for row, conf in found(source, "SYNC102") if conf >= Confidence.MEDIUM] == [12]


def test_a_device_check_in_one_arm_ends_with_the_arm() -> None:
    source = """\
    import torch

    def rotary(module, x, positions):
        kind = 1 if x.device.type != "cuda" else 2
        return module.inv_freq.to(x.device) @ positions

    def branch(module, x):
        if not x.is_cuda:
            pass
        return module.inv_freq.to(x.device)
    """
    # Before the check ``x`` was of unknown place; after it, it still is: the host fact of one arm
    # (``x.device.type != "cuda"``) must not become ``x``'s place for the rest of the function.
    assert found(source, "SYNC103") == []


def test_not_being_on_mps_says_nothing_of_cuda() -> None:
    source = """\
    import torch

    def rotary(module, x: torch.Tensor, positions):
        if x.device.type != "mps":
            freqs = module.inv_freq.to(x.device)
        if not x.is_mps:
            freqs = module.inv_freq.to(x.device)
        if x.device.type != "cuda":
            freqs = module.inv_freq.to(x.device)
        return freqs
    """
    # Off MPS a tensor is as likely on CUDA as on the host; off CUDA it is on the host.
    assert [row for row, _ in found(source, "SYNC103")] == [9]


def test_after_an_if_that_splits_cuda_from_host_a_name_both_arms_bind_is_of_either_place() -> None:
    source = """\
    import torch

    def boundaries(lengths, out: torch.Tensor):
        if lengths.device.type == "cuda":
            starts = lengths.clamp_min(0)
        else:
            starts = torch.as_tensor(lengths.tolist())
        return starts.to(out.device)

    def last_arm(lengths, out: torch.Tensor, flag: bool):
        if flag:
            starts = lengths.clamp_min(0)
        else:
            starts = torch.as_tensor(lengths.tolist())
        return starts.to(out.device)
    """
    # The move runs on both paths: no copy on the CUDA one. A test that is no device check keeps
    # flow order (the last arm's host tensor).
    assert [row for row, _ in found(source, "SYNC202")] == [15]


def test_a_name_only_an_except_handler_binds_keeps_the_usual_path_in_view() -> None:
    source = """\
    import torch

    def quantize(H, W: torch.Tensor, n: int):
        W = W.cuda()
        try:
            inverse = torch.linalg.cholesky(H)
        except torch.OutOfMemoryError:
            W = W.to("cpu")
        losses = torch.zeros_like(W)
        return torch.sum(losses).item() / n

    def strict(H, W: torch.Tensor):
        W = W.cuda()
        try:
            inverse = torch.linalg.cholesky(H)
        except ValueError:
            W = W.to("cpu")
            raise
        return W.sum().item()
    """
    # After an out-of-memory fallback ``W`` is on the GPU or the host; after a handler that
    # re-raises, only the body's path goes on.
    assert found(source, "SYNC101") == [(10, Confidence.MEDIUM), (19, Confidence.HIGH)]


def test_a_classs_own_cuda_method_moves_no_tensor() -> None:
    source = """\
    import torch

    class Layer:
        def cuda(self, device):
            self.W_q, self.meta = Quantizer.cuda(self.W_q, self.meta, device)
            if self.meta["quant_zero"]:
                self.zero = self.meta["zero"]
            w = self.W_q.cuda(device)
            return w.sum().item()
    """
    # ``Quantizer.cuda(...)`` is a static method of a class, not ``Tensor.cuda``: what it returns
    # is unknown (a dict among them), so ``if self.meta[...]`` is no read of a device tensor.
    assert found(source, "SYNC502") == []
    assert found(source, "SYNC101") == [(9, Confidence.HIGH)]


def test_a_name_for_the_host_device_is_the_cpu() -> None:
    source = """\
    import torch
    from fairseq2.device import CPU

    def drop_iter(layers, p: float):
        prob_dist = torch.rand(len(layers), device=CPU)
        for idx, layer in enumerate(layers):
            if float(prob_dist[idx]) <= p:
                continue

    def offload(x: torch.Tensor, cpu_device):
        return x.cuda().to(cpu_device)
    """
    # ``CPU: Final = Device("cpu")`` in the project; a variable named for the host device.
    assert found(source, "SYNC501") == []
    assert found(source, "SYNC103") == [(11, Confidence.HIGH)]


def test_an_annotated_device_that_defaults_to_none_is_still_a_device_callers_pass() -> None:
    source = """\
    import numpy as np
    import torch

    class Scheduler:
        def set_timesteps(self, n: int, device: str | torch.device = None):
            sigmas = np.linspace(1.0, 0.0, n)
            self.sigmas = torch.from_numpy(sigmas).to(device=device)
    """
    # Pipelines call ``scheduler.set_timesteps(n, device=device)`` through an object the index
    # cannot follow; measured on all labels, reading this default as "no move" lost fifteen true
    # uploads of diffusers' and sglang's schedulers and fixed three false positives.
    assert found(source, "SYNC202") == [(7, Confidence.MEDIUM)]


def test_numpy_and_math_constants_are_python_floats() -> None:
    source = (
        "import math\n"
        "import numpy as np\n"
        "import torch\n"
        "def suppress(logits: torch.Tensor):\n"
        "    mask = torch.ones(logits.shape[-1], dtype=torch.bool)\n"
        "    logits[:, mask] = -np.inf\n"  # a CPU mask and a Python scalar: a blocking copy (measured)
        "    logits[mask] = math.pi\n"
        "    logits[:, mask] = logits.new_tensor(0.0)\n"  # a tensor value: no copy through the mask
        "    return logits\n"
    )
    assert found(source, "SYNC203") == [(6, Confidence.MEDIUM), (7, Confidence.MEDIUM)]


def test_constants_built_inside_torch_compile_are_graph_constants() -> None:
    source = (
        "import torch\n"
        "@torch.compile\n"
        "def compiled(x):\n"
        "    a = x + torch.tensor(1.0, device=x.device)\n"
        "    b = x.new_tensor([0.25, 0.75])\n"
        "    lookup = lambda t: torch.as_tensor([1, 2], device=t.device)\n"
        "    return a, b, lookup, x.sum().item()\n"  # a graph break: still a sync
        "@torch.compile(dynamic=True, backend='eager')\n"
        "def eager_backend(x):\n"
        "    return x + torch.tensor(1.0, device=x.device)\n"
        "@torch.compiler.disable\n"
        "def left_out(x):\n"
        "    return x + torch.tensor(1.0, device=x.device)\n"
    )
    assert [(d.code, d.start.row) for d in lint(source)] == [("SYNC101", 7), ("SYNC201", 10), ("SYNC201", 13)]


def test_an_entry_of_a_dict_of_host_tensors_is_no_copy_into_a_tensor() -> None:
    source = (
        "import torch\n"
        "def keep(state: torch.Tensor):\n"
        "    ranges = {torch.float16: torch.full([1], 3.0), torch.uint8: torch.full([1], 448.0)}\n"
        "    host = torch.zeros(4)\n"
        "    moved = ranges[torch.uint8].to('cuda')\n"
        "    ranges[state.dtype] = moved\n"
        "    ranges[torch.float16] = moved\n"
        "    ranges['fp8'] = moved\n"
        "    host[0] = moved\n"  # a tensor index: a device->host copy
        "    return ranges, host\n"
    )
    assert found(source, "SYNC105") == [(9, Confidence.HIGH)]


def test_audio_and_image_readers_decode_into_host_memory() -> None:
    source = (
        "import torch\n"
        "import torchaudio\n"
        "import torchvision.transforms.functional as TF\n"
        "from torchvision.io import decode_image\n"
        "def load(path, image, data):\n"
        "    wav, sr = torchaudio.load(path)\n"
        "    rms = wav.pow(2).mean().sqrt().item()\n"  # a host tensor: no sync
        "    pixels = TF.to_tensor(image)\n"
        "    if pixels.max() > 1.0:\n"  # the same
        "        pixels = pixels / 255\n"
        "    on_gpu = decode_image(data, device='cuda')\n"  # a GPU decode
        "    return rms, pixels.cuda(), int(on_gpu.sum())\n"
    )
    assert [(d.code, d.start.row) for d in lint(source)] == [("SYNC202", 12), ("SYNC501", 12)]


def test_a_name_called_with_a_method_no_tensor_has_holds_an_object() -> None:
    source = (
        "import torch\n"
        "class Processor(torch.nn.Module):\n"
        "    def __init__(self, out_normalizer=None):\n"
        "        super().__init__()\n"
        "        self.out_normalizer = out_normalizer\n"
        "    def to(self, device):\n"
        "        self.out_normalizer = self.out_normalizer.to(device)\n"
        "        return self\n"
        "    def postprocess(self, output):\n"
        "        if self.out_normalizer and not self.training:\n"  # a module, not a tensor
        "            output = self.out_normalizer.inverse_transform(output)\n"
        "        return output\n"
        "def step(model, x, td, either):\n"
        "    td.astype(float)\n"  # numpy
        "    sizes = td.tolist()\n"
        "    if isinstance(either, torch.Tensor):\n"
        "        either.cpu()\n"
        "    else:\n"
        "        either.fit(x)\n"
        "    y = model(x.to('cuda'))\n"
        "    y.register_hook(print)\n"  # a tensor method: still a tensor
        "    total = y.sum().item()\n"
        "    return sizes, total, either.item()\n"  # tested with isinstance: either kind
    )
    assert [(d.code, d.start.row) for d in lint(source) if d.confidence is not Confidence.LOW] == [
        ("SYNC103", 17),
        ("SYNC101", 22),
        ("SYNC101", 23),
    ]


def test_a_device_string_names_a_place_unless_another_path_names_another() -> None:
    source = (
        "import torch\n"
        "if torch.backends.cuda.is_built():\n"
        "    device = 'cuda'\n"
        "else:\n"
        "    device = 'cpu'\n"
        "def on_cpu():\n"
        "    device = 'cpu'\n"
        "    return torch.randn(3).to(device)\n"  # a test pinned to the CPU: no copy
        "def on_gpu():\n"
        "    device = 'cuda'\n"
        "    return torch.randn(3).to(device)\n"
        "def either():\n"
        "    return torch.randn(3).to(device)\n"  # the module's choice: the GPU on one path
        "def fallback():\n"
        "    device = 'cpu'\n"
        "    if torch.cuda.is_available():\n"
        "        device = 'cuda'\n"
        "    return torch.randn(3).to(device)\n"
    )
    found_rows = [(d.start.row, d.confidence, d.fix and d.fix.applicability) for d in lint(source) if d.code == "SYNC202"]
    # Pinning raises where no accelerator is present: the fix is safe only where the GPU is certain.
    assert found_rows == [
        (11, Confidence.HIGH, Applicability.SAFE),
        (13, Confidence.MEDIUM, Applicability.UNSAFE),
        (18, Confidence.MEDIUM, Applicability.UNSAFE),
    ]


def test_a_name_also_called_with_a_method_only_tensors_have_keeps_its_kind() -> None:
    # Lightning's ``_ResultMetric.value``: a tensor, or a torchmetrics metric, by a flag.
    source = (
        "import torch\n"
        "class Result(torch.nn.Module):\n"
        "    def __init__(self, value: torch.Tensor, is_tensor: bool):\n"
        "        super().__init__()\n"
        "        self.is_tensor = is_tensor\n"
        "        self.value = value\n"
        "    def compute(self):\n"
        "        if self.is_tensor:\n"
        "            return self.value.sqrt()\n"
        "        return self.value.compute()\n"
        "    def __repr__(self):\n"
        "        return f'value={self.value}'\n"
    )
    assert [(d.code, d.start.row) for d in lint(source)] == [("SYNC503", 12)]


def test_rebinding_a_device_to_the_same_place_keeps_it() -> None:
    # DeepSpeed's ``clone_tensors_for_torch_save``: a string device made a ``torch.device``.
    source = (
        "import torch\n"
        "def clone(item: torch.Tensor, device=torch.device('cpu')):\n"
        "    if type(device) is str:\n"
        "        device = torch.device(device)\n"
        "    return item.detach().to(device)\n"
    )
    assert found(source, "SYNC103") == [(5, Confidence.MEDIUM)]


def test_a_field_only_grown_by_host_reads_holds_host_tensors() -> None:
    # Lightly's kNN benchmark: validation outputs collected on the host, reduced at the epoch's end.
    source = (
        "import torch\n"
        "class Benchmark(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self._predicted = []\n"
        "        self._seen = []\n"
        "    def validation_step(self, predicted, targets):\n"
        "        self._predicted.append(predicted.cpu())\n"
        "        self._seen.append(targets)\n"  # a device tensor may be in this one
        "    def on_validation_epoch_end(self):\n"
        "        acc = torch.cat(self._predicted).float().mean()\n"
        "        if acc > 0.5:\n"
        "            self._predicted = []\n"
        "        return torch.cat(self._seen).sum().item()\n"
    )
    # The copy into the list is the sync; the test of what it built is not another.
    assert [(d.code, d.start.row) for d in lint(source)] == [("SYNC103", 8), ("SYNC101", 14)]


def test_a_field_grown_by_tuples_of_host_reads_holds_host_tensors() -> None:
    # super-gradients' pose metric: each update stores its matches on the host beside a count.
    source = (
        "import torch\n"
        "class PoseMetric:\n"
        "    def __init__(self):\n"
        "        self.predictions = []\n"
        "    def update(self, preds, target):\n"
        "        matched = preds.argmax(-1) == target\n"
        "        self.predictions.append((matched.cpu(), int(target.numel())))\n"
        "    def compute(self):\n"
        "        matched = torch.cat([x[0].cpu() for x in self.predictions], dim=0)\n"
        "        return matched.sum().item()\n"
    )
    assert [(d.code, d.start.row) for d in lint(source)] == [("SYNC103", 7)]


LOADER_LOOPS = """\
import torch
from torch.utils.data import DataLoader
from tqdm import tqdm

def train(model, train_loader, device):
    for batch in train_loader:
        x = batch["x"].to(device)
        z = batch.labels.to(device)
        w = batch["w"].to(device, non_blocking=True)
        print(model(x).item(), batch["n"].item())

def evaluate(model, dataset, val_dataloader):
    for i, (x, y) in enumerate(tqdm(val_dataloader)):
        x, y = x.cuda(), y.to("cuda")
    for x in DataLoader(dataset, batch_size=4):
        x = x.to("cuda")

def not_batches(weight_loader, loaders, device):
    for w in weight_loader:
        w = w.to(device)
    for loader in loaders:
        loader = loader.to(device)

def views(data_loader, device):
    for ids, mask in data_loader:
        ids = ids.squeeze(1).to(device)
        ids = ids.long().to(device)
"""


def test_batches_of_a_data_loader_are_uploaded_by_the_loops_own_moves() -> None:
    moves = [(d.start.row, d.confidence, d.fix) for d in lint(LOADER_LOOPS) if d.code == "SYNC202"]
    # medium at most and no fix: a loader prepared by Accelerate yields device batches
    # a view or cast of a batch is still the batch; once moved, it is not moved again
    assert moves == [(r, Confidence.MEDIUM, None) for r in (7, 8, 14, 14, 16, 26)]
    # reads of a batch stay as unsure as before: device-held or not, nothing here shows
    assert [row for row, _ in found(LOADER_LOOPS, "SYNC101")] == [10, 10]


def test_a_parameter_with_a_number_default_is_a_number_whatever_its_suffix() -> None:
    source = """\
import torch

class Attention(torch.nn.Module):
    def __init__(self, heads: int, parallel_gpu=1):
        super().__init__()
        self.heads = heads
        self.parallel_gpu = parallel_gpu

    def forward(self, mask, x_gpu=None):
        mask = mask.expand(-1, self.heads // self.parallel_gpu, -1, -1)
        return x_gpu.item()
"""
    # ``parallel_gpu=1`` is a count; ``x_gpu=None`` is an optional device tensor, as its name says.
    assert found(source, "SYNC309") == []
    assert [row for row, _ in found(source, "SYNC101")] == [11]
