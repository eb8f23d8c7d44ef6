"""What the project index reads from a function's returns (``project/results.py``): results of
helpers that call helpers, tuples of results, names assigned on several paths, and helpers whose
result keeps the place of a parameter."""

from __future__ import annotations

import textwrap

from syncllint.project.records import SummaryOptions
from syncllint.project.summary import summarize
from tests.conftest import lint

PAYLOAD = """\
import numpy as np
import torch


def load_rows(action):
    if isinstance(action, torch.Tensor):
        rows = action.detach().to(dtype=torch.float32, device="cpu")
    else:
        rows = torch.as_tensor(np.asarray(action, dtype=np.float32))
    if rows.ndim == 3:
        rows = rows.squeeze(0)
    return rows


def load_payload(action):
    if isinstance(action, dict):
        return load_rows(action["action"]), action["names"]
    return load_rows(action), None


def domain_ids_of(names, table):
    if names is None:
        return None
    ids = [table[name] for name in names]
    return torch.tensor(ids, dtype=torch.long)


def check_rows(rows: torch.Tensor, domain_ids, camera: int) -> None:
    if not torch.isfinite(rows).all():
        raise ValueError("non-finite")
    print(rows[domain_ids == camera])


def normalize_rows(rows: torch.Tensor, offset) -> torch.Tensor:
    rows = rows.to(dtype=torch.float32)
    return (rows - rows.new_tensor(offset)) / 2


def pad_rows(rows: torch.Tensor, width: int) -> torch.Tensor:
    padding = rows.new_zeros(rows.shape[0], width)
    return torch.cat([rows, padding], dim=-1)


def prepare(action, unified: bool, table):
    if action is None:
        return None, None
    rows, names = load_payload(action)
    domain_ids = None
    if unified:
        domain_ids = domain_ids_of(names, table)
        rows = rows.to(dtype=torch.float32)
        check_rows(rows, domain_ids, 3)
    else:
        rows = normalize_rows(rows, [0.0])
    return pad_rows(rows, 4), domain_ids


class Stage:
    def run(self, action, device):
        rows, domains = prepare(action, True, {})
        return rows.to("cpu"), domains.tolist()
"""


def _functions(source: str) -> dict[str, tuple[str | None, tuple[str | None, ...], str]]:
    summary = summarize(textwrap.dedent(source), "pkg.stage", False, SummaryOptions())
    assert summary is not None
    return {key: (f.returns, f.elements, f.follows) for key, f in summary.functions}


def test_results_follow_helpers_tuples_and_names_assigned_on_several_paths() -> None:
    functions = _functions(PAYLOAD)
    # Both paths of ``rows`` build host data, and ``rows.squeeze(0)`` keeps it there.
    assert functions["load_rows"][0] == "host"
    # A tuple of a host helper's result and something unknown: known element by element.
    assert functions["load_payload"] == (None, ("host", None), "")
    # ``torch.tensor`` of a Python list built in the function; ``return None`` says nothing.
    assert functions["domain_ids_of"][0] == "host"
    # Helpers whose result is on the device of their ``rows`` parameter, wherever that is.
    assert functions["normalize_rows"] == (None, (), "rows")
    assert functions["pad_rows"] == (None, (), "rows")
    # ``return None, None`` on an early exit; ``rows`` is the payload's host rows, updated in place.
    assert functions["prepare"][0] == "host"


def test_host_rows_reach_the_helpers_and_the_callers_of_the_chain() -> None:
    found = [(d.code, d.start.row) for d in lint(PAYLOAD)]
    # ``action.detach().to(device="cpu")`` may read a device tensor: the one sync left.
    assert found == [("SYNC103", 7)]


def test_a_device_path_among_the_assignments_says_nothing() -> None:
    source = PAYLOAD.replace(
        'rows = torch.as_tensor(np.asarray(action, dtype=np.float32))',
        'rows = torch.as_tensor(np.asarray(action, dtype=np.float32)).cuda()',
    )
    assert _functions(source)["load_rows"][0] is None
    found = {(d.code, d.start.row) for d in lint(source)}
    # The rows may now be on the device: the checks, the normalizer's upload and the caller's copy back.
    assert {("SYNC502", 29), ("SYNC201", 36), ("SYNC103", 61)} <= found


def test_a_helper_that_moves_its_parameter_does_not_keep_its_place() -> None:
    # ``rows = rows.cuda()`` is no update in place: the result is on the device, whatever came in.
    source = """\
import torch

def to_device(rows):
    rows = rows.cuda()
    return rows * 2

def keep(rows):
    rows = rows.float()
    return rows * 2
"""
    functions = _functions(source)
    assert functions["to_device"] == ("device", (), "")
    assert functions["keep"] == (None, (), "rows")


def test_the_argument_of_a_rebinding_call_is_the_value_before_it() -> None:
    source = """\
import torch

class Bank:
    @staticmethod
    def _prepare(latent):
        if latent.dim() != 3:
            raise ValueError("shape")
        return latent.detach().cpu()

    def save(self, latent):
        latent = self._prepare(latent)
        return latent
"""
    # ``latent = self._prepare(latent)`` passes the caller's latent, not the host copy it makes.
    assert [(d.code, d.start.row) for d in lint(source)] == [("SYNC103", 8)]


def test_a_call_of_a_helper_that_keeps_its_parameter_s_place_is_where_the_argument_is() -> None:
    source = """\
import torch

def pad_rows(rows, width):
    return torch.cat([rows, rows.new_zeros(rows.shape[0], width)], dim=-1)

def host_side(values):
    padded = pad_rows(torch.tensor(values), 2)
    return padded.tolist()

def device_side(values):
    padded = pad_rows(torch.tensor(values, device="cuda"), 2)
    return padded.tolist()
"""
    found = [(d.code, d.start.row, d.confidence.name) for d in lint(source)]
    assert ("SYNC102", 12, "HIGH") in found
    assert not [f for f in found if f[1] == 8]


ACCUMULATED = """\
import torch


class Predictor:
    def logits(self, data):
        prediction = None
        for params in self.parameters_list:
            if prediction is None:
                prediction = self.window(data).to("cpu")
            else:
                prediction += self.window(data).to("cpu")
        prediction /= len(self.parameters_list)
        return prediction

    def total(self, batches):
        loss = 0.0
        for batch in batches:
            loss += self.net(batch).sum()
        return loss

    def run(self, data, batches):
        probabilities = self.logits(data).cpu()
        return probabilities, self.total(batches).item()
"""


def test_an_update_in_place_keeps_the_place_a_number_start_does_not() -> None:
    functions = _functions(ACCUMULATED)
    # ``prediction += part`` adds into the host tensor the first pass made: still on the host.
    assert functions["Predictor.logits"][0] == "host"
    # ``loss = 0.0`` then ``loss += device_sum``: the number becomes whatever the sums are.
    assert functions["Predictor.total"][0] is None
    found = {(d.code, d.start.row) for d in lint(ACCUMULATED)}
    assert ("SYNC103", 22) not in found  # ``.cpu()`` of the host logits
    assert ("SYNC101", 23) in found  # ``.item()`` of the accumulated loss may still wait
