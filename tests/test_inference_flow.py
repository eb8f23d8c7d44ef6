"""Where values flow: nested arms, a caller's replaced parameters, host copies of state dicts."""

from __future__ import annotations

from syncllint.diagnostics import Confidence
from tests.conftest import lint


def rows(source: str, code: str) -> list[int]:
    return [d.start.row for d in lint(source) if d.code == code and d.confidence is not Confidence.LOW]


NESTED_MOVE = """\
import torch

def statistics(key, data):
    data = torch.from_numpy(data)
    if "per_species" in key:
        if "linear" in key:
            data = data.cuda()
        else:
            pass
    else:
        return torch.std(data).item()
    return data.sum().item()
"""


def test_a_move_in_a_nested_block_of_one_arm_stays_out_of_the_other_arm() -> None:
    # Line 11 is the ``else`` of an ``if`` whose arm moves ``data`` to the device inside a nested
    # ``if``: it still reads the host tensor. After the statement the moved value may hold, as flow
    # order has it.
    assert rows(NESTED_MOVE, "SYNC101") == [12]


REPLACED_PARAMETER = """\
import numpy as np
import torch
from torch import nn

class Scaling(nn.Module):
    def __init__(self, atoms, numbers=None, counts=None, device="cuda"):
        super().__init__()
        if numbers is None:
            numbers = [atom.numbers for atom in atoms]
        numbers = torch.from_numpy(np.concatenate(numbers)).squeeze(-1).long()
        if counts is None:
            counts = [len(atom) for atom in atoms]
        self.register_buffer("shift", torch.tensor(self.statistics(numbers, counts)))
        self.to(device)

    def statistics(self, numbers, counts):
        return numbers.max().item() + counts.max().item()
"""


def test_a_parameter_the_caller_replaces_before_the_call_holds_the_replacement() -> None:
    # ``numbers`` is rebuilt from numpy on every path to the call: the method gets a host tensor.
    # ``counts`` may still be the caller's own argument, of unknown place.
    assert rows(REPLACED_PARAMETER, "SYNC101") == [17]
    line = REPLACED_PARAMETER.splitlines()[16]
    found = [d for d in lint(REPLACED_PARAMETER) if d.code == "SYNC101" and d.confidence is not Confidence.LOW]
    assert [d.start.column for d in found] == [line.index("counts.max()") + 1]


GATHERED_STATE = """\
import torch
import torch.distributed as dist

def save(model, ws):
    state = model.state_dict()
    full = [None for _ in range(ws)]
    for key, value in state.items():
        state[key] = value.detach().cpu()
    dist.all_gather_object(full, state)
    return {key: torch.cat([full[i][key].cpu() for i in range(ws)]) for key in full[0]}

def save_unmoved(model, ws):
    state = model.state_dict()
    full = [None for _ in range(ws)]
    for key, value in state.items():
        print(key, value.shape)
    dist.all_gather_object(full, state)
    return {key: torch.cat([full[i][key].cpu() for i in range(ws)]) for key in full[0]}
"""


def test_a_state_dict_copied_to_the_host_gathers_host_tensors() -> None:
    # Line 8's copy is the sync; line 10 copies host tensors; the unmoved dict's copies may be device ones.
    found = rows(GATHERED_STATE, "SYNC103")
    assert 8 in found and 10 not in found
    assert 18 in found


LEAVING_ARM = """\
import torch

def statistics(key, data):
    data = torch.from_numpy(data)
    if "linear" in key:
        data = data.cuda()
        return data.sum()
    return torch.mean(data).item()

def per_row(keys):
    rows = torch.zeros(3, device="cuda")
    for key in keys:
        if key:
            rows = torch.from_numpy(key)
            continue
        total = rows.sum().item()
"""


def test_what_an_arm_that_leaves_binds_does_not_reach_the_code_after_it() -> None:
    # Line 8 runs only where the arm did not: ``data`` is the host tensor from line 4. Line 16 runs
    # where the ``continue`` arm did not rebind ``rows``: a device tensor (at least at first).
    assert rows(LEAVING_ARM, "SYNC101") == [16]


MATCHED = """\
import torch

def pick(kind, data):
    data = torch.from_numpy(data)
    if kind:
        match kind:
            case "device":
                data = data.cuda()
            case _:
                pass
    else:
        return data.sum().item()
"""


def test_a_match_statement_in_an_arm_is_read_through() -> None:
    # Its cases are blocks of the arm like any other: the move in one stays out of the ``else``.
    assert rows(MATCHED, "SYNC101") == []


TOP_SCORES = """\
import torch

class Interpreter:
    def interpret(self, instances, k):
        for instance in instances:
            scores = torch.zeros(len(self.train))
            top_scores, top_indices = torch.topk(scores, k)
            device_scores, _ = torch.topk(self.model(instance), k)
            self._gather(top_scores, top_indices)
            self._gather_device(device_scores)

    def _gather(self, scores, indices):
        return [score.item() for score in scores]

    def _gather_device(self, scores):
        return [score.item() for score in scores]
"""


def test_a_torch_op_on_host_data_passes_host_data_to_a_helper() -> None:
    # ``torch.topk`` of a host tensor is a host tensor: ``_gather`` reads host scores. The model's
    # output may be anywhere, so ``_gather_device``'s reads stay.
    assert rows(TOP_SCORES, "SYNC101") == [16]


SCORES_BY_KIND = """\
import copy

def process(data_samples):
    results = []
    for data_sample in copy.deepcopy(data_samples):
        pred = data_sample["pred_score"]
        if isinstance(pred, dict):
            for item_name, score in pred.items():
                pred[item_name] = score.cpu().numpy()
        else:
            pred = pred.cpu().numpy()
        results.append(pred)
    return results
"""


def test_a_dict_copied_to_the_host_in_one_arm_is_not_the_other_arm_s_tensor() -> None:
    # The ``else`` arm starts from ``pred`` as it was before the ``if``: a value of unknown place,
    # not a tensor (restoring it must not read it as an opaque rebinding of the arm's host dict).
    assert [d.start.row for d in lint(SCORES_BY_KIND) if d.code == "SYNC103"] == [9, 11]


FIELD_FALLBACK = """\
import torch

class Bridge:
    def __init__(self, cfg, model):
        self.cfg = cfg
        try:
            self.cfg.device = str(next(model.parameters()).device)
        except StopIteration:
            self.cfg.device = "cpu"
        self.home = "cpu"

    def generate(self, logits):
        tokens = torch.argmax(logits, dim=-1).to(self.cfg.device)
        return tokens, logits.to(self.home)
"""


def test_a_field_a_handler_sets_to_the_cpu_is_no_host_device_after_the_try() -> None:
    # TransformerLens falls back to ``"cpu"`` when the model has no parameters: after the ``try``
    # the field holds the body's device or the handler's, as a local does. A field that is ``"cpu"``
    # on every path still names the host (line 14).
    assert rows(FIELD_FALLBACK, "SYNC103") == [14]


GROWN_ON_HOST = """\
import torch

def backtrack(emission, k):
    return emission[k].exp().item()

def align(model, waveform, extra):
    emissions = model(waveform.to("cuda"))
    emission = emissions[0].cpu()
    if extra:
        column = emission[:, 1:].max(dim=1).values
        emission = torch.cat([emission, column.unsqueeze(1)], dim=1)
    return backtrack(emission, 3)

def scores(model, waveform, extra):
    emission = model(waveform.to("cuda"))[0]
    if extra:
        emission = torch.cat([emission, emission[:, :1]], dim=1)
    return backtrack(emission, 3)
"""


def test_a_host_tensor_grown_with_its_own_rows_stays_on_the_host_for_a_callee() -> None:
    # ``emission = torch.cat([emission, ...])`` reads the name's earlier value, a host copy: the
    # helper gets host data from ``align``. ``scores`` passes the model's output, so the helper
    # still reads device data on one call and its ``.item()`` is reported.
    assert rows(GROWN_ON_HOST, "SYNC101") == [4]
    assert rows(GROWN_ON_HOST.split("def scores")[0], "SYNC101") == []


MASKED_ON_HOST = """\
import torch
from torch import nn

class Flow(nn.Module):
    def __init__(self, features, adjacency):
        super().__init__()
        adjacency = torch.as_tensor(adjacency, dtype=bool)
        adjacency = adjacency * ~torch.eye(features, dtype=bool)
        self.passes = self._diameter(adjacency)

    @staticmethod
    def _diameter(adjacency):
        return adjacency.sum(dim=1).max().item()
"""


def test_a_product_with_a_negated_host_factory_is_host_data_for_a_callee() -> None:
    # ``adjacency * ~torch.eye(n)``: a full host matrix in the product puts the result on the host
    # (a device operand would raise), so the helper's ``.item()`` reads host memory.
    assert rows(MASKED_ON_HOST, "SYNC101") == []
    # Beside a mask of unknown place the product says nothing: the helper's ``.item()`` stays.
    assert rows(MASKED_ON_HOST.replace("~torch.eye(features, dtype=bool)", "~self.mask"), "SYNC101") == [13]


INDEX_OR_LENGTH = """\
import torch

def trim(input_ids: torch.Tensor, pad: torch.Tensor):
    bsz, seq_len = input_ids.shape
    start_ids = (input_ids == -1).nonzero()[:, 1]
    if len(start_ids) > 0:
        first = start_ids.max()
    else:
        first = seq_len
    last = seq_len if pad is None else pad.shape[0]
    return input_ids[..., :first], input_ids[..., :last]
"""


def test_a_bound_that_is_a_device_tensor_in_one_arm_and_an_int_in_the_other_may_be_either() -> None:
    # On the path that found a start, ``first`` is a 0-d device tensor: slicing by it reads it (11);
    # ``last`` is an int on both paths.
    assert rows(INDEX_OR_LENGTH, "SYNC504") == [11]
