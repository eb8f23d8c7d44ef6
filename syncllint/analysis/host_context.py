"""Where code runs on the host: which functions treat a tensor of unknown device as a host tensor.

A finding of medium confidence (a tensor whose device the code does not show) drops to low in
host code, so it is hidden by default. Host code is:

- a host module by path (``host-modules``: CPU backends, host KV pools, processors of user input);
- a function named for the CPU (``forward_cpu``, ``gather_cache_cpu``, ``cpu_fallback``), or one of
  the processor hooks of ``host-functions`` (vLLM's ``_get_prompt_updates``, ``get_mrope_input_positions``);
- a method of an input-processing class (``Qwen2VLMultiModalProcessor``, ``...ProcessingInfo``,
  ``...ImageProcessor``, ``...FeatureExtractor``, any ``...Processor`` but a logits processor);
- a function that takes an input processor (``get_rope_index(processor, input_ids, ...)``): it
  works on what the processor gives, one example at a time, on the host;
- a function of a test module that shows no accelerator at all (no ``cuda``, no ``device=`` other
  than the CPU, no ``.to(device)``): unit tests that build their tensors on the CPU.

The exception is post-processing (``output-functions``: ``post_process_*`` and the module
functions they call), which reads model outputs on the model's device. On the labelled samples,
syncs in post-processing were what treating whole processor modules as host code missed.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass

import libcst as cst

from syncllint.analysis.arguments import named_parameters
from syncllint.analysis.conventions import is_test_module
from syncllint.analysis.function_kinds import is_dataset
from syncllint.analysis.host_regions import names_a_lazy_device
from syncllint.analysis.module_index import ModuleIndex, closure

HOST_CLASS_SUFFIXES = (
    "ProcessingInfo", "MultiModalProcessor", "DummyInputsBuilder", "ImageProcessor", "ImageProcessorFast",
    "ImageProcessorPil", "FeatureExtractor", "VideoProcessor",
)
_MOVES_TO_HOST = ("to_cpu", "offload")
_PIPELINE_HOST_STEPS = frozenset(("preprocess", "postprocess"))
# Hooks frameworks call with host data: mmengine's ``BaseMetric.evaluate`` moves what ``process``
# collected to the CPU before ``compute_metrics``; a Hugging Face ``Trainer`` hands its
# ``compute_metrics`` numpy arrays.
_FRAMEWORK_HOST_HOOKS = frozenset(("compute_metrics",))
# What a DataLoader worker calls on a dataset to get samples.
_SAMPLE_HOOKS = frozenset(("__getitem__", "__getitems__", "__iter__", "__next__"))


@dataclass(frozen=True)
class HostContext:
    module_is_host: bool = False
    # Names of functions that read model outputs (never host code).
    output_side: frozenset[str] = frozenset()
    test_module: bool = False
    # ids of the FunctionDef nodes of a test module whose text shows an accelerator.
    shows_device: frozenset[int] = frozenset()
    # Names of host hooks (``host-functions``), pipeline steps, and the module functions they call.
    host_functions: frozenset[str] = frozenset()
    # The module's file is named for a lazy XLA device (``strategies/xla_fsdp.py``).
    lazy_device_module: bool = False

    def function_is_host(self, node: cst.FunctionDef, in_host_class: bool, parent_is_host: bool) -> bool:
        """``in_host_class``: a method of a class ``class_is_host`` says runs on the host."""
        name = node.name.value
        if name in self.output_side:
            return False
        if parent_is_host or self.module_is_host or _named_for_cpu(name) or _takes_a_processor(node):
            return True
        if name in self.host_functions:
            return True
        if in_host_class:
            return True
        return self.test_module and id(node) not in self.shows_device

    @staticmethod
    def class_is_host(node: cst.ClassDef) -> bool:
        """An input processor or collator by its name, or a ``Dataset``, whose samples DataLoader
        workers build on the host."""
        return _is_host_class(node.name.value) or is_dataset(node)


def host_context(
    index: ModuleIndex,
    path: str,
    source: str,
    host_modules: Iterable[str],
    output_functions: Iterable[str],
    host_functions: tuple[str, ...] = (),
) -> HostContext:
    """The host-code facts of one module, from its index (``ModuleIndex``)."""
    # A module named for moving data to the host (``simple_cpu_offload_connector.py``) holds device data.
    stem = path.rsplit("/", 1)[-1].lower()
    module_is_host = any(fnmatch.fnmatch(path, p) for p in host_modules) and not any(
        word in stem for word in _MOVES_TO_HOST
    )
    output_side: frozenset[str] = frozenset()
    if module_is_host or "Processor" in source or any(suffix in source for suffix in HOST_CLASS_SUFFIXES):
        output_side = index.reached_from(_matching(index, output_functions))
    # The hooks' helpers (``_get_feature_tensor`` called from ``get_mrope_input_positions``), the
    # module functions input processors' methods call (``build_flat_image_bool_length``), and what
    # a framework's host hook calls (``compute_metrics`` -> ``self.calculate``).
    seeds = _matching(index, host_functions) | _host_class_methods(index) | _framework_host_hooks(index)
    host_named = index.reached_from(seeds) - output_side
    if fnmatch.fnmatch(path, "*transformers/pipelines/*"):
        # ``Pipeline.forward`` hands ``postprocess`` the model outputs moved to the CPU, and
        # ``preprocess`` builds host tensors the base class moves: these steps are no output side.
        steps = index.reached_from(_PIPELINE_HOST_STEPS & index.defs.keys())
        output_side -= steps
        host_named |= steps
    test_module = is_test_module(path)
    shows_device = _functions_near_a_device(index) if test_module else frozenset()
    lazy_device = names_a_lazy_device(stem.rsplit(".", 1)[0])
    return HostContext(module_is_host, output_side, test_module, shows_device, host_named, lazy_device)


def _framework_host_hooks(index: ModuleIndex) -> set[str]:
    """The module's ``compute_metrics`` hooks that take results, not a model to run: an evaluator's
    ``compute_metrics(self, model)`` (sentence-transformers) encodes on the device itself."""
    return {
        name for name in _FRAMEWORK_HOST_HOOKS & index.defs.keys()
        if not any(_takes_a_model(node) for node in index.defs[name])
    }


def _takes_a_model(node: cst.FunctionDef) -> bool:
    return any("model" in p.name.value for p in named_parameters(node.params))


def _matching(index: ModuleIndex, patterns: Iterable[str]) -> set[str]:
    wanted = tuple(patterns)
    return {name for name in index.defs if any(fnmatch.fnmatchcase(name, p) for p in wanted)}


def _host_class_methods(index: ModuleIndex) -> set[str]:
    """Methods of input processors and datasets that no other class of the module has (functions
    are told apart by name only: ``__init__`` would be every class's).

    A dataset's sample hooks (``__getitem__``) count too: DataLoader workers run them, and the
    module functions they call (``is_silence(audio)``), on the host.
    """
    host: set[str] = set()
    other: set[str] = set()
    for cls, names in index.methods.items():
        if cls in index.dataset_classes:
            host.update(name for name in names if not name.startswith("__") or name in _SAMPLE_HOOKS)
        elif _is_host_class(cls):
            host.update(name for name in names if not name.startswith("__"))
        else:
            other.update(names)
    return host - other


def _is_host_class(name: str) -> bool:
    """Input processors (``GlmAsrProcessor``, ``...ProcessingInfo``); not logits processors (on the device).
    Data collators (``DataCollatorWithPadding``) batch a dataset's samples in the DataLoader, on the host."""
    if name.endswith(HOST_CLASS_SUFFIXES) or "Collator" in name:
        return True
    return name.endswith("Processor") and "Logit" not in name


# Parameters that hold an input processor (HF ``AutoProcessor`` and its parts). Not ``tokenizer``:
# generation loops take one beside device tensors (transformers' ``heal_tokens``).
_PROCESSOR_PARAMETERS = frozenset(
    ("processor", "hf_processor", "image_processor", "video_processor", "feature_extractor", "processing_class")
)


def _takes_a_processor(node: cst.FunctionDef) -> bool:
    return any(p.name.value in _PROCESSOR_PARAMETERS for p in named_parameters(node.params))


def _named_for_cpu(name: str) -> bool:
    """``forward_cpu``, ``cpu_fallback``; not ``offload_to_cpu`` (whose input is on the device)."""
    lowered = name.lower()
    if any(word in lowered for word in _MOVES_TO_HOST):
        return False
    return lowered.endswith("_cpu") or "_cpu_" in lowered or lowered.startswith("cpu_")


def _functions_near_a_device(index: ModuleIndex) -> frozenset[int]:
    """The functions that show a device, those that call one of them, and those they call.

    A test that calls ``_make_inputs()`` (which builds on ``"cuda"``) gets device tensors, and so
    does a helper that a test on ``"cuda"`` calls with its tensors. A CPU test that shares that
    helper shows nothing itself and stays host code.
    """
    callers: dict[str, set[str]] = {name: set() for name in index.calls}
    for caller, callees in index.calls.items():
        for callee in callees & callers.keys():
            callers[callee].add(caller)
    showing = index.showing_device
    reached = set(showing) | closure(showing, callers) | closure(showing, index.calls)
    return frozenset(id(node) for name in reached for node in index.defs.get(name, ()))
