"""Walk the measured idioms of the implicit-conversion, numpy, wait and race families: every idiom
measured as syncing is flagged, every idiom measured as not syncing is not.

Sources (H200, torch 2.11): ``benchmarks/probes/conversions_truth.h200.torch2.11.json`` (this
repository's probe) and the rows of ``shared/ground-truth/gpu_sync_truth.h200.torch2.11.json``
quoted below. "Syncs" means torch's debug mode warned or the host waited behind a 100 ms kernel
(``torch.cuda.synchronize()`` and ``Event.synchronize()`` wait without a debug-mode warning).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from syncllint.diagnostics import Confidence
from tests.conftest import lint

PROBE = Path(__file__).resolve().parent.parent / "benchmarks" / "probes" / "conversions_truth.h200.torch2.11.json"
SETUP = (
    "import io, logging, math\n"
    "import numpy as np\n"
    "import torch\n"
    "x = torch.randn(1024, device='cuda')\n"
    "s = torch.tensor(7, device='cuda')\n"
    "sf = torch.tensor(0.5, device='cuda')\n"
    "lst = list(range(64))\n"
    "pinned = torch.empty(1024, pin_memory=True)\n"
    "out = io.StringIO()\n"
    "log_on = logging.getLogger('probe.on')\n"
    "log_off = logging.getLogger('probe.off')\n"
)
OUR_FAMILIES = ("SYNC1", "SYNC5", "SYNC7", "SYNC8")

# gpu_sync_truth rows of these families (name, code, syncs in debug mode, host ms behind 100 ms).
GROUND_TRUTH = [
    ("int()", "int(s)", 1, 101.1),
    ("float()", "float(s)", 1, 101.1),
    ("bool()", "bool(s > 0)", 1, 101.1),
    ("if_tensor", "1 if (x > 100).any() else 0", 1, 101.12),
    ("assert_all", "None if bool((x < 100).all()) else None", 1, 101.11),
    ("str()", "str(x[:4])", 14, 102.0),
    ("len()", "len(x)", 0, 0.01),
    ("shape", "x.shape[0]", 0, 0.01),
    ("iterate", "[t for t in x[:4]]", 0, 0.03),
    ("index_0d_tensor", "x[s]", 1, 101.16),
    ("range_tensor", "list(range(s))", 1, 101.12),
    ("builtin_max", "max(x[:4])", 3, 101.15),
    ("builtin_sum", "sum(x[:4])", 0, 0.06),
    ("sorted_tensor", "sorted(x[:4])", 5, 101.16),
    ("slice_by_tensor", "x[:s]", 1, 101.1),
    ("tensor_compare_scalar", "x == 3", 0, 0.03),
    ("logical_any_no_bool", "(x > 0).any()", 0, 0.04),
    ("max_reduce", "x.max()", 0, 0.02),
    ("scalar_tensor_arith", "x * s", 0, 0.03),
    ("cuda_synchronize", "torch.cuda.synchronize()", 0, 101.07),
    ("stream_synchronize", "torch.cuda.current_stream().synchronize()", 1, 101.07),
    ("event_synchronize", "e = torch.cuda.Event()\ne.record()\ne.synchronize()", 0, 101.09),
    ("stream_query", "torch.cuda.current_stream().query()", 0, 0.02),
    ("to_cpu_nonblocking", "x.to('cpu', non_blocking=True)", 0, 0.03),
    ("copy_into_pinned_from_cuda_nb", "torch.empty(1024, pin_memory=True).copy_(x, non_blocking=True)", 0, 0.06),
]

# Measured rows the linter cannot follow from the source alone, and why.
EXCEPTIONS = {
    "logging_disabled_args": "whether a logger level is enabled is configuration, not code",
    "np_float32_0d": "a TypeError on a GPU, not a sync; np.float32 is not a tensor conversion we model",
    "np_asarray_list_of_0d": "a TypeError on a GPU: a list of 0-d tensors is not followed into numpy",
    "builtin_round": "a TypeError (Tensor has no __round__), not a sync",
}
# Rows that raise TypeError on a GPU and are still reported (SYNC104: the fix is a blocking copy).
CRASHES_REPORTED = {"np_asarray_device", "np_array_device", "numpy_device"}


def _rows() -> list[tuple[str, str, bool]]:
    rows = [(name, code, syncs > 0 or blocked > 50) for name, code, syncs, blocked in GROUND_TRUTH]
    for row in json.loads(PROBE.read_text())["rows"]:
        if row["name"] in EXCEPTIONS:
            continue
        if "error" in row:
            assert row["name"] in CRASHES_REPORTED, row
            rows.append((row["name"], row["code"], True))
            continue
        rows.append((row["name"], row["code"], row["syncs"] > 0 or row["blocked_ms"] > 50))
    return rows


def _our_codes(code: str) -> list[str]:
    found = lint(SETUP + code + "\n", min_confidence=Confidence.MEDIUM)
    return [d.code for d in found if d.start.row > SETUP.count("\n") and d.code.startswith(OUR_FAMILIES)]


@pytest.mark.parametrize(("name", "code", "syncs"), _rows(), ids=[r[0] for r in _rows()])
def test_measured_idiom(name: str, code: str, syncs: bool) -> None:
    found = _our_codes(code)
    if syncs:
        assert found, f"{name}: measured as syncing, not flagged"
    else:
        assert found == [], f"{name}: measured as not syncing, flagged {found}"


def test_exceptions_are_still_measured_rows() -> None:
    names = {row["name"] for row in json.loads(PROBE.read_text())["rows"]}
    assert set(EXCEPTIONS) <= names
