"""What a function does with a tensor, and the branches it takes, as evidence of where it lives."""

from __future__ import annotations

from syncllint.diagnostics import Confidence
from tests.conftest import lint


def found(source: str, code: str) -> list[tuple[int, Confidence]]:
    return [(d.start.row, d.confidence) for d in lint(source) if d.code == code]


def test_numpy_straight_on_a_tensor_shows_it_is_on_the_host_here_and_in_the_module_callers() -> None:
    source = """\
    import torch

    def _percentiles(x: torch.Tensor):
        return x.detach().float().numpy().ravel()

    def stats(x: torch.Tensor):
        return x.max().item(), _percentiles(x)

    def diff(a: torch.Tensor, b: torch.Tensor):
        raw = (a - b).abs()
        return raw.max().item(), _percentiles(raw), a.max().item()

    def checked(x: torch.Tensor):
        if x.device.type == "cpu":
            y = x.numpy()
        return x.max().item()

    def rebound(x: torch.Tensor):
        arr = x.numpy()
        x = load()
        return x.max().item()
    """
    # ``.numpy()`` raises for a CUDA tensor: x in stats and raw in diff are host tensors. Not ``a``
    # (only its difference reaches the helper), not under a device check, not a rebound name.
    assert [row for row, _ in found(source, "SYNC101")] == [11, 16, 21]


def test_an_asynchronous_upload_shows_a_host_tensor_and_a_download_does_not() -> None:
    source = """\
    import torch

    def plan(self, qo_indptr: torch.Tensor, out: torch.Tensor, w: torch.Tensor, device):
        self.indptr = qo_indptr.to(device, non_blocking=True)
        self.host = out.to("cpu", non_blocking=True)
        self.half = w.to(torch.float16, non_blocking=True)
        return int(qo_indptr.max()), int(out.max()), int(w.max())
    """
    # Only the upload shows a host tensor: not the download, not a cast.
    assert [row for row, _ in found(source, "SYNC501")] == [7, 7]


def test_the_else_of_an_if_that_moves_a_tensor_starts_from_the_tensor_before_the_if() -> None:
    source = """\
    import torch

    def build(lens, device, on_npu: bool):
        cu = torch.from_numpy(lens)
        if not on_npu:
            cu = cu.to(device, non_blocking=True)
        else:
            cu = cu.to("cpu")
        return cu

    def after(device, flag: bool):
        t = torch.zeros(4, device="cuda")
        if flag:
            t = t.cpu()
        else:
            n = t.tolist()
        return t.tolist()
    """
    # ``cu.to("cpu")`` of the numpy-backed tensor is a no-op; the device tensor's ``.tolist()`` in the
    # else arm is read from the tensor before the move; after the ``if``, flow order as before.
    assert found(source, "SYNC103") == [(14, Confidence.HIGH)]
    assert [row for row, _ in found(source, "SYNC102")] == [16]


def test_an_elif_starts_from_the_value_before_a_default_or_a_conversion_in_the_if_arm() -> None:
    source = """\
    import torch

    def counts(chunk_counts, n: int):
        chunk_counts = torch.ones(n, device="cuda")
        if chunk_counts is None:
            chunk_counts = [1] * n
        elif chunk_counts.numel() > 1:
            first = chunk_counts[0].item()
        return chunk_counts

    def indices(device_indices: torch.Tensor, layout: str):
        device_indices = device_indices.cuda()
        if layout == "layer_first":
            device_indices = device_indices.cpu()
            return device_indices
        elif layout == "page_first":
            return device_indices.cpu()
        return device_indices.tolist()
    """
    # The elif reads the device tensor, not the if arm's list (line 8) or its host copy (line 17).
    # After the statement flow order holds again: the if arm returned, so line 18 reads the device.
    assert [row for row, _ in found(source, "SYNC101")] == [8]
    assert [row for row, _ in found(source, "SYNC103")] == [14, 17]


def test_isinstance_list_of_host_data_keeps_its_items_on_the_host() -> None:
    source = """\
    import torch

    def parse(counts_cpu, lens):
        if isinstance(counts_cpu, list):
            return [c.item() for c in counts_cpu]
        if isinstance(lens, list):
            return [c.item() for c in lens]
    """
    # A list of host tensors stays host data; an unknown list says nothing more than before.
    assert [row for row, _ in found(source, "SYNC101")] == [7]


def test_a_branch_for_a_platform_without_cuda_reports_nothing_above_low() -> None:
    source = """\
    import torch

    def init(param: torch.Tensor):
        param = torch.empty(4, device="cuda")
        if current_platform.is_tpu():
            param.copy_(torch.rand(param.shape, device="cpu"))
        else:
            param.copy_(torch.rand(param.shape, device="cpu"))
    """
    # TPU tensors are lazy XLA ones: the copy there waits for no CUDA queue.
    assert found(source, "SYNC202") == [(6, Confidence.LOW), (8, Confidence.HIGH)]


def test_a_branch_for_an_xla_backend_reports_nothing_above_low() -> None:
    source = """\
    import torch

    class Metric:
        def compute(self, stats, kind):
            stats = torch.ones(3, device="cuda")
            if self._ddp_backend == "xla":
                gathered = stats.cpu()
            elif self._ddp_backend == "ddp":
                gathered = stats.cpu()
            if kind == DistributedType.TPU:
                total = stats.sum().item()
            if kind.type == "cuda":
                total = stats.sum().item()
    """
    # Catalyst's ``_ddp_backend == "xla"`` and Accelerate's ``DistributedType.TPU`` branches run
    # on lazy XLA tensors; the DDP and CUDA branches beside them still wait.
    assert found(source, "SYNC103") == [(7, Confidence.LOW), (9, Confidence.HIGH)]
    assert found(source, "SYNC101") == [(11, Confidence.LOW), (13, Confidence.HIGH)]


def test_a_where_operand_built_on_the_device_variable_sits_beside_the_others() -> None:
    source = """\
    import torch

    def anchors(shapes, device="cpu"):
        parts = []
        for h in shapes:
            parts.append(torch.arange(h, device=device).float())
        grid = torch.concat(parts)
        valid = grid > 0.5
        return torch.where(valid, grid, torch.full((), 1.0, device=device))

    def fixed(grid: torch.Tensor):
        return torch.where(grid > 0, grid, torch.full((), 1.0, device="cpu"))
    """
    # One ``device`` builds every operand (its "cpu" default is only the caller-less case); a CPU
    # literal beside a tensor of unknown device is still reported.
    assert [row for row, _ in found(source, "SYNC203")] == [12]


def test_a_where_operand_of_one_dimension_on_the_cpu_raises_rather_than_copies() -> None:
    source = """\
    import torch
    from torch import Tensor

    def normalize(x: torch.Tensor, fill: float):
        x = x.cuda()
        a = torch.where(x != 0.0, x, Tensor([fill]))
        b = torch.where(x != 0.0, x, torch.tensor([fill]))
        return a, b, torch.where(x != 0.0, x, torch.tensor(fill))
    """
    # Measured on the H200: a 1-d CPU operand beside CUDA ones raises a device mismatch; a 0-d one syncs.
    assert found(source, "SYNC203") == [(8, Confidence.HIGH)]


def test_data_collators_batch_host_samples() -> None:
    source = """\
    import torch

    def torch_default_data_collator(features):
        first = features[0]
        label = first["label"].item()
        return torch.tensor([f["label"] for f in features]), label

    class DataCollatorWithPadding:
        def __call__(self, features):
            return features[0]["input_ids"].tolist()

    def forward(x):
        return x["label"].item()
    """
    assert [(row, c) for row, c in found(source, "SYNC101") if c is not Confidence.LOW] == [(13, Confidence.MEDIUM)]
    assert [c for _, c in found(source, "SYNC102")] in ([], [Confidence.LOW])


def test_torch_helpers_that_return_python_values_are_no_tensors() -> None:
    source = """\
    import math
    import torch
    from torch import nn

    def reset(weight: torch.Tensor, q: torch.Tensor):
        fan_in = nn.init._calculate_correct_fan(weight, "fan_in")
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        usable = bool(torch.backends.cuda.can_use_flash_attention(q, False))
        return bound, usable
    """
    assert [d.code for d in lint(source) if d.code.startswith("SYNC5")] == []


def test_joined_tensors_share_the_device_of_a_host_part() -> None:
    source = """\
    import torch

    def plan(prefix: torch.Tensor, other: torch.Tensor):
        tau = torch.cat([torch.zeros(1, dtype=torch.float64), prefix])
        both = prefix + torch.zeros(1)
        return int(torch.argmax(tau)), int(torch.argmax(both))
    """
    # ``torch.cat`` cannot mix devices; arithmetic may (a 0-d host scalar), so ``both`` stays unknown.
    assert [row for row, c in found(source, "SYNC501") if c is not Confidence.LOW] == [6]


def test_rows_of_a_tensor_by_convention_are_no_surer_than_it() -> None:
    source = """\
    import torch

    def build(case, seq_lens_cpu):
        seq_lens = case.seq_lens
        for req, seq_len in enumerate(seq_lens):
            for pos in range(seq_len):
                pass
    """
    # ``seq_lens`` beside ``seq_lens_cpu`` is a device tensor by naming convention only: its rows
    # in ``range()`` are reported low, not medium.
    assert found(source, "SYNC504") == [(6, Confidence.LOW)]


def test_tensors_read_from_a_safetensors_file_are_in_host_memory() -> None:
    source = """\
    import torch
    from safetensors import safe_open

    def scale_of(path, name, device):
        with safe_open(path, framework="pt", device="cpu") as checkpoint:
            scale = checkpoint.get_tensor(name)
        on_gpu = scale.to(device)
        return scale.item()
    """
    assert found(source, "SYNC101") == []
    assert [row for row, _ in found(source, "SYNC202")] == [7]


def test_an_object_describing_device_memory_is_no_host_data() -> None:
    source = """\
    import torch

    class DeviceBytes:
        def __init__(self, ptr, n):
            self.__cuda_array_interface__ = {"shape": (n,), "typestr": "|u1", "data": (ptr, False), "version": 3}

    class Plain:
        def __init__(self, ptr, n):
            self.data = (ptr, n)

    def views(ptr, n, device):
        a = torch.as_tensor(DeviceBytes(ptr, n), device=device)
        b = torch.as_tensor(Plain(ptr, n), device=device)
        return a, b
    """
    assert [row for row, _ in found(source, "SYNC201")] == [13]


def test_a_list_grown_only_by_host_tensors_is_host_data() -> None:
    source = """\
    import torch

    def grids(items, device):
        parts = []
        for item in items:
            parts.append(item.cpu())
        joined = torch.cat(parts)
        mixed = []
        mixed.append(torch.zeros(2))
        mixed.append(torch.ones(2, device="cuda"))
        offsets = []
        for i in range(4):
            offsets.append(torch.arange(i, i + 2))
        return joined.tolist(), torch.cat(mixed).tolist(), torch.cat(offsets).to(device)
    """
    # ``parts`` holds host copies only (the ``.cpu()`` itself is the sync); ``mixed`` took a device
    # tensor; the host ``offsets`` uploaded with a blocking copy is a sync of its own.
    assert [(d.code, d.start.row) for d in lint(source)] == [
        ("SYNC103", 6), ("SYNC102", 14), ("SYNC202", 14)
    ]


def test_rows_of_a_one_dimensional_host_tensor_index_as_python_ints_would() -> None:
    source = """\
import torch

def combine(states, hidden, mapping):
    states = states.cuda()
    for sid in torch.arange(0, states.shape[0]):
        part = hidden[mapping == sid]
        states[sid, : part.size(0)] = part
        states[sid] = 0.0
    for rows in torch.zeros(4, 3, dtype=torch.long):
        states[rows] = states[0]
"""
    found = {(d.code, d.start.row) for d in lint(source)}
    # A 0-d CPU index is read as an int on the host (a select): the write only queues a copy.
    assert ("SYNC203", 7) not in found
    # A Python scalar written through it still goes through a host value (measured: ``x[3] = 0.0``).
    assert ("SYNC403", 8) in found
    # The rows of a 2-d host tensor are 1-d index tensors: copied to the device to index it.
    assert ("SYNC203", 10) in found


def test_a_to_with_keywords_no_tensor_takes_is_the_object_s_own_method() -> None:
    source = """\
import torch

def offload(data_point, t: torch.Tensor, device):
    data_point.to("cpu", pin_memory=True)
    data_point.to(device, pin_memory=True)
    t.to("cpu", non_blocking=False)
"""
    assert [(d.code, d.start.row) for d in lint(source)] == [("SYNC103", 6)]


def test_a_copy_to_a_host_device_in_a_variable_names_the_variable() -> None:
    source = """\
    import torch

    class Epoch:
        def __init__(self, model, device="cpu"):
            self.model = model
            self.device = device

        def run(self, batch: torch.Tensor):
            return batch.to(self.device), batch.to("cpu")
    """
    # ``device="cpu"`` is where the code runs unless the caller says otherwise: the finding says
    # which expression holds the host device, not a literal the line does not contain.
    messages = [d.message.split(" is a blocking", 1)[0] for d in lint(source) if d.code == "SYNC103"]
    assert messages == ["`.to(self.device)`, a host device here,", '`.to("cpu")`']


def test_an_optimizer_group_lists_tensors_and_their_gradients_live_beside_them() -> None:
    source = """\
    import torch

    class Sparse(torch.optim.Optimizer):
        def step(self):
            for group in self.param_groups:
                for p in group["params"]:
                    grad = p.grad
                    state = self.state[p]
                    if grad.abs().max() > group["clip"]:
                        grad = grad * 0.5
                    p[state["mask"]] = grad[state["mask"]]
            for name in self.defaults["names"]:
                if name:
                    pass
    """
    # The parameters are tensors wherever the model lives (medium); a group's other entries are
    # hyper-parameters, and so is what any other list holds.
    assert found(source, "SYNC502") == [(9, Confidence.MEDIUM)]
    assert found(source, "SYNC401") == [(11, Confidence.MEDIUM)]


def test_packed_sequence_sizes_and_padded_lengths_are_host_tensors() -> None:
    source = """\
    import torch
    from torch.nn.utils.rnn import pad_packed_sequence

    def run(packed, lstm):
        out, _ = lstm(packed)
        padded, lengths = pad_packed_sequence(out)
        longest = int(lengths.max())
        first = packed.batch_sizes[0].item()
        return padded.sum().item(), longest, first
    """
    # torch keeps a PackedSequence's batch_sizes and the lengths pad_packed_sequence returns on the
    # CPU whatever the data's device; the padded data stays where it was.
    assert [(d.code, d.start.row) for d in lint(source) if d.code.startswith("SYNC")] == [("SYNC101", 9)]


def test_a_module_output_unpacked_into_many_names_holds_tensors_by_convention_only() -> None:
    source = """\
    import torch

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rope_embedder = RopeEmbedder()
            self.block = Block()

        def forward(self, x: torch.Tensor, mask: torch.Tensor):
            rope, lengths, img_lengths = self.rope_embedder(x, mask)
            joint = x.new_zeros(4, 8, dtype=torch.bool)
            for i, n in enumerate(lengths):
                joint[i, :n] = True
            hidden, gate = self.block(x)
            return hidden[:, : gate], rope.sum().item()
    """
    # A forward returning three or more things mixes tensors with lists of sizes (low for
    # conversions); a pair stays a pair of tensors, and a tensor-only method still says tensor.
    assert sorted((d.code, d.start.row, d.confidence) for d in lint(source) if d.code.startswith("SYNC5")) == [
        ("SYNC504", 13, Confidence.LOW), ("SYNC504", 15, Confidence.MEDIUM),
    ]
    assert found(source, "SYNC101") == [(15, Confidence.MEDIUM)]
