"""What names say about places: suffixes (``_cpu``, ``_gpu``), mirrors, fields kept on the host.

A mixin of the device inference; its answers count only where the code shows nothing better
(an unknown value), or, for explicit suffixes, over a vague one (``x_cpu: torch.Tensor``).
"""

from __future__ import annotations

import libcst as cst

from syncllint.analysis.conventions import names_no_device_data
from syncllint.analysis.values import ASSUMED_TENSOR, HOST_TENSOR, NUMPY, Place, Value

# A device tensor by name only: ``x_gpu.item()`` is a device read, but ``if per_gpu:`` may test an int.
SUFFIX_DEVICE_TENSOR = Value(Place.DEVICE, assumed=True)


class NamingConventions:
    """Mixin of DeviceInference: the configured suffixes and the module's mirrors and kept fields."""

    _host_suffixes: tuple[str, ...]
    _device_suffixes: tuple[str, ...]
    _mirrored: frozenset[str]
    _device_mirrored: frozenset[str]
    _host_keys: frozenset[str]
    _host_attributes: frozenset[str]

    def _suffix_value(self, name: str, attribute: bool = False, conventions_only: bool = False) -> Value | None:
        leaf = name.rsplit(".", 1)[-1]
        if leaf.endswith(self._host_suffixes):
            return NUMPY if leaf.endswith("_np") else HOST_TENSOR
        if "_cpu_" in leaf and "_cpu" in self._host_suffixes:
            return HOST_TENSOR  # ``seq_lens_cpu_upper_bound``, ``token_ids_cpu_tensor``
        # ``image_size`` (a parameter taking one of ``image_sizes``) is kept on the host too.
        kept = leaf in self._host_keys or leaf + "s" in self._host_keys or self._ends_a_host_key(leaf)
        if kept and not conventions_only or leaf.startswith(("host_", "cpu_")) and "_cpu" in self._host_suffixes:
            return HOST_TENSOR  # a field kept on the host; ``host_indices``
        if attribute and not conventions_only and leaf in self._host_attributes:
            return HOST_TENSOR  # ``input_batch.num_tokens_no_spec``: ``np.zeros`` wherever it is set
        if leaf.endswith(self._device_suffixes) and not names_no_device_data(leaf):
            # By name only: ``x_gpu.item()`` is a device read, but ``if per_gpu:`` may test an int.
            return SUFFIX_DEVICE_TENSOR
        # Paired buffers expose their halves as attributes: ``buf.cpu`` / ``buf.np`` / ``buf.gpu``.
        if attribute and "_" + leaf in self._host_suffixes:
            return NUMPY if leaf == "np" else HOST_TENSOR
        if attribute and "_" + leaf in self._device_suffixes + ("_gpu",):
            return SUFFIX_DEVICE_TENSOR
        if conventions_only:
            return None
        if leaf in self._mirrored:
            # ``seq_lens`` next to ``seq_lens_cpu``: by convention a tensor on the device, but only a
            # convention (``case.seq_lens`` may be a list): enough for ``.tolist()``, not to clear a copy.
            return ASSUMED_TENSOR
        if leaf in self._device_mirrored:
            return HOST_TENSOR  # ``timesteps`` next to ``timesteps_device``: the host half
        return None

    def _ends_a_host_key(self, leaf: str) -> bool:
        """``grid_thw`` when ``image_grid_thw`` and ``video_grid_thw`` are kept on the host; one item's
        ``image_spatial_crop`` when ``images_spatial_crop`` is. A model's own inputs are never such a
        part: ``video_input_ids`` kept on the host leaves ``input_ids`` on the device."""
        if leaf in _MODEL_INPUTS:
            return False
        if "_" in leaf.strip("_") and any(_singular(key) == leaf for key in self._host_keys):
            return True
        tail = "_" + leaf
        # Compound names only: ``grid_thw``, not ``mask`` or ``lengths`` (``feature_attention_mask``).
        return "_" in leaf.strip("_") and any(key.endswith(tail) for key in self._host_keys)

    def host_key(self, index: cst.BaseSlice | cst.BaseExpression | None) -> bool:
        """A string key naming data kept on the host (``"image_sizes"`` registered ``keep_on_cpu=True``)."""
        if isinstance(index, cst.Index):
            index = index.value
        return isinstance(index, cst.SimpleString) and index.value.strip("\"'") in self._host_keys


# What every model's forward takes on the device, whatever a processor keeps beside it.
_MODEL_INPUTS = frozenset(
    ("input_ids", "attention_mask", "position_ids", "positions", "inputs_embeds", "token_type_ids", "pixel_values")
)


def _singular(key: str) -> str:
    """``images_spatial_crop`` -> ``image_spatial_crop``: each plural word of a name made singular."""
    return "_".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in key.split("_"))


def names_a_class(expr: cst.BaseExpression) -> bool:
    """``PerTensorScaleParameter`` / ``nn.Linear``: a CamelCase name (constants are ALL_CAPS)."""
    leaf = expr.attr.value if isinstance(expr, cst.Attribute) else expr.value if isinstance(expr, cst.Name) else ""
    if leaf in ("True", "False", "None"):
        return False  # ``mask == False``: an elementwise comparison of the tensor
    return leaf[:1].isupper() and any(c.islower() for c in leaf) and "_" not in leaf
