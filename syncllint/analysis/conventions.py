"""Naming conventions read from a module's text with regular expressions (no parse, no libcst).

The runner uses them before any file is parsed (a cache hit must not import libcst), and the
device inference uses them per module.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable

# ``"image_sizes": MultiModalFieldConfig.batched("image", keep_on_cpu=True)``, ``image_sizes=...`` or
# ``fields["image_sizes"] = ...``: a quoted key, or a bare keyword (not a subscript variable).
_FIELD_CONFIG = r"""\s*[:=]\s*MultiModalFieldConfig\s*\.\s*\w+\((?:[^()]|\([^()]*\))*?keep_on_cpu\s*=\s*True"""
_KEEP_ON_CPU = re.compile(r"""(?:["'](\w+)["']\]?|(?<![\w\["'])(\w+))""" + _FIELD_CONFIG)
# ``for key in ("frame_counts", "audio_counts"): fields[key] = MultiModalFieldConfig.batched(..., keep_on_cpu=True)``
_KEEP_ON_CPU_LOOP = re.compile(r"""for\s+(\w+)\s+in\s+[(\[]([^()\[\]]*)[)\]]\s*:\s*\w+\[\1\]""" + _FIELD_CONFIG)
_QUOTED = re.compile(r"""["'](\w+)["']""")


def kept_on_host(source: str) -> frozenset[str]:
    """Fields the module registers with vLLM's ``keep_on_cpu=True``: the model receives them on the host."""
    if "keep_on_cpu" not in source:
        return frozenset()
    found = {match.group(1) or match.group(2) for match in _KEEP_ON_CPU.finditer(source)}
    for loop in _KEEP_ON_CPU_LOOP.finditer(source):
        found.update(_QUOTED.findall(loop.group(2)))
    return frozenset(found)


# ``    handle_id: torch.Tensor  # CPU tensor used to retrieve the cached handle``: a class field (an
# indented annotation) whose author says where the tensor lives.
_COMMENTED_FIELD = re.compile(r"^[ \t]+(\w+)[ \t]*:[^:=#\n]*Tensor[^#\n]*#([^\n]*)$", re.MULTILINE)
_HOST_WORDS = re.compile(r"\b(?:cpu|host)\b", re.IGNORECASE)
_DEVICE_WORDS = re.compile(r"\b(?:gpu|cuda|device|accelerator)\b", re.IGNORECASE)


def says_host(text: str) -> bool:
    """An author's words (a comment, a docstring entry) that put a tensor on the host and name no
    device: ``# CPU tensor [1]``, but not ``# copied from the GPU to the CPU``."""
    return bool(_HOST_WORDS.search(text)) and not _DEVICE_WORDS.search(text)


def commented_host_fields(source: str) -> frozenset[str]:
    """Tensor fields a class of the module declares with a comment saying they are on the host:
    the module's code uses the name for that data."""
    return frozenset(match.group(1) for match in _COMMENTED_FIELD.finditer(source) if says_host(match.group(2)))


_FIELD_REGISTRATION = re.compile(r"""(?:["'](\w+)["']\]?|(?<![\w\["'])(\w+))\s*[:=]\s*MultiModalFieldConfig\s*\.\s*\w+\(""")


def registered_on_device(source: str, kept: frozenset[str]) -> frozenset[str]:
    """Fields the module registers without ``keep_on_cpu=True`` (``kept``: its ``kept_on_host``): the
    runner moves them to the device, whatever another model of the project keeps on the host under
    the same name."""
    if "MultiModalFieldConfig" not in source:
        return frozenset()
    registered = {match.group(1) or match.group(2) for match in _FIELD_REGISTRATION.finditer(source)}
    return frozenset(registered) - kept


_MIRROR = re.compile(r"\b([A-Za-z_]\w*?)_cpu\b(?!\s*\()")


# ``x_gpu`` / ``x_cuda``; ``x_device`` only as a copy (``x_device = x.to(dev)``): ``target_device``
# and ``compute_device`` are device specs.
_DEVICE_MIRROR = re.compile(
    r"\b([A-Za-z_]\w*?)_(?:gpu|cuda)\b(?!\s*\()|\b([A-Za-z_]\w*?)_device\s*=\s*\2\s*\.\s*(?:to|cuda)\("
)


def mirrored_names(source: str) -> tuple[frozenset[str], frozenset[str]]:
    """Names with a ``<name>_cpu`` host mirror, and names with a ``<name>_device`` / ``_gpu`` copy.

    vLLM and sglang keep paired buffers so: ``seq_lens`` / ``seq_lens_cpu``, ``timesteps`` /
    ``timesteps_device``. A name on both lists says nothing.
    """
    host = {m.group(1) for m in _MIRROR.finditer(source) if not m.group(1).endswith("_")}
    device = {name for m in _DEVICE_MIRROR.finditer(source) if not (name := m.group(1) or m.group(2)).endswith("_")}
    return frozenset(host - device), frozenset(device - host)


_DEVICE_CONTEXT = re.compile(r"\bwith\s+torch\.device\(")


def factories_build_on_host(source: str) -> bool:
    """Whether ``torch.zeros(n)`` without ``device=`` builds on the host in this module (no default device)."""
    return "set_default_device" not in source and not _DEVICE_CONTEXT.search(source)


# vLLM's and sglang's checkpoint loaders hand these parameters tensors in host memory (the
# ``load_weights`` of every model and the weight loaders and ``load_*_weight`` hooks it calls):
# function pattern, parameter.
_CHECKPOINT_PARAMETERS = (
    ("load_weights", "weights"), ("*weight_loader*", "loaded_weight"), ("*load*_weight", "loaded_weight"),
    ("*load*_weight", "weight"),
)
_CHECKPOINT_FRAMEWORKS = frozenset(("vllm", "sglang"))


def checkpoint_parameters(functions: Iterable[str], imported: Iterable[str]) -> dict[str, str]:
    """``fn`` / ``self.fn`` among ``functions`` -> its parameter that receives checkpoint weights, in
    a module that imports (qualified names ``imported``) one of the frameworks whose loader calls it."""
    # ``loaded_weight`` names the checkpoint tensor wherever vLLM's loader protocol is copied
    # (lmdeploy's weight loaders); the generic names count in the frameworks that define it.
    framework = any(name.split(".", 1)[0] in _CHECKPOINT_FRAMEWORKS for name in imported)
    found: dict[str, str] = {}
    for key in functions:
        name = key.rsplit(".", 1)[-1]
        for pattern, parameter in _CHECKPOINT_PARAMETERS:
            if fnmatch.fnmatchcase(name, pattern) and (framework or parameter == "loaded_weight"):
                found[key] = parameter
    return found


def qualified_matches(qualified: str | None, wanted: str) -> bool:
    """How ``allowed-contexts`` names match: ``wanted`` without a dot matches the last component; with
    dots, the whole tail. Plain strings, so the project index (``ast``, no libcst) matches as the engine does."""
    if qualified is None:
        return False
    if "." not in wanted:
        return qualified.rsplit(".", 1)[-1] == wanted
    return qualified == wanted or qualified.endswith("." + wanted)


_TEST_MODULE_PATTERNS = ("test_*.py", "*_test.py", "conftest.py")


def is_test_module(path: str) -> bool:
    """A test file (``test_*.py``, ``*_test.py``, ``conftest.py``), by its path or ``pkg/mod.py`` form.
    The file's own name decides: ``test_data/loader.py`` is no test for living in such a folder."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(name, pattern) for pattern in _TEST_MODULE_PATTERNS)


def names_no_device_data(leaf: str) -> bool:
    """A ``*_gpu`` / ``*_cuda`` / ``*_dev`` name that holds no data on a device: a quantity per
    device or of devices (``max_tokens_per_gpu``, ``num_gpu``), a flag (``is_cuda``, ``use_gpu``,
    ``inputs_on_cuda``) or a standard deviation (``noise_std_dev``). ``num_tokens_gpu`` stays a
    device tensor: the count lives on the GPU."""
    stem = leaf.rsplit("_", 1)[0]
    if stem.endswith("_per") or stem in ("per", "num", "n"):
        return True
    words = leaf.strip("_").split("_")
    deviation = stem in ("st", "std") or stem.endswith(("_st", "_std"))
    return words[0] in _FLAG_WORDS or "on" in words[:-1] or deviation and leaf.endswith("_dev")


# First words of boolean names: ``is_cuda = query.is_cuda`` is a flag, not a tensor on the device.
_FLAG_WORDS = frozenset(
    (
        "is", "use", "uses", "using", "has", "have", "with", "enable", "enabled", "require", "requires",
        "allow", "should", "need", "needs", "keep", "force", "include", "run", "do", "can", "no", "not",
        "multi", "single", "to", "supports", "support", "skip", "only", "prefer", "want", "check",
    )
)
