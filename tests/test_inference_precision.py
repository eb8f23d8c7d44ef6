"""Device-inference refinements that keep look-alikes out of every rule."""

from __future__ import annotations

import pytest

from syncllint.diagnostics import Confidence
from tests.conftest import codes, lint

HEADER = "import numpy as np\nimport torch\nimport triton\nimport triton.language as tl\n"


def _codes(body: str) -> list[str]:
    return codes(HEADER + body)


def _found(body: str) -> list[tuple[str, int]]:
    """(code, row) of every finding, rows counted from the top of ``HEADER``."""
    return [(d.code, d.start.row) for d in lint(HEADER + body)]


def _found_with_confidence(body: str) -> list[tuple[str, int, Confidence]]:
    return [(d.code, d.start.row, d.confidence) for d in lint(HEADER + body)]


def test_triton_kernels_are_device_code() -> None:
    body = (
        "@triton.jit\n"
        "def kernel(x_ptr, n, BLOCK: tl.constexpr):\n"
        "    v = tl.load(x_ptr).to(tl.int64)\n"
        "    if v <= 0:\n"
        "        return\n"
        "    w = tl.load(x_ptr + 1).to(tl.float32)\n"
        "    if w > 0 and v > 1:\n"
        "        tl.store(x_ptr, w)\n"
    )
    assert _codes(body) == []


def test_reexported_triton_decorators_count_too() -> None:
    body = (
        "from vllm.triton_utils import tl as vtl, triton as vtriton\n"
        "@vtriton.autotune(configs=[], key=['n'])\n"
        "@vtriton.jit\n"
        "def kernel(x_ptr, n):\n"
        "    v = vtl.load(x_ptr).to(vtl.int64)\n"
        "    if v <= 0:\n"
        "        return\n"
    )
    assert _codes(body) == []


def test_a_function_a_kernel_is_built_from_by_a_call_is_device_code() -> None:
    body = (
        "import helion\nimport helion.language as hl\n"
        "def _body(x: torch.Tensor, flags: torch.Tensor):\n"
        "    for tile in hl.tile(x.size(0)):\n"
        "        if flags[tile].any():\n"
        "            x[tile] = 0\n"
        "    return x\n"
        "_kernel = helion.kernel(_body, config=None)\n"
        "def host(flags: torch.Tensor):\n"
        "    if flags.any():\n"
        "        pass\n"
    )
    # ``_body`` runs as the kernel; ``host`` is ordinary host code.
    assert [d.start.row for d in lint(HEADER + body)] == [14]


def test_host_code_next_to_a_kernel_is_still_checked() -> None:
    body = (
        "@triton.jit\n"
        "def kernel(x_ptr):\n"
        "    pass\n"
        "def launch(x: torch.Tensor) -> None:\n"
        "    if x.to(torch.int64).any():\n"
        "        kernel[(1,)](x)\n"
    )
    assert _codes(body) == ["SYNC502"]


def test_host_suffix_refines_a_tensor_annotation() -> None:
    body = "def fits(qo_indptr_cpu: torch.Tensor) -> int:\n    return int(qo_indptr_cpu.max()) + qo_indptr_cpu[0].item()\n"
    assert _codes(body) == []


def test_suffix_only_device_names_are_not_conditions() -> None:
    body = (
        "def f(is_ngram_gpu, total_flops_per_gpu, x_gpu):\n"
        "    if is_ngram_gpu and total_flops_per_gpu > 0:\n"
        "        pass\n"
        "    return x_gpu.item()\n"
    )
    assert _codes(body) == ["SYNC101"]


def test_union_of_tensor_and_int_is_unknown() -> None:
    body = "def fill(num_sampled: torch.Tensor | int, x: torch.Tensor | None) -> None:\n    k = max(num_sampled, 1)\n    m = max(x)\n"
    assert _codes(body) == ["SYNC505"]


def test_is_queries_and_torch_settings_are_host_values() -> None:
    body = (
        "def send(tensor: torch.Tensor) -> None:\n"
        "    if not tensor.is_shared() and tensor.is_floating_point():\n"
        "        tensor = tensor.share_memory_()\n"
        "    n = min(torch.get_num_threads(), 4)\n"
        "    if torch.is_grad_enabled() or torch.are_deterministic_algorithms_enabled():\n"
        "        pass\n"
    )
    assert _codes(body) == []


def test_builtin_over_host_values_stays_on_the_host() -> None:
    body = (
        "def f(num_computed_tokens_cpu, start: int):\n"
        "    done = num_computed_tokens_cpu[0]\n"
        "    prompt_part = max(0, start - done)\n"
        "    rest = max(0, start - prompt_part)\n"
        "    return rest\n"
    )
    assert _codes(body) == []


def test_closures_see_the_enclosing_function_not_class_fields() -> None:
    body = (
        "class Output:\n"
        "    counts: torch.Tensor\n"
        "    def tolists(self):\n"
        "        counts = self.counts.cpu().numpy()\n"
        "        def support(row: int):\n"
        "            if counts[row] <= 4:\n"
        "                return counts[:row]\n"
        "        return support\n"
    )
    assert _codes(body) == ["SYNC103"]


def test_closures_still_see_enclosing_device_tensors() -> None:
    body = (
        "def outer():\n"
        "    x = torch.randn(8, device='cuda')\n"
        "    def inner():\n"
        "        return float(x.sum())\n"
        "    return inner\n"
    )
    assert _codes(body) == ["SYNC501"]


def test_unknown_methods_of_convention_only_tensors_stay_weak() -> None:
    body = (
        "class Attention(torch.nn.Module):\n"
        "    def forward(self, hidden_states, past_key_values=None, cache_position=None):\n"
        "        if past_key_values is not None and past_key_values.get_seq_length() > 0:\n"
        "            pass\n"
        "        if hidden_states.isnan().any():\n"
        "            pass\n"
        "        return hidden_states\n"
    )
    assert _codes(body) == ["SYNC502"]


def test_math_functions_and_loaded_objects_are_not_tensor_tests() -> None:
    body = (
        "import math\n"
        "def score(temperature: float, path: str, value):\n"
        "    if not math.isfinite(temperature) or math.isnan(value):\n"
        "        pass\n"
        "    saved = torch.load(path, weights_only=True)\n"
        "    token = int(saved['mask_token_id'])\n"
        "    if saved.get('per_position'):\n"
        "        pass\n"
        "    return token\n"
    )
    assert _codes(body) == []


def test_and_of_a_torch_all_is_a_tensor_test() -> None:
    body = (
        "def can_run(encoder_lens: torch.Tensor, is_encoder_decoder: bool, bs_ok: bool) -> bool:\n"
        "    lens_ok = torch.all(encoder_lens > 0) if is_encoder_decoder else True\n"
        "    return bs_ok and lens_ok and True\n"
    )
    assert _codes(body) == ["SYNC502"]


def test_protocol_methods_of_tensors_return_unknown_values() -> None:
    body = (
        "def names(name: str, tensor: torch.Tensor):\n"
        "    for attr in tensor.__tensor_flatten__()[0]:\n"
        "        yield f'{name}.{attr}'\n"
    )
    assert _codes(body) == []


def test_a_method_torch_tensor_lacks_says_the_annotation_is_loose() -> None:
    body = (
        "def positions(cache: torch.Tensor | None, mask: torch.Tensor):\n"
        "    length = 0 if cache is None else cache.get_seq_length()\n"
        "    if length == 0:\n"
        "        return 1\n"
        "    if mask.sum() == 0:\n"  # a real tensor method keeps the finding
        "        return 2\n"
    )
    assert _codes(body) == ["SYNC502"]


def test_a_kernel_dsl_type_conversion_is_no_module_move() -> None:
    dsl = "import flydsl.expr as fx\n\ndef round_bf16(a):\n    return fx.Float32(fx.Float32(a).to(fx.BFloat16))\n"
    assert codes(dsl) == []
    # A constructor moved in a module that works with torch stays a finding; elsewhere it is low.
    assert codes(HEADER + "def build(dev):\n    return Linear(4, 4).to(dev)\n") == ["SYNC202"]
    assert [d.confidence.name for d in lint("def build(dev):\n    return Linear(4, 4).to(dev)\n")] == ["LOW"]


MODEL = (
    "import torch\nfrom torch import nn\n\n"
    "class Scaled(nn.Module):\n"
    "    def __init__(self, n, device):\n"
    "        super().__init__()\n"
    "        self.scale = torch.tensor(2.0)\n"  # built on the accelerator: a blocking scalar copy
    "        self.empty = torch.tensor([])\n"  # nothing to copy
    "        self.cache = self._cache(n, device)\n"
    "\n"
    "    def _cache(self, n, device):\n"
    "        return torch.arange(n).to(device)\n"  # already on the accelerator: no copy
    "\n"
    "    def forward(self, x):\n"
    "        return x * self.scale\n"
    "\n"
    "class Config:\n"
    "    def __init__(self):\n"
    "        self.scale = torch.tensor(2.0)\n"  # not a module: built wherever it is used
    "        self.flag = _agree()\n"
    "\n"
    "def _slopes(n):\n"
    "    return torch.tensor(0.5) ** torch.arange(n)\n"  # only a model's ``__init__`` calls it
    "\n"
    "def _agree():\n"
    "    return torch.tensor([1])\n"  # a plain object's ``__init__`` calls it: on the host
    "\n"
    "class Alibi(nn.Module):\n"
    "    def __init__(self, n):\n"
    "        super().__init__()\n"
    "        self.slopes = _slopes(n)\n"
)


def _model_codes(path: str, **settings: object) -> list[tuple[str, int]]:
    from syncllint.config import Settings
    from syncllint.engine import lint_source

    result = lint_source(MODEL, path, Settings(select=("ALL",), **settings))  # type: ignore[arg-type]
    return [(d.code, d.start.row) for d in result.diagnostics]


def test_vllm_and_sglang_build_model_layers_on_the_device() -> None:
    assert _model_codes("vllm/model_executor/models/scaled.py") == [("SYNC201", 7), ("SYNC201", 23)]
    assert _model_codes("sglang/srt/layers/scaled.py") == [("SYNC201", 7), ("SYNC201", 23)]
    # vLLM's newer per-model layout, as a path relative to the project (``vllm/models/<name>/...``).
    assert _model_codes("vllm/models/scaled/nvidia/model.py") == [("SYNC201", 7), ("SYNC201", 23)]
    # Elsewhere a factory without ``device=`` builds on the host: the move is the copy.
    assert _model_codes("mypkg/scaled.py") == [("SYNC202", 12)]
    assert _model_codes("vllm/model_executor/models/scaled.py", model_init_modules=()) == [("SYNC202", 12)]


def test_zip_of_tensors_yields_their_rows() -> None:
    body = (
        "def pool(x: torch.Tensor, lens_cpu):\n"
        "    pooled, masks = x.cuda(), x.cuda() > 0\n"
        "    for hs, mask in zip(pooled, masks):\n"
        "        hs[mask]\n"
        "    for n, mask in zip(lens_cpu, masks.cpu()):\n"
        "        x[mask]\n"
    )
    assert [(d.code, d.start.row, d.confidence.name) for d in lint(HEADER + body)] == [
        ("SYNC301", 8, "HIGH"),
        ("SYNC103", 9, "HIGH"),
    ]


def test_what_a_cpu_map_location_loads_stays_on_the_host_through_its_methods() -> None:
    body = (
        "def load(path):\n"
        "    state = torch.load(path, map_location='cpu')\n"
        "    for name, param in state.items():\n"
        "        param.cpu().numpy()\n"
        "    return state.get('w').item()\n"
    )
    assert _codes(body) == []


def test_comparing_with_a_class_or_moving_to_meta_reads_no_tensor() -> None:
    body = (
        "def make(kind: torch.nn.Parameter, m: torch.nn.Module, x: torch.Tensor):\n"
        "    if kind == PerTensorScaleParameter:\n"
        "        m.to('meta')\n"
        "    if x == 0:\n"
        "        return x.to('cpu')\n"
    )
    assert _codes(body) == ["SYNC502", "SYNC103"]


def test_an_element_of_a_tensor_by_convention_is_one_by_convention() -> None:
    body = (
        "class Runner:\n"
        "    def step(self, req_data, out):\n"
        "        mirror = self.num_computed_tokens_cpu\n"
        "        for i in range(3):\n"
        "            n = req_data.num_computed_tokens[i] + len(out)\n"
        "            if n == 1:\n"
        "                out.append(n)\n"
    )
    assert _codes(body) == []


def test_vllm_checkpoint_weights_arrive_in_host_memory() -> None:
    source = (
        "import torch\nfrom vllm.model_executor.model_loader.weight_utils import default_weight_loader\n\n"
        "class Model(torch.nn.Module):\n"
        "    def load_weights(self, weights):\n"
        "        for name, loaded_weight in weights:\n"
        "            if name.endswith('scale'):\n"
        "                self.scale.fill_(loaded_weight.item())\n"
        "\n"
        "    def weight_loader(self, param, loaded_weight):\n"
        "        param.copy_(loaded_weight.to(param.device))\n"
    )
    assert codes(source) == ["SYNC202"]
    # Without vLLM or sglang, ``weights`` says nothing of where they are; ``loaded_weight`` still
    # names the checkpoint tensor a copied loader protocol hands over (lmdeploy's weight loaders).
    assert codes(source.replace("from vllm.model_executor.model_loader.weight_utils import default_weight_loader\n", "")) == [
        "SYNC101", "SYNC202"
    ]


def test_a_load_weight_method_takes_checkpoint_weights_by_its_weight_parameter() -> None:
    source = (
        "import math\nimport torch\nfrom vllm.distributed import get_tp_group\n\n"
        "class Experts(torch.nn.Module):\n"
        "    def load_expert_weight(self, name, weight):\n"
        "        amax = float(weight.max())\n"
        "        self.w.data.copy_(weight.to(self.w.device))\n"
        "        return amax\n"
    )
    # The loader's hook names (``load_weight``, ``load_expert_weight``) say where ``weight`` is:
    # the upload is the sync, the host read is none. Without vLLM or sglang nothing says where it is.
    assert codes(source) == ["SYNC202"]
    assert codes(source.replace("from vllm.distributed import get_tp_group\n", "")) == []


def test_a_weight_loader_defined_inside_a_method_gets_checkpoint_weights_too() -> None:
    source = (
        "import torch\nfrom vllm.distributed import get_tp_group\n\n"
        "class Method:\n"
        "    def create_weights(self, layer):\n"
        "        def moe_wna16_weight_loader(param, loaded_weight, shard_id):\n"
        "            device = get_tp_group().device\n"
        "            loaded_weight = loaded_weight.to(device)\n"
        "            param.data.copy_(loaded_weight)\n"
        "        return moe_wna16_weight_loader\n"
    )
    assert codes(source) == ["SYNC202"]


def test_sglang_multimodal_items_hold_host_metadata_beside_their_device_feature() -> None:
    source = (
        "from typing import List\nimport torch\n"
        "from sglang.srt.managers.schedule_batch import MultimodalDataItem\n\n"
        "def get_image_feature(items: List[MultimodalDataItem]):\n"
        "    sizes = torch.stack(flatten_nested_list([item.tgt_size for item in items]), dim=0)\n"
        "    grids = [item.model_specific_data.get('image_grid_thw') for item in items]\n"
        "    feats = torch.cat([item.feature for item in items])\n"
        "    return sizes.max().item(), grids[0].tolist(), feats.sum().item()\n"
        "\n"
        "def untyped(items):\n"
        "    sizes = torch.stack([item.tgt_size for item in items], dim=0)\n"
        "    return sizes.to(device='cuda'), sizes.max().item()\n"
    )
    # The scheduler moves only ``feature`` to the device; the processor's metadata stays on the
    # host. Without the annotation nothing says what ``items`` holds.
    found = [(d.code, d.start.row, d.start.column) for d in lint(source)]
    assert found == [("SYNC101", 9, 51), ("SYNC101", 13, 37)]


def test_a_boolean_tensor_turned_into_integers_indexes_as_positions_not_as_a_mask() -> None:
    source = """\
import torch

def accept(target_ids, ratios, n: int):
    flags = torch.rand(n, 8, device="cuda") < ratios
    counts = flags.to(torch.int32).cumprod(dim=1).sum(dim=1)
    rows = torch.arange(n, device="cuda")
    chosen = target_ids[rows, counts.to(torch.long)]
    also = target_ids[rows, flags.sum(dim=1)]
    still_a_mask = target_ids[flags.to(device="cuda:1")]
    return chosen, also, still_a_mask
"""
    # ``.to(torch.int32)`` and counting reductions make integers: a gather, which does not sync.
    assert [(d.code, d.start.row) for d in lint(source)] == [("SYNC301", 9)]


def test_an_isinstance_test_earlier_in_an_and_chain_narrows_the_operands_after_it() -> None:
    source = """\
import torch
from torch import nn

class Norm(nn.Module):
    def __init__(self, bias: bool):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(3)) if bias else 0.0

    def forward(self, x):
        if isinstance(self.bias, (int, float)) and self.bias == 0 and x.dim() == 3:
            return x
        if isinstance(self.bias, torch.Tensor) and self.bias.sum() == 0:
            return x
        return x
"""
    # The first test compares a Python number; the second a parameter's sum, a device tensor.
    assert [(d.code, d.start.row) for d in lint(source)] == [("SYNC502", 12)]


def test_a_module_s_device_test_says_nothing_of_its_methods_results() -> None:
    source = """\
import torch
from torch import nn

class Policy(nn.Module):
    def go(self, x: torch.Tensor):
        if not self.ready() or self.device.type != "cuda" or self._tp_enabled():
            return 1
        if self.device.type == "cuda" and self._tp_enabled():
            return 2
        if x.device.type == "cuda" and x.sum():
            return 3
        return 0
"""
    # ``self.device`` is where the module's weights are; ``self`` is no tensor. ``x`` is.
    assert [(d.code, d.start.row) for d in lint(source)] == [("SYNC502", 10)]


def test_a_move_to_a_cpu_device_only_the_callers_name_is_weighed_by_what_is_moved() -> None:
    source = """\
import torch

def _move(tensors, device):
    return {k: t.to(device=device) for k, t in tensors.items()}

def _move_known(x: torch.Tensor, device):
    y = x.cuda()
    return y.to(device)

def load(tensors, x):
    return _move(tensors, "cpu"), _move_known(x, "cpu")
"""
    # Every caller passes "cpu": a tensor of unknown place may already be there (low); a device one is not.
    found = [(d.code, d.start.row, d.confidence.name) for d in lint(source)]
    assert found == [("SYNC103", 4, "LOW"), ("SYNC103", 8, "HIGH")]


UPSCALER = """
import torch

class Upscaler(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 4)

    def _tiled(self, x):
        return torch.empty(4, device="cpu")

    def upscale(self, x):
        try:
            out = self.net(x)
        except torch.cuda.OutOfMemoryError:
            out = self._tiled(x)
        return out.cpu()
"""


def test_a_name_an_except_handler_rebinds_holds_the_try_bodys_value_too() -> None:
    # The handler is the exceptional path: after the statement ``out`` is usually the network's output.
    assert codes(UPSCALER, min_confidence=Confidence.LOW) == ["SYNC103"]
    # Both paths on the host: nothing to report.
    assert codes(UPSCALER.replace("self.net(x)", "self._tiled(x)"), min_confidence=Confidence.LOW) == []


PROJECTOR = '''
import torch

class Projector(torch.nn.Module):
    def forward(self, features: torch.Tensor, spatial_shapes: torch.Tensor) -> torch.Tensor:
        """Project packed features.

        Args:
            features: (total_tokens, hidden) packed in tile order.
            spatial_shapes: (num_tiles, 2) on CPU (height, width) per tile.
        Returns:
            the projected features, on the device.
        """
        lengths = (spatial_shapes[:, 0] * spatial_shapes[:, 1]).tolist()
        return torch.split(features, lengths)

def encode(projector, features, spatial_shapes):
    spatial_shapes_cpu = spatial_shapes.cpu()
    return projector(features, spatial_shapes_cpu)
'''


def test_a_docstring_args_entry_saying_cpu_makes_the_parameter_a_host_tensor() -> None:
    # Before the module's naming habit (a ``spatial_shapes_cpu`` mirror makes ``spatial_shapes`` the device half).
    assert "SYNC102" not in codes(PROJECTOR)
    # An entry that names a device, or a "CPU" outside the Args section, says nothing.
    assert "SYNC102" in codes(PROJECTOR.replace("on CPU (height", "on CPU or GPU (height"))
    moved = PROJECTOR.replace("            spatial_shapes: (num_tiles, 2) on CPU (height, width) per tile.\n", "")
    assert "SYNC102" in codes(moved.replace("on the device.", "copied to the CPU."))


def test_a_device_mesh_s_rank_table_is_a_host_tensor() -> None:
    body = (
        "def owners(dtensor, candidate_mesh, spec, x: torch.Tensor):\n"
        "    ranks = dtensor.device_mesh.mesh\n"
        "    same = torch.equal(candidate_mesh.mesh, ranks)\n"
        "    first = (ranks == 0).nonzero()\n"
        "    return same, first, torch.equal(spec.mesh, x)\n"
    )
    # ``spec.mesh`` is a DeviceMesh, not its table: that comparison keeps its finding.
    assert [f.start.row for f in lint(HEADER + body)] == [9]


def test_a_class_field_commented_as_a_cpu_tensor_names_host_data_in_its_module() -> None:
    body = (
        "class DispatchState:\n"
        "    handle_id: torch.Tensor  # CPU tensor used to retrieve the cached handle\n"
        "    counts: torch.Tensor  # per-expert counts, on the GPU (not the CPU)\n"
        "def combine(x: torch.Tensor, handle_id: torch.Tensor, counts: torch.Tensor):\n"
        "    key = handle_id.item()\n"
        "    return key, counts.item()\n"
    )
    # The field that says CPU and names no device makes ``handle_id`` host data; ``counts`` stays.
    assert [f.start.row for f in lint(HEADER + body)] == [10]


def test_hugging_face_outputs_asked_for_as_torch_tensors_are_host_tensors() -> None:
    body = (
        "class Pipe:\n"
        "    def encode(self, prompt, device):\n"
        "        inputs = self.tokenizer(prompt, padding='max_length', return_tensors='pt')\n"
        "        ids = inputs.input_ids\n"
        "        longest = self.tokenizer(prompt, padding='longest', return_tensors='pt').input_ids\n"
        "        if not torch.equal(ids, longest):\n"
        "            last = self.tokenizer.encode(prompt, return_tensors='pt')[0, -1].item()\n"
        "        pixels = self.processor(images=prompt, return_tensors='pt')['pixel_values']\n"
        "        n = pixels.sum().item()\n"
        "        arrays = self.processor(images=prompt, return_tensors='np')\n"
        "        return self.encoder(ids.to(device))\n"
    )
    # Nothing waits on the host data; its blocking move to the device is the one copy that does.
    assert _found(body) == [("SYNC202", 15)]


def test_a_list_of_hugging_face_outputs_holds_host_records() -> None:
    body = (
        "def lengths(strings, tokenizer, model):\n"
        "    tokenized = [tokenizer(text, return_tensors='pt') for text in strings]\n"
        "    lens = [t.input_ids.ne(tokenizer.pad_token_id).sum().item() for t in tokenized]\n"
        "    outputs = [model(**t) for t in tokenized]\n"
        "    return lens, [o.logits.argmax().item() for o in outputs]\n"
    )
    # The tokenizer's tensors stay on the host (7); the model's outputs are wherever it runs (9).
    assert _found(body) == [("SYNC101", 9)]


def test_a_comparison_with_a_string_is_no_tensor_test() -> None:
    body = (
        "class Block(torch.nn.Module):\n"
        "    def __init__(self, kernel: torch.Tensor = None, x: torch.Tensor = None):\n"
        "        super().__init__()\n"
        "        if kernel == 'fir':\n"
        "            self.k = 1\n"
        "        if x == 0:\n"
        "            self.k = 2\n"
    )
    assert [f.start.row for f in lint(HEADER + body)] == [10]


def test_moving_a_tensor_built_empty_copies_nothing() -> None:
    body = (
        "def rewards(device):\n"
        "    chosen = torch.Tensor([]).to(device)\n"
        "    rejected = torch.tensor(()).cuda()\n"
        "    one = torch.tensor([1.0]).to('cuda')\n"
        "    return chosen, rejected, one\n"
    )
    assert _found(body) == [("SYNC202", 8)]


def test_zip_with_strict_yields_rows_too() -> None:
    body = (
        "def trim(ids: torch.Tensor, lengths: torch.Tensor):\n"
        "    ids_cpu, lengths_cpu = ids.detach().cpu(), lengths.detach().cpu()\n"
        "    for row, n in zip(ids_cpu, lengths_cpu, strict=True):\n"
        "        k = int(n.item())\n"
        "    for row, n in zip(ids, lengths, strict=True):\n"
        "        k = n.item()\n"
    )
    assert [(f.code, f.start.row) for f in lint(HEADER + body) if f.code == "SYNC101"] == [("SYNC101", 10)]


def test_enumerate_over_zip_binds_the_rows_of_each_side() -> None:
    body = (
        "def top_n(values: torch.Tensor, indices: torch.Tensor):\n"
        "    values_cpu, indices_cpu = values.cpu(), indices.cpu()\n"
        "    for i, (vals, idxs) in enumerate(zip(values_cpu, indices_cpu)):\n"
        "        first = vals[0].item() + idxs[0].item()\n"
        "    for i, (vals, idxs) in enumerate(zip(values, indices)):\n"
        "        first = vals[0].item()\n"
        "    for i, (name, p) in enumerate(values_cpu.named_children()):\n"
        "        pass\n"
    )
    # The blocking copies to the host, and the read of a device row; none on the host rows.
    assert _found(body) == [("SYNC103", 6), ("SYNC103", 6), ("SYNC101", 10)]


def test_arithmetic_that_never_gives_bools_is_an_index_not_a_mask() -> None:
    body = (
        "class Embedding(torch.nn.Module):\n"
        "    def forward(self, input_):\n"
        "        input_mask = (input_ < self.start) | (input_ >= self.end)\n"
        "        masked_input = input_.clone() - self.start\n"
        "        masked_input[input_mask] = 0\n"
        "        rows = self.weight[masked_input]\n"
        "        picked = self.weight[input_mask]\n"
        "        self.weight[masked_input] = 0.0\n"
        "        return rows, picked\n"
    )
    # A gather by token ids is no mask read; writing a scalar through it is an integer-index write.
    assert _found(body) == [("SYNC301", 11), ("SYNC403", 12)]


def test_generator_states_are_host_tensors_and_autocast_is_no_tensor() -> None:
    body = (
        "def check_rng(config):\n"
        "    cpu_state = torch.get_rng_state()\n"
        "    cuda_state = torch.cuda.get_rng_state()\n"
        "    if not torch.all(cpu_state == torch.get_rng_state()).item():\n"
        "        print(cuda_state.sum().item())\n"
        "    data = torch.frombuffer(bytearray(b'ab'), dtype=torch.uint8)\n"
        "    blob = data.cpu().numpy().tobytes()\n"
        "    ctx = torch.autocast('cuda') if config.amp else contextlib.nullcontext()\n"
        "    with ctx and config.fp8:\n"
        "        pass\n"
    )
    assert lint(HEADER + "import contextlib\n" + body) == []


def test_a_device_variable_compared_with_the_cpu_names_an_accelerator_on_the_other_branch() -> None:
    body = (
        "def restore(data: bytes, device: str = 'cpu'):\n"
        "    tensor = torch.frombuffer(bytearray(data), dtype=torch.uint8)\n"
        "    if device != 'cpu':\n"
        "        tensor = tensor.to(device)\n"
        "    return tensor\n"
    )
    found = _found_with_confidence(body)
    assert found == [("SYNC202", 8, Confidence.HIGH)]


def test_device_checks_narrow_the_arms_of_a_conditional_expression() -> None:
    body = (
        "def stage(parts, device):\n"
        "    table = torch.tensor([x for part in parts for x in part], dtype=torch.int32)\n"
        "    device = torch.device(device)\n"
        "    on_cuda = table.pin_memory().to(device, non_blocking=True) if device.type == 'cuda' else table.to(device)\n"
        "    blocking = table.to(device) if device.type == 'cuda' else table\n"
        "    return on_cuda, blocking\n"
    )
    # Only the move on the CUDA arm copies; the ``else`` arm's device is the CPU.
    assert _found_with_confidence(body) == [("SYNC202", 9, Confidence.HIGH)]


def test_dtype_aliases_unpacked_keyword_dicts_and_host_checks_are_no_device_evidence() -> None:
    body = (
        "F32, F64 = torch.float32, torch.float64\n"
        "def norm(ss, ids, device):\n"
        "    eps = torch.tensor(1e-6, dtype=F32).to(F64)\n"
        "    like = dict(dtype=torch.int64, device=device)\n"
        "    none = torch.full((), 0, **like)\n"
        "    picked = torch.where(ids != 0, ids, none)\n"
        "    if torch._C._overlaps(ss, ids):\n"
        "        ss = ss.clone()\n"
        "    return (ss.to(F64) + eps).to(F32), picked\n"
    )
    assert lint(HEADER + body) == []


def test_a_failed_tensor_test_leaves_a_python_value_in_the_elif_and_else() -> None:
    body = (
        "def loss_scale(labels, n_items, device):\n"
        "    n_items = torch.count_nonzero(labels != -100) if n_items is None else n_items\n"
        "    if torch.is_tensor(n_items):\n"
        "        n_items = n_items.to(device)\n"
        "    elif n_items == 0:\n"
        "        n_items = 1\n"
        "    return n_items\n"
        "def scale(x: torch.Tensor, s):\n"
        "    if isinstance(s, torch.Tensor):\n"
        "        pass\n"
        "    else:\n"
        "        assert s > 0\n"
    )
    assert _codes(body) == []


def test_a_branch_that_makes_the_tensor_keeps_it_after_the_test() -> None:
    body = (
        "def f(y):\n"
        "    if not isinstance(y, torch.Tensor):\n"
        "        y = torch.zeros(3, device='cuda')\n"
        "    return y.item()\n"
        "def g(n):\n"
        "    n = torch.ones(2, device='cuda').sum()\n"
        "    if isinstance(n, torch.Tensor):\n"
        "        pass\n"
        "    elif n == 0:\n"
        "        pass\n"
        "    if n > 1:\n"
        "        return 1\n"
    )
    assert _codes(body) == ["SYNC101", "SYNC502"]


def test_a_dtype_held_or_chosen_is_a_cast_not_a_move() -> None:
    body = (
        "def fold(head):\n"
        "    state = {k: v.detach().to('cpu', torch.float32) for k, v in head.state_dict().items()}\n"
        "    for name, value in state.items():\n"
        "        value = value.to(torch.float32 if value.dim() == 0 else torch.bfloat16).contiguous()\n"
        "        if not torch.isfinite(value).all():\n"
        "            raise ValueError(name)\n"
        "def cast(x_cpu, half):\n"
        "    dtype = torch.float16 if half else torch.float32\n"
        "    return x_cpu.to(dtype).item()\n"
        "def move(x_cpu, index: int):\n"
        "    return x_cpu.to(index)\n"
    )
    assert _codes(body) == ["SYNC103", "SYNC202"]  # the state dict read off the model; a device index


def test_a_dtype_looked_up_on_torch_and_the_meta_device_are_no_copies() -> None:
    body = (
        "from safetensors import safe_open\n"
        "def load(path, weight_info):\n"
        "    with safe_open(path, framework='pt') as f:\n"
        "        tensor = f.get_tensor('w')\n"
        "    return tensor.to(getattr(torch, weight_info['dtype']))\n"
        "def drop(model):\n"
        "    return model.to(torch.device('meta'))\n"
        "def send(t_cpu, dev):\n"
        "    return t_cpu.to(dev)\n"
    )
    assert _codes(body) == ["SYNC202"]  # only the move to a device held in a variable


def test_items_of_a_container_named_as_host_data_are_host_data() -> None:
    body = (
        "from typing import Any\n"
        "def postprocess(host_data: dict[str, Any], data: dict[str, Any]):\n"
        "    totals = host_data['verify_total_count'].tolist()\n"
        "    extra = host_data.get('extra').tolist()\n"
        "    return totals, extra, data['count'].tolist()\n"
    )
    # Only the container the name says nothing of; its read is a weak (low) finding.
    assert _codes(body) == ["SYNC102"]


def test_what_is_iterated_out_of_a_container_named_as_host_data_is_host_data() -> None:
    body = (
        "from torch import Tensor\n"
        "def to_python(metrics: dict[str, Tensor]):\n"
        "    cpu_tensors: dict[str, Tensor] = {}\n"
        "    for key, value in metrics.items():\n"
        "        cpu_tensors[key] = value.detach().to('cpu', non_blocking=True)\n"
        "    torch.cuda.current_stream().synchronize()\n"
        "    out = {key: value.item() for key, value in cpu_tensors.items()}\n"
        "    rows = [value.tolist() for value in cpu_tensors.values()]\n"
        "    return out, rows, [value.tolist() for value in metrics.values()]\n"
    )
    # Only what is iterated out of the container the name says nothing of (the wait is SYNC702).
    assert [code for code in _codes(body) if code.startswith("SYNC1")] == ["SYNC102"]


def test_a_function_told_to_work_on_the_cpu_gives_host_data() -> None:
    body = (
        "def rope(config, rope_init_fn, dev):\n"
        "    inv_freq, scaling = rope_init_fn(config, torch.device('cpu'))\n"
        "    a = inv_freq.to(dtype=torch.float32, device='cpu')\n"
        "    b = build_table(config, device='cpu').cpu()\n"
        "    c = build_table(config, device=dev).cpu()\n"
        "    return a, b, c, float(scaling)\n"
    )
    assert _codes(body) == ["SYNC103"]  # only the table built on a device the caller chose


def test_a_model_built_on_the_meta_device_is_not_host_data() -> None:
    body = (
        "def load(model_cls, device):\n"
        "    model = initialize_model(model_cls, torch.device('meta'))\n"
        "    move_to_device(model, device)\n"
        "    model.to('cpu')\n"
    )
    assert _codes(body) == ["SYNC103"]  # materialised on a device by the helper, then parked on the CPU


def test_an_object_built_with_a_device_and_a_device_group_is_no_host_data() -> None:
    body = (
        "class Group:\n"
        "    def __init__(self, cpu_group, device_group):\n"
        "        self.comm = CudaCommunicator(cpu_group=cpu_group, device=torch.device('cpu'), device_group=device_group)\n"
        "    def sync(self, tensor):\n"
        "        if tensor.is_cuda:\n"
        "            tensor.copy_(self.comm.broadcast(tensor, 0))\n"
    )
    assert _codes(body) == []


def test_iterating_a_reversed_host_tensor_gives_host_elements() -> None:
    body = (
        "def pad(max_size: torch.Tensor, local_size: torch.Tensor):\n"
        "    pad_by = (max_size - local_size).cpu()\n"
        "    dims = [val.item() for val in reversed(pad_by)]\n"
        "    for val in reversed(max_size):\n"
        "        dims.append(val.item())\n"
        "    return dims\n"
    )
    # The copy itself and the elements of the device tensor; not those of its host copy.
    assert _found(body) == [("SYNC103", 6), ("SYNC101", 9)]


def test_a_device_type_tested_against_a_list_of_accelerators_narrows() -> None:
    body = (
        "def communities(embeddings: torch.Tensor, scores: torch.Tensor):\n"
        "    if embeddings.device.type in ['cuda', 'npu']:\n"
        "        return embeddings.topk(3).indices.cpu()\n"
        "    if embeddings.device.type not in ('cuda', 'xpu'):\n"
        "        return embeddings.cpu().numpy()\n"
        "    return embeddings.cpu()\n"
    )
    # Host where the type is none of the accelerators; a device tensor where it is one of them.
    found = _found_with_confidence(body)
    assert found == [("SYNC103", 7, Confidence.HIGH), ("SYNC103", 10, Confidence.HIGH)]


def test_a_dtype_a_torch_function_computes_is_a_cast_target() -> None:
    body = (
        "def fold(path: str):\n"
        "    embeddings = torch.load(path, map_location='cpu')\n"
        "    return embeddings.to(torch.promote_types(embeddings.dtype, torch.float32))\n"
    )
    assert _codes(body) == []


@pytest.mark.parametrize(
    "body",
    [
        (
            "def worker_init(worker_id: int, log):\n"
            "    base_seed = torch.initial_seed() - worker_id\n"
            "    log.debug(f'seed {base_seed} threads {torch.get_num_threads()}')\n"
            "    return int(base_seed)\n"
        ),
        (  # a private predicate answers a Python bool too
            "def swap(param, new):\n"
            "    if torch._has_compatible_shallow_copy_type(param, new):\n"
            "        return param\n"
            "    return new\n"
        ),
    ],
)
def test_torch_functions_answering_python_values_give_no_tensor(body: str) -> None:
    assert _codes(body) == []


def test_uploads_to_a_device_named_for_xla_are_weak_findings() -> None:
    body = (
        "def restore(xla_device, device):\n"
        "    a = torch.get_rng_state().to(xla_device)\n"
        "    b = torch.get_rng_state().to(device)\n"
        "    return a, b\n"
    )
    found = _found_with_confidence(body)
    assert found == [("SYNC202", 6, Confidence.LOW), ("SYNC202", 7, Confidence.MEDIUM)]


def test_torch_ops_on_python_numbers_build_host_tensors() -> None:
    body = (
        "def padding(filt: torch.Tensor):\n"
        "    h = filt.shape[2]\n"
        "    return int(torch.div(h, 2)), int(torch.div(7, 2)), int(torch.div(filt.cuda(), 2).sum())\n"
    )
    assert _found(body) == [("SYNC501", 7)]


def test_the_parts_of_an_unpacked_shape_are_python_numbers() -> None:
    body = (
        "def head(x: torch.Tensor, num_attrs: int):\n"
        "    batch_size, num_features, height, width = x.shape\n"
        "    (rows, cols), n = x.size(), x.numel()\n"
        "    first, *rest = x.cuda()\n"
        "    per_cell = int(torch.div(num_features, num_attrs, rounding_mode='floor'))\n"
        "    return per_cell, int(torch.div(rows * cols, n)), int(first.sum()), int(torch.div(first, 2))\n"
    )
    # The ints a shape unpacks into make host tensors (9, 10); a tensor unpacks into device rows (10).
    assert _found(body) == [("SYNC501", 10), ("SYNC501", 10)]


def test_a_tensor_compared_with_false_is_a_tensor_not_a_class_test() -> None:
    body = (
        "def count(gt_ignore: torch.Tensor):\n"
        "    npig = torch.count_nonzero(gt_ignore == False)\n"
        "    if npig == 0:\n"
        "        return 0\n"
        "    return 1\n"
    )
    assert _found(body) == [("SYNC502", 7)]


def test_cpu_of_an_imported_backend_names_a_device() -> None:
    # DGL's ``F.cpu()`` and MXNet's ``nd.cpu()`` return a device; a parameter or local of the same
    # name is still a tensor that may be on the GPU.
    body = (
        "from dgl import backend as F\n"
        "import mxnet.ndarray as nd\n"
        "def zeros(g):\n"
        "    empty = nd.array([], ctx=nd.cpu())\n"
        "    if g.device != F.cpu():\n"
        "        return F.zeros((3,), F.int64, F.cpu())\n"
        "def shadowed(F):\n"
        "    return F.cpu()\n"
        "def local():\n"
        "    nd = torch.ones(3, device='cuda')\n"
        "    return nd.cpu()\n"
    )
    assert _found(body) == [("SYNC103", 12), ("SYNC103", 15)]


def test_pandas_tables_and_their_columns_are_host_data() -> None:
    """Poutyne reads its training log with ``pd.read_csv`` and calls ``.item()`` on a row's column:
    a pandas (or polars) call gives a host table, and what its methods give stays on the host."""
    body = (
        "import pandas as pd\n"
        "def resume(path, t: torch.Tensor):\n"
        "    history = pd.read_csv(path, sep='\\t')\n"
        "    best = history.iloc[history['loss'].idxmin()]\n"
        "    epoch = best['epoch'].item()\n"
        "    names = pd.unique(history['name']).tolist()\n"
        "    return epoch, names, t.cuda().item()\n"
    )
    assert _found(body) == [("SYNC101", 11)]


def test_a_helper_returning_a_pandas_table_gives_host_data() -> None:
    body = (
        "import pandas as pd\n"
        "class Bundle:\n"
        "    def get_stats(self):\n"
        "        return pd.read_csv(self.log_filename)\n"
        "    def best_epoch_stats(self):\n"
        "        history = self.get_stats()\n"
        "        return history.iloc[history['loss'].idxmin()]\n"
        "    def resume(self):\n"
        "        stats = self.get_stats()\n"
        "        best = self.best_epoch_stats()\n"
        "        return stats['epoch'].item(), best['epoch'].item()\n"
    )
    assert _found(body) == []


@pytest.mark.parametrize("dtype", ["torch.cfloat", "torch.complex64", "torch.cdouble", "torch.qint8", "torch.float8_e4m3fnuz"])
def test_complex_quantized_and_float8_dtypes_are_casts_not_devices(dtype: str) -> None:
    """PyPOTS builds ``nn.Linear(lpf, rank).to(torch.cfloat)`` in ``__init__``: a dtype, like
    ``.to(torch.float16)``, names no device, so nothing is copied to the accelerator."""
    body = (
        "import torch.nn as nn\n"
        "class Block(nn.Module):\n"
        "    def __init__(self, lpf, rank):\n"
        "        super().__init__()\n"
        f"        self.linear = nn.Linear(lpf, rank, bias=False).to({dtype})\n"
        "    def forward(self, x):\n"
        f"        spectrum = torch.fft.rfft(x.cpu().to({dtype}), dim=1)\n"
        "        return self.linear(spectrum)\n"
    )
    assert _found(body) == [("SYNC103", 11)]
