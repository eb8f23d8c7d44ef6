"""Every idiom of the measured ground truth is covered by the catalogue.

Walks ``shared/ground-truth`` (the H200 measurements, torch 2.11): ``gpu_sync_truth`` (debug-mode
sync count and a timing oracle per snippet) and ``sync_semantics`` (debug-mode verdict per case;
the snippets live in ``sync_semantics_probe.py``). ``tests/ground_truth_map.toml`` maps each idiom
to the rule that flags it or to ``no-sync``. Each idiom's code is linted after its probe's own
setup lines (so ``x``, ``mask``, ``g0``, ``cpu`` ... have the devices and dtypes they had on the
GPU): a syncing idiom must be flagged by its rule, a non-syncing one by no rule at all.

Every mapped code must be a registered rule: no row is skipped.
"""

from __future__ import annotations

import ast
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from syncllint.catalogue import load_catalogue
from syncllint.checks import all_rules
from syncllint.config import Settings
from syncllint.diagnostics import Confidence
from syncllint.engine import lint_source
from tests.probe_setup import GPU_PROBE_SETUP

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
# In CI the repository is cloned beside ``shared/``; in a worktree it sits one level deeper.
_CANDIDATES = (Path(__file__).resolve().parents[2] / "shared", REPO / "shared", REPO.parent / "shared")
SHARED = next((p for p in _CANDIDATES if (p / "ground-truth").is_dir()), _CANDIDATES[0])
TRUTH = SHARED / "ground-truth"
GPU_TRUTH = TRUTH / "gpu_sync_truth.h200.torch2.11.json"
SEMANTICS = TRUTH / "sync_semantics_torch2.11_h200.tsv"
SEMANTICS_PROBE = TRUTH / "sync_semantics_probe.py"
MAP = tomllib.loads((REPO / "tests" / "ground_truth_map.toml").read_text(encoding="utf-8"))

pytestmark = pytest.mark.skipif(
    not GPU_TRUTH.is_file(), reason=f"shared/ground-truth not found (looked in {', '.join(map(str, _CANDIDATES))})"
)

BLOCKED_MS = 50.0  # the timing oracle: ~100 ms means the host waited for the 100 ms kernel

_SEMANTICS_SETUP = """\
import numpy as np
import torch

dev = torch.device("cuda")
g = torch.arange(16, device=dev, dtype=torch.float32)
gi = torch.arange(16, device=dev, dtype=torch.int64)
idx = torch.tensor([1, 3, 5], device=dev)
g0 = torch.tensor(4, device=dev)
cpu = torch.arange(16, dtype=torch.float32)
cpu_pinned = cpu.pin_memory()
cpu_mask = cpu > 7
cpu_idx = torch.tensor([1, 2])
reps = torch.tensor([1, 2, 3], device=dev)
arr = np.arange(16)
stream = torch.cuda.Stream()
ev = torch.cuda.Event()
"""
ALL_ON = Settings(select=("ALL",), min_confidence=Confidence.MEDIUM)


@dataclass(frozen=True)
class Idiom:
    table: str  # "gpu_sync_truth" or "sync_semantics"
    name: str
    code: str | None  # None: the probe raised
    syncs: bool
    setup: str


@dataclass(frozen=True)
class Entry:
    codes: tuple[str, ...]  # () for "no-sync" / "error"
    verdict: str  # "sync", "no-sync" or "error"
    snippet: str | None
    timing: str | None
    race: bool
    allow: tuple[str, ...]


def _entry(raw: object) -> Entry:
    if isinstance(raw, (str, list)):
        raw = {"code": raw}
    assert isinstance(raw, dict), raw
    code = raw["code"]
    codes = tuple(code) if isinstance(code, list) else (code,)
    verdict = code if code in ("no-sync", "error") else "sync"
    return Entry(
        codes=() if verdict != "sync" else codes,
        verdict=verdict,
        snippet=raw.get("snippet"),
        timing=raw.get("timing"),
        race=bool(raw.get("race", False)),
        allow=tuple(raw.get("allow", ())),
    )


def _gpu_rows() -> dict[str, dict[str, Any]]:
    if not GPU_TRUTH.is_file():
        return {}
    return {row["name"]: row for row in json.loads(GPU_TRUTH.read_text(encoding="utf-8"))["rows"]}


def _semantics_codes() -> dict[str, str]:
    """Case name -> the lambda body of ``sync_semantics_probe.py``'s ``cases`` dict."""
    source = SEMANTICS_PROBE.read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "cases" for t in node.targets):
            assert isinstance(node.value, ast.Dict)
            found: dict[str, str] = {}
            for key, value in zip(node.value.keys, node.value.values):
                assert isinstance(key, ast.Constant) and isinstance(value, ast.Lambda)
                found[str(key.value)] = ast.get_source_segment(source, value.body) or ""
            return found
    raise AssertionError("no `cases = {...}` in sync_semantics_probe.py")


def load_idioms() -> list[Idiom]:
    if not GPU_TRUTH.is_file():
        return []
    idioms: list[Idiom] = []
    for name, row in _gpu_rows().items():
        if "error" in row:
            idioms.append(Idiom("gpu_sync_truth", name, None, False, GPU_PROBE_SETUP))
            continue
        syncs = int(row["syncs"]) > 0 or float(row["blocked_ms"]) > BLOCKED_MS
        idioms.append(Idiom("gpu_sync_truth", name, str(row["code"]), syncs, GPU_PROBE_SETUP))
    codes = _semantics_codes()
    for line in SEMANTICS.read_text(encoding="utf-8").splitlines():
        if line.startswith(("#", "case\t")) or not line.strip():
            continue
        name, verdict = line.split("\t")[:2]
        idioms.append(Idiom("sync_semantics", name, codes.get(name), verdict == "SYNC", _SEMANTICS_SETUP))
    return idioms


IDIOMS = load_idioms()
REGISTERED = {rule.code for rule in all_rules()}


def _snippet(idiom: Idiom, entry: Entry) -> tuple[str, int]:
    """The linted source and its first row of idiom code (findings above it are the setup's)."""
    body = entry.snippet if entry.snippet is not None else f"({idiom.code})"
    first_row = idiom.setup.count("\n") + 1
    return idiom.setup + body + "\n", first_row


def _findings(idiom: Idiom, entry: Entry) -> set[str]:
    source, first_row = _snippet(idiom, entry)
    result = lint_source(source, "ground_truth.py", ALL_ON)
    assert not any(d.code == "SYNC001" for d in result.diagnostics), f"{idiom.name}: snippet does not parse"
    return {d.code for d in result.diagnostics if d.start.row >= first_row}


def test_map_names_every_idiom_and_nothing_else() -> None:
    for table in ("gpu_sync_truth", "sync_semantics"):
        measured = {i.name for i in IDIOMS if i.table == table}
        mapped = set(MAP.get(table, {}))
        assert measured - mapped == set(), f"[{table}] idioms with no entry in ground_truth_map.toml"
        assert mapped - measured == set(), f"[{table}] entries for idioms the ground truth does not have"


def test_every_mapped_code_is_a_registered_rule() -> None:
    for table in ("gpu_sync_truth", "sync_semantics"):
        for name, raw in MAP[table].items():
            for code in _entry(raw).codes:
                assert code in REGISTERED, f"[{table}] {name}: unknown rule {code}"


def test_the_probes_cover_both_tables() -> None:
    assert len([i for i in IDIOMS if i.table == "gpu_sync_truth"]) >= 100
    assert len([i for i in IDIOMS if i.table == "sync_semantics"]) >= 100


@pytest.mark.parametrize("idiom", IDIOMS, ids=[f"{i.table}:{i.name}" for i in IDIOMS])
def test_idiom_is_covered(idiom: Idiom) -> None:
    entry = _entry(MAP[idiom.table][idiom.name])
    if idiom.code is None:
        assert entry.verdict == "error", f"{idiom.name}: the probe raised; map it to \"error\""
        return
    syncs = idiom.syncs
    if entry.timing is not None:
        blocked = float(_gpu_rows()[entry.timing]["blocked_ms"])
        assert blocked > BLOCKED_MS, f"{idiom.name}: {entry.timing} did not block the host ({blocked} ms)"
        syncs = True
    if entry.race:
        assert not syncs, f"{idiom.name}: marked as a race but measured as a sync"
        assert all(c.startswith("SYNC8") for c in entry.codes)
    else:
        assert (entry.verdict == "sync") == syncs, (
            f"{idiom.name}: measured {'sync' if syncs else 'no sync'}, mapped to {entry.verdict}"
        )
    found = _findings(idiom, entry)
    if entry.verdict == "no-sync":
        unexpected = found - set(entry.allow)
        assert not unexpected, f"must-not-flag idiom {idiom.name} ({idiom.code!r}) flagged by {sorted(unexpected)}"
        return
    for code in entry.codes:
        assert code in found, f"{idiom.name} ({idiom.code!r}) not flagged by {code}; found {sorted(found)}"
        page = load_catalogue().get(code)
        assert page is not None and page.of_kind("flag"), f"{code} has no page with a flag example"
