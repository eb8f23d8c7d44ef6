"""Settings: ``[tool.syncllint]`` in pyproject.toml (or ``syncllint.toml``), loaded once per run."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from syncllint.diagnostics import Confidence

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]


class ConfigError(Exception):
    """A bad setting: reported as one line, exit code 2."""


DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints", ".mypy_cache",
    ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache", ".svn", ".tox", ".venv",
    ".vscode", "__pypackages__", "_build", "buck-out", "build", "dist", "node_modules",
    "site-packages", "venv", ".syncllint_cache",
)
DEFAULT_HOT_PATHS = ("forward", "__call__", "*step*", "sample*", "*_sample*", "decode*", "*_decode*", "execute*", "*_execute*")

# CPU backends, host KV pools, and processors of user input (images, audio, text) before the
# model sees it. A processor's post-processing reads model outputs on the device: see
# ``output-functions``.
DEFAULT_HOST_MODULES = (
    "*/cpu/*", "cpu_*.py", "*/cpu_*.py", "*_cpu.py", "*_cpu_*.py", "*/cpu.py", "*/pool_host/*", "*/mlx/*",
    "*amx*.py",  # Intel AMX backends (vLLM ``amx_mla.py``, sglang ``intel_amx_backend.py``) run on the CPU
    "*/image_processing_*.py", "image_processing_*.py", "*/video_processing_*.py", "video_processing_*.py",
    "*/feature_extraction_*.py", "feature_extraction_*.py", "*/processing_*.py", "processing_*.py",
    "*/transformers_utils/processors/*",  # vLLM's own HF-style input processors
    # Modules named for preprocessing user input (``preprocess_utils.py``, ``encoder_preprocessing.py``,
    # ``preprocessor.py``); not a kernel that preprocesses activations (``mla_preprocess.py``).
    "*preprocessing*.py", "*preprocessor*.py", "*/preprocess.py", "preprocess.py", "*preprocess_utils*.py",
    # vLLM's API front end and its output objects: request outputs, already copied to the host.
    # (Forks keep vLLM's layout under another package name.)
    "*/entrypoints/*", "*vllm/outputs.py",
    # vLLM's multimodal input containers (processor outputs, compared and hashed before batching
    # moves them) and the frontend's hasher of request media.
    "*/multimodal/inputs.py", "*/multimodal/hasher.py",
    # Data-pipeline transforms (torchvision's ``transforms``, a project's ``data/transforms/``): run
    # on the CPU in DataLoader workers on decoded images, boxes and labels.
    "*/transforms/*",
    # Data samplers (``torch.utils.data.Sampler`` subclasses, replay-buffer and graph neighbour
    # samplers) pick indices on the CPU for a loader; token samplers live in ``sample/`` or
    # ``*_sampler.py`` modules, not in these folders.
    "*/sampler/*", "*/samplers/*",
    # A module named for a dataset: its helpers trim, pad and split samples in DataLoader workers.
    "*/dataset.py", "dataset.py",
)
# Where vLLM and sglang build models: their loaders construct every layer under ``with
# torch.device(target)``, so a factory in an ``nn.Module``'s ``__init__`` builds on the accelerator.
DEFAULT_MODEL_INIT_MODULES = (
    "*/model_executor/models/*", "*/model_executor/layers/*", "*vllm/models/*", "*/srt/models/*", "*/srt/layers/*",
)
# Functions of a host module that take model outputs (and the module functions they call):
# the host-module assumption does not hold there.
# Hooks that run on the host with processor data: vLLM's multimodal processor and M-RoPE hooks,
# sglang's multimodal processors. Their tensors of unknown device are host tensors.
DEFAULT_HOST_FUNCTIONS = (
    "get_mrope_input_positions", "_get_prompt_updates", "_call_hf_processor", "_get_mm_fields_config",
    "get_replacement*", "get_dummy_*", "_get_dummy_*", "process_mm_data_async", "compute_mrope_positions",
    # A DataLoader's collate function batches what the dataset gives, in the loader, on the host.
    "*collate*", "*_collator",
)
DEFAULT_OUTPUT_FUNCTIONS = ("post_process*", "postprocess*", "_post_process*", "*_postprocess*", "batch_decode", "decode")

PRESETS: dict[str, dict[str, Any]] = {
    "vllm": {
        "allowed-contexts": ["vllm.utils.gpu_sync_debug.gpu_sync_allowed", "gpu_sync_allowed"],
        "host-suffixes": ["_cpu", "_np", "_host"],
        "h2d-helper": "vllm.utils.torch_utils:async_tensor_h2d",
    },
}


@dataclass(frozen=True)
class Settings:
    """Everything a run needs; hashable, so it keys the cache and travels to worker processes."""

    select: tuple[str, ...] | None = None  # None: the rules that are on by default
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    respect_gitignore: bool = True
    allowed_contexts: tuple[str, ...] = ("gpu_sync_allowed",)
    host_suffixes: tuple[str, ...] = ("_cpu", "_np", "_host")
    device_suffixes: tuple[str, ...] = ("_gpu", "_cuda", "_dev")
    min_confidence: Confidence = Confidence.MEDIUM
    hot_path_functions: tuple[str, ...] = DEFAULT_HOT_PATHS
    # Paths of CPU-backend code, where a tensor of unknown device is a host tensor.
    host_modules: tuple[str, ...] = DEFAULT_HOST_MODULES
    model_init_modules: tuple[str, ...] = DEFAULT_MODEL_INIT_MODULES
    output_functions: tuple[str, ...] = DEFAULT_OUTPUT_FUNCTIONS
    host_functions: tuple[str, ...] = DEFAULT_HOST_FUNCTIONS
    # Names that hold host data by the project's convention: vLLM's model runner passes
    # ``is_multimodal`` (its ``is_mm_embed``) to the models as a pinned CPU mask.
    host_names: tuple[str, ...] = ("is_multimodal",)
    # The same, for modules that import a given framework: in vLLM and sglang the multimodal grid
    # metadata stays on the host (vLLM registers it ``keep_on_cpu=True``; sglang's processors build
    # it on the CPU), while in transformers it is a model input on the device.
    framework_host_names: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("vllm", ("image_grid_thw", "video_grid_thw", "grid_thw", "grid_thws")),
        ("sglang", ("image_grid_thw", "video_grid_thw", "grid_thw", "grid_thws")),
        # mmengine hands its hooks, steps and metrics' ``process`` the loader's batch as it came
        # (``data_batch``); the model's data preprocessor moves a copy to the device.
        ("mmengine", ("data_batch",)),
    )
    # Field names the project keeps on the host (vLLM ``keep_on_cpu=True`` registrations found near
    # the linted files by the runner); not a configuration key.
    host_keys: tuple[str, ...] = ()
    preset: str | None = None
    h2d_helper: str | None = None
    # Where the settings came from; relative patterns resolve against it.
    project_root: str = field(default=".", compare=False)
    config_file: str | None = field(default=None, compare=False)


_LIST_KEYS = {
    "select": "select",
    "extend-select": "extend_select",
    "ignore": "ignore",
    "exclude": "exclude",
    "extend-exclude": "extend_exclude",
    "allowed-contexts": "allowed_contexts",
    "host-suffixes": "host_suffixes",
    "device-suffixes": "device_suffixes",
    "hot-path-functions": "hot_path_functions",
    "host-modules": "host_modules",
    "model-init-modules": "model_init_modules",
    "output-functions": "output_functions",
    "host-functions": "host_functions",
    "host-names": "host_names",
}
_KNOWN_KEYS = set(_LIST_KEYS) | {
    "per-file-ignores", "respect-gitignore", "min-confidence", "preset", "h2d-helper",
}


def _string_list(key: str, value: object, source: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{source}: `{key}` must be a list of strings, got {value!r}")
    return tuple(value)


def settings_from_mapping(table: Mapping[str, object], source: str, base: Settings | None = None) -> Settings:
    """Validate one ``[tool.syncllint]`` table and lay it over ``base``."""
    settings = base or Settings()
    unknown = sorted(set(table) - _KNOWN_KEYS)
    if unknown:
        raise ConfigError(
            f"{source}: unknown key `{unknown[0]}` in [tool.syncllint] (known: {', '.join(sorted(_KNOWN_KEYS))})"
        )
    preset = table.get("preset")
    if preset is not None:
        if not isinstance(preset, str) or preset not in PRESETS:
            raise ConfigError(f"{source}: `preset` must be one of {sorted(PRESETS)}, got {preset!r}")
        settings = settings_from_mapping(PRESETS[preset], f"preset {preset}", settings)
        settings = replace(settings, preset=preset)
    changes: dict[str, Any] = {}
    for key, attr in _LIST_KEYS.items():
        if key in table:
            changes[attr] = _string_list(key, table[key], source)
    if "per-file-ignores" in table:
        raw = table["per-file-ignores"]
        if not isinstance(raw, dict):
            raise ConfigError(f"{source}: `per-file-ignores` must be a table of pattern = [codes]")
        changes["per_file_ignores"] = tuple(
            (pattern, _string_list(f"per-file-ignores.{pattern}", codes, source)) for pattern, codes in raw.items()
        )
    if "respect-gitignore" in table:
        if not isinstance(table["respect-gitignore"], bool):
            raise ConfigError(f"{source}: `respect-gitignore` must be true or false")
        changes["respect_gitignore"] = table["respect-gitignore"]
    if "min-confidence" in table:
        value = table["min-confidence"]
        try:
            changes["min_confidence"] = Confidence.parse(str(value)) if isinstance(value, str) else None
        except ValueError as err:
            raise ConfigError(f"{source}: `min-confidence`: {err}") from None
        if changes["min_confidence"] is None:
            raise ConfigError(f"{source}: `min-confidence` must be a string (low, medium, high)")
    if "h2d-helper" in table:
        helper = table["h2d-helper"]
        if not isinstance(helper, str) or ":" not in helper:
            raise ConfigError(f"{source}: `h2d-helper` must look like 'package.module:function', got {helper!r}")
        changes["h2d_helper"] = helper
    settings = replace(settings, **changes)
    _validate_selectors(settings, source)
    return settings


def _validate_selectors(settings: Settings, source: str) -> None:
    groups = [settings.select or (), settings.extend_select, settings.ignore]
    groups.extend(codes for _, codes in settings.per_file_ignores)
    for group in groups:
        for selector in group:
            # Imported here: the rules pull in libcst, which a run answered from the cache never needs.
            from syncllint.checks import is_valid_selector

            if not is_valid_selector(selector):
                raise ConfigError(f"{source}: unknown rule selector `{selector}`")


def find_config(start: Path) -> Path | None:
    """The nearest ``syncllint.toml``, or ``pyproject.toml`` with a [tool.syncllint] table."""
    directory = start if start.is_dir() else start.parent
    for folder in (directory, *directory.parents):
        own = folder / "syncllint.toml"
        if own.is_file():
            return own
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file():
            try:
                data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                continue
            if isinstance(data.get("tool"), dict) and "syncllint" in data["tool"]:
                return pyproject
    return None


def load_config_file(path: Path) -> Settings:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: cannot read config file: {err}") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: invalid TOML: {err}") from None
    if path.name == "syncllint.toml":
        table = data.get("tool", {}).get("syncllint", data) if "tool" in data else data
    else:
        table = data.get("tool", {}).get("syncllint", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.syncllint] must be a table")
    settings = settings_from_mapping(table, str(path))
    return replace(settings, project_root=str(path.parent.resolve()), config_file=str(path))


def resolve_settings(config: Path | None, isolated: bool, search_from: Path) -> Settings:
    if isolated:
        return replace(Settings(), project_root=str(Path.cwd()))
    path = config or find_config(search_from.resolve())
    if path is None:
        return replace(Settings(), project_root=str(Path.cwd()))
    return load_config_file(path)


def override(settings: Settings, **changes: Any) -> Settings:
    """Apply command-line options on top of file settings (None means not given)."""
    given = {k: v for k, v in changes.items() if v is not None}
    valid = {f.name for f in fields(Settings)}
    assert set(given) <= valid, set(given) - valid
    updated = replace(settings, **given)
    _validate_selectors(updated, "command line")
    return updated
