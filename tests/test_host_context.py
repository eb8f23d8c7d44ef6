"""Host code: where a tensor of unknown device counts as a host tensor (findings drop to low)."""

from __future__ import annotations

import textwrap

import pytest

from syncllint.config import Settings
from syncllint.diagnostics import Confidence
from syncllint.engine import lint_source


def shown(source: str, filename: str = "model.py") -> list[tuple[str, int]]:
    """(code, line) of the findings shown at the default threshold (medium)."""
    result = lint_source(textwrap.dedent(source), filename, Settings(min_confidence=Confidence.MEDIUM))
    return sorted((d.code, d.start.row) for d in result.diagnostics)


PROCESSOR = """\
import torch

def _prepare(image: torch.Tensor):
    return image.min().item()

def _segments(pred: torch.Tensor):
    return pred.argmax().item()

class Proc:
    def post_process_semantic(self, outputs: torch.Tensor):
        return _segments(outputs)

    def preprocess(self, images: torch.Tensor):
        return images.max().item()
"""


def test_processor_modules_are_host_code_except_post_processing_and_what_it_calls() -> None:
    # _segments is reached from post_process_*: model outputs, on the model's device.
    assert shown(PROCESSOR, "pkg/models/x/image_processing_x.py") == [("SYNC101", 7)]
    # The same code in a model module is reported everywhere.
    assert [row for _, row in shown(PROCESSOR, "pkg/models/x/modeling_x.py")] == [4, 7, 14]


NORMALIZE = """\
import torch

def normalize(image: torch.Tensor, mean: list[float], std: list[float]) -> torch.Tensor:
    mean_t = torch.as_tensor(mean, dtype=image.dtype, device=image.device)
    if (image < 0).any():
        raise ValueError("expected a [0, 1] image")
    return (image - mean_t.view(-1, 1, 1)) / torch.as_tensor(std, device="cuda").view(-1, 1, 1)
"""


def test_data_pipeline_transforms_are_host_code() -> None:
    # DataLoader workers apply them to decoded CPU images; an explicit device still counts.
    assert shown(NORMALIZE, "vision/transforms/functional.py") == [("SYNC201", 7)]
    assert shown(NORMALIZE, "vision/ops/functional.py") == [("SYNC201", 4), ("SYNC201", 7), ("SYNC502", 5)]


@pytest.mark.parametrize("name", ["forward_cpu", "gather_cache_cpu", "cpu_fallback", "_run_cpu_impl"])
def test_functions_named_for_the_cpu_are_host_code(name: str) -> None:
    assert shown(f"import torch\n\ndef {name}(t: torch.Tensor):\n    return t.item()\n") == []


@pytest.mark.parametrize("name", ["offload_to_cpu", "sync_layer_to_cpu", "forward_cuda"])
def test_moving_to_the_cpu_is_not_running_on_it(name: str) -> None:
    assert shown(f"import torch\n\ndef {name}(t: torch.Tensor):\n    return t.item()\n") == [("SYNC101", 4)]


def test_methods_of_input_processing_classes_are_host_code() -> None:
    source = """\
    import torch

    class Qwen2VLMultiModalProcessor(Base):
        def _get_prompt_updates(self, out_mm_kwargs: dict, grid: torch.Tensor):
            return grid.prod().item()

    class LlavaLogitsProcessor(Base):
        def __call__(self, scores: torch.Tensor):
            return scores.max().item()
    """
    assert shown(source) == [("SYNC101", 9)]


CPU_AND_GPU_TESTS = """\
import torch

def _make_inputs():
    return torch.randn(4, device="cuda")

def _check(t: torch.Tensor):
    return t.sum().item()

def test_on_gpu():
    x = _make_inputs()
    assert _check(x) > 0

def test_uses_gpu_helper(lhs: torch.Tensor, rhs: torch.Tensor):
    _make_inputs()
    assert torch.equal(lhs, rhs)

def test_plain(a: torch.Tensor, b: torch.Tensor):
    assert torch.equal(a, b)
    assert _check(a) > 0
"""


def test_cpu_unit_tests_are_host_code_gpu_tests_and_their_helpers_are_not() -> None:
    found = shown(CPU_AND_GPU_TESTS, "tests/test_ops.py")
    # _check is called by a test that shows a device; test_uses_gpu_helper calls a helper that does.
    assert found == [("SYNC101", 7), ("SYNC602", 15)]
    # Outside a test module nothing is host code.
    assert ("SYNC602", 18) in shown(CPU_AND_GPU_TESTS, "ops/checks.py")


def test_a_docstring_mentioning_a_gpu_is_not_device_evidence() -> None:
    source = 'import torch\n\ndef test_x(a: torch.Tensor):\n    """Single GPU."""\n    assert a.sum().item() > 0\n'
    assert shown(source, "test_x.py") == []


def test_processor_hooks_and_their_helpers_are_host_code() -> None:
    source = """\
    import torch

    def _feature(spec):
        return spec.data.sum().item()

    class Model(torch.nn.Module):
        def get_mrope_input_positions(self, input_tokens, mm_features: torch.Tensor):
            return _feature(mm_features), mm_features.max().item()

        def forward(self, x: torch.Tensor):
            return x.max().item()
    """
    assert shown(source) == [("SYNC101", 11)]


def test_a_device_parameter_defaulting_to_the_cpu_shows_no_accelerator() -> None:
    source = """\
    import torch

    def tiny_model(device="cpu"):
        return Model().to(device)

    def test_history():
        model = tiny_model()
        history = model.history_mask()
        assert torch.equal(history, model.previous)
    """
    assert shown(source, "tests/test_model.py") == []
    assert ("SYNC602", 9) in shown(source.replace('device="cpu"', "device"), "tests/test_model.py")


def test_copies_to_a_named_device_stay_reported_in_host_code() -> None:
    source = """\
    import torch

    class HostPool:
        def pointers(self, buffers: list):
            return torch.tensor([b.data_ptr() for b in buffers], device=self.device_pool.device)

    def normalize(image: torch.Tensor, h: int, w: int):
        return torch.as_tensor([h, w], device=image.device)
    """
    # In a host module the pool's device is still an accelerator; the image is on the host.
    assert shown(source, "pkg/mem_cache/pool_host/mha.py") == [("SYNC201", 5)]


def test_module_functions_an_input_processor_calls_are_host_code() -> None:
    source = (
        "import torch\n\n"
        "def build_lengths(grids: torch.Tensor):\n"
        "    return int(grids.sum().item())\n\n"
        "def scale(x: torch.Tensor):\n"
        "    return x.max().item()\n\n"
        "class DemoMultiModalProcessor(BaseMultiModalProcessor):\n"
        "    def __init__(self):\n"
        "        self.n = 0\n\n"
        "    def _apply_main(self, grids):\n"
        "        return build_lengths(grids)\n\n"
        "class DemoModel(nn.Module):\n"
        "    def __init__(self):\n"
        "        self.n = 1\n\n"
        "    def forward(self, x):\n"
        "        return scale(x)\n"
    )
    # The processor's helper is host code; the model's is not, though both classes have __init__.
    assert shown(source) == [("SYNC101", 7)]


def test_the_device_of_a_local_tensor_is_no_accelerator_evidence() -> None:
    source = """
    import torch

    def test_prebuilt_mask():
        q = torch.randn(2, 8)
        mask = torch.ones(2, 8, device=q.device)
        assert torch.equal(attend(q, mask), attend(q, None))

    def test_on_gpu():
        q = torch.randn(2, 8, device="cuda")
        assert torch.equal(attend(q, None), q)
    """
    assert shown(source, "tests/test_masks.py") == [("SYNC602", 11)]


def test_the_device_of_a_run_state_is_the_accelerator() -> None:
    # Accelerate's test scripts move host tensors to ``state.device`` (PartialState / Accelerator):
    # the process's accelerator, unlike the device of a local tensor (``q.device``).
    source = """
    import torch

    def test_reduce_sum(state):
        truth = torch.tensor([4.0, 6]).to(state.device)
        return truth

    def test_copy(x):
        y = torch.tensor([4.0, 6]).to(x.device)
        return y
    """
    assert shown(source, "pkg/test_ops.py") == [("SYNC202", 5)]


@pytest.mark.parametrize(
    "path", ["pkg/mla/prefill/zen_cpu_sdpa.py", "pkg/backends/amx_mla.py", "pkg/layers/intel_amx_backend.py",
             "vllm/entrypoints/pooling/io_processor.py", "vllm/outputs.py"],
)
def test_cpu_backends_and_the_api_front_end_are_host_modules(path: str) -> None:
    source = "import torch\n\ndef prefill(t: torch.Tensor):\n    return t.max().item()\n"
    assert shown(source, path) == []


@pytest.mark.parametrize(
    ("path", "host"),
    [
        ("pkg/vl/model/preprocess_utils.py", True), ("pkg/multimodal/encoder_preprocessing.py", True),
        ("pkg/disaggregation/encoder/preprocessor.py", True), ("pkg/stages/preprocess.py", True),
        # A kernel that prepares activations is named for preprocessing too, but runs on the device.
        ("pkg/npu/attention/mla_preprocess.py", False),
    ],
)
def test_modules_named_for_preprocessing_input_are_host_modules(path: str, host: bool) -> None:
    source = "import torch\n\ndef expand(grid: torch.Tensor):\n    return grid[0].item()\n"
    assert (shown(source, path) == []) is host


@pytest.mark.parametrize(("parameter", "host"), [("processor", True), ("processing_class", True), ("tokenizer", False)])
def test_a_function_taking_an_input_processor_is_host_code(parameter: str, host: bool) -> None:
    source = f"import torch\n\ndef get_rope_index({parameter}, input_ids: torch.Tensor):\n    return input_ids.tolist()\n"
    assert (shown(source, "pkg/models/qwen2_vl.py") == []) is host


def test_a_module_named_for_offloading_to_the_cpu_is_not_host_code() -> None:
    source = "import torch\n\ndef save(t: torch.Tensor):\n    return t.max().item()\n"
    assert shown(source, "pkg/v1/simple_cpu_offload_connector.py") == [("SYNC101", 4)]


CPU_BRANCH = """\
import torch

def entries(req_to_token: torch.Tensor, seq_lens: torch.Tensor, weights: torch.Tensor, target_device):
    if not req_to_token.is_cuda:
        n = seq_lens.sum().item()
        moved = req_to_token.to(target_device)
    else:
        n = seq_lens.sum()
    with torch.device("cpu"):
        m = seq_lens.max().item()
    return seq_lens.min().item()
"""


def test_a_branch_for_host_tensors_and_a_cpu_default_device_are_host_regions() -> None:
    # The CPU branch's reads and the ``with torch.device("cpu")`` body drop to low; the copy of
    # a host tensor to a device out of the CPU branch stays (the function is no host code).
    assert shown(CPU_BRANCH) == [("SYNC101", 11), ("SYNC202", 6)]


PIPELINE = """\
import torch

class FillMaskPipeline(Pipeline):
    def _masked_index(self, input_ids: torch.Tensor):
        return torch.nonzero(input_ids == 3)

    def preprocess(self, inputs: torch.Tensor):
        return self._masked_index(inputs)

    def _forward(self, model_inputs: torch.Tensor):
        return model_inputs.max().item()

    def postprocess(self, model_outputs: torch.Tensor):
        return model_outputs.softmax(-1).tolist()
"""


def test_transformers_pipeline_steps_around_forward_are_host_code() -> None:
    # ``Pipeline.forward`` moves the outputs to the CPU before ``postprocess``; ``_forward`` runs the model.
    assert shown(PIPELINE, "transformers/pipelines/fill_mask.py") == [("SYNC101", 11)]
    assert len(shown(PIPELINE, "pkg/models/fill_mask.py")) == 3


def test_a_device_borrowed_from_a_tensor_shows_no_accelerator_in_a_test_module() -> None:
    source = """\
    import torch

    def _labels(lengths):
        device = lengths.device
        return torch.arange(4, device=device)

    def test_labels_match(a: torch.Tensor, b: torch.Tensor):
        assert torch.equal(_labels(a), b)
    """
    assert shown(source, "pkg/tests/test_labels.py") == []


def test_a_gpu_count_or_topology_in_a_name_shows_no_accelerator_in_a_test_module() -> None:
    source = """\
    import torch

    class TestSplit:
        def _single_gpu(self, a):
            return combine(a)

        def test_rank_split_matches_single_gpu(self):
            video = self._single_gpu(self.latents)
            assert torch.equal(video, self.expected)

        def test_sharded(self, num_gpus=2):
            assert torch.equal(combine(self.latents), self.expected)

        def test_on_gpu(self):
            video_gpu = combine(self.latents)
            assert torch.equal(video_gpu, self.expected)
    """
    # ``single_gpu`` and ``num_gpus`` count devices; ``video_gpu`` names a tensor on one.
    assert shown(source, "pkg/tests/test_split.py") == [("SYNC602", 16)]


def test_a_function_a_processor_hook_defines_and_the_module_functions_it_calls_are_host_code() -> None:
    source = """\
    import torch

    def _runs(patch_positions: torch.Tensor, fps: float):
        unique_t, counts = torch.unique_consecutive(patch_positions[:, 0], return_counts=True)
        return unique_t.tolist()

    class Model:
        def _get_prompt_updates(self, mm_items, out_mm_kwargs):
            def get_video_replacement(item_idx: int):
                patch_positions = out_mm_kwargs["video"][item_idx]["patch_positions_videos"].data
                return _runs(patch_positions, 1.0)
            return [get_video_replacement]

    def forward(x: torch.Tensor):
        return torch.unique_consecutive(x)
    """
    # The replacement closure runs for the hook, on processor output; ``forward`` is model code.
    assert shown(source) == [("SYNC304", 15)]


DATASET = """\
import torch
from torch.utils.data import Dataset

class _Digits(Dataset):
    def __getitem__(self, idx):
        img = self.data[idx].float()
        return self.normalize(img, 0.5, 0.2), int(self.targets[idx])

    @staticmethod
    def normalize(tensor, mean, std):
        mean = torch.as_tensor(mean, dtype=tensor.dtype, device=tensor.device)
        return tensor.sub(mean)

    def stats(self, x: torch.Tensor):
        return x.max().item()

class Scorer:
    def score(self, logits: torch.Tensor):
        return logits.max().item()
"""


def test_methods_of_a_dataset_are_host_code() -> None:
    # DataLoader workers build samples on the host; a plain class's method keeps its finding.
    assert shown(DATASET) == [("SYNC101", 19)]


def test_a_class_named_for_a_dataset_is_host_code_too() -> None:
    assert shown(DATASET.replace("class _Digits(Dataset):", "class PackedDataset:")) == [("SYNC101", 19)]
    assert shown(DATASET.replace("class _Digits(Dataset):", "class Digits:")) == [
        ("SYNC101", 15), ("SYNC101", 19), ("SYNC201", 11),
    ]


DATASET_HELPERS = """\
import torch
from torch.utils.data import Dataset

def is_silence(audio: torch.Tensor) -> bool:
    return audio.abs().max().item() < 1e-3

def loudest(audio: torch.Tensor) -> float:
    return audio.abs().max().item()

class Clips(Dataset):
    def __getitem__(self, idx):
        audio = self.load(idx)
        return None if is_silence(audio) else audio

class Meter:
    def read(self, key):
        return loudest(self.buffers[key])
"""


def test_module_functions_a_datasets_sample_hook_calls_are_host_code() -> None:
    # ``is_silence`` runs in a DataLoader worker on the sample; ``loudest`` is called by a
    # plain class's method and keeps its finding.
    assert shown(DATASET_HELPERS) == [("SYNC101", 8)]
    # Methods are told apart by name only: a ``__getitem__`` another class also defines is no
    # dataset's for sure, so what it calls keeps its findings.
    shared = DATASET_HELPERS.replace("def read(self, key):", "def __getitem__(self, key):")
    assert shown(shared) == [("SYNC101", 5), ("SYNC101", 8)]


XLA_STRATEGY = """\
import torch

class {cls}:
    def broadcast(self, obj):
        data = torch.tensor([1, 2, 3], device=self.root_device)
        obj = obj.to(self.root_device)
        return data.cpu()
"""


@pytest.mark.parametrize(("cls", "filename", "uploads_shown"), [
    ("XLAStrategy", "strategies/xla.py", False),
    ("SingleTPUStrategy", "strategies/single.py", False),
    ("DDPStrategy", "strategies/xla_fsdp.py", False),
    ("DDPStrategy", "strategies/ddp.py", True),
])
def test_uploads_to_an_xla_device_are_not_waits(cls: str, filename: str, uploads_shown: bool) -> None:
    # A lazy XLA device queues the transfer; reading back (``.cpu()``) still runs the graph and waits.
    found = shown(XLA_STRATEGY.format(cls=cls), filename)
    uploads = [("SYNC201", 5)] if uploads_shown else []
    assert [f for f in found if f[0] != "SYNC103"] == uploads
    assert ("SYNC103", 7) in found


def test_what_a_framework_hands_compute_metrics_is_host_data() -> None:
    source = """\
    import torch
    from mmengine.evaluator import BaseMetric

    class Accuracy(BaseMetric):
        def process(self, data_batch, data_samples):
            for sample in data_samples:
                self.results.append(sample["pred_score"].argmax().item())

        def compute_metrics(self, results):
            target = torch.cat([r["gt"] for r in results])
            return self.calculate(target, results[0]["scores"])

        @staticmethod
        def calculate(target: torch.Tensor, scores: torch.Tensor):
            return (scores.argmax(-1) == target).float().mean().item()
    """
    evaluator = """\
    class RerankingEvaluator:
        def compute_metrics(self, model, pairs):
            scores = model.predict(pairs, convert_to_tensor=True)
            return scores.cpu().tolist()
    """
    # mmengine's ``BaseMetric.evaluate`` moves the collected results to the CPU before
    # ``compute_metrics`` (and what it calls) sees them; ``process`` gets the model's outputs, and
    # so does an evaluator's ``compute_metrics`` that runs a model itself.
    assert shown(source) == [("SYNC101", 7)]
    assert shown("import torch\n" + textwrap.dedent(evaluator)) == [("SYNC103", 5)]
