"""Where data lives while objects are built, and code that is no torch code at all."""

from __future__ import annotations

from syncllint.diagnostics import Confidence
from tests.conftest import lint


def found(source: str, code: str) -> list[tuple[int, Confidence]]:
    return [(d.start.row, d.confidence) for d in lint(source) if d.code == code]


INIT_STATE = """\
import torch
from torch import nn

class FSQ(nn.Module):
    def __init__(self, levels):
        super().__init__()
        _levels = torch.tensor(levels, dtype=torch.int32)
        self.register_buffer("_levels", _levels, persistent=False)
        self.codebook_size = self._levels.prod().item()
        self.res = torch.zeros(4)
        self.n = int(self.res.sum())

    def forward(self, x):
        return self._levels.prod().item()

class Moved(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.register_buffer("res", torch.zeros(4))
        self.to(device)
        self.n = self.res.sum().item()

class Told(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale
        self.s = self.scale.item()
"""


def test_an_init_reads_back_the_host_tensors_it_set_until_the_module_moves() -> None:
    # Lines 9 and 11 read what this __init__ built on the host; forward (14) runs wherever the
    # module was moved; after self.to(device) (21) the state has moved; a field set from a
    # parameter (27) is wherever the caller's tensor is.
    assert found(INIT_STATE, "SYNC101") == [(14, Confidence.MEDIUM), (21, Confidence.MEDIUM), (27, Confidence.MEDIUM)]
    assert found(INIT_STATE, "SYNC501") == []


PLAIN_FIELDS = """\
import torch
from torch import nn

class Blocks(nn.Module):
    def __init__(self, blocks, drop_rate: float, alpha=0.25):
        super().__init__()
        self.blocks = nn.ModuleList(blocks)
        self.keep_probs = torch.ones(len(self.blocks))
        self.drop_rate = torch.tensor(drop_rate)
        self.alpha = torch.tensor(alpha)
        self.scale = torch.ones(3)
        self.register_buffer("scale", self.scale)

    def forward(self, x):
        self.keep_probs[:-1].uniform_()
        for idx, block in enumerate(self.blocks):
            if self.keep_probs[idx] > 0.5 and bool(torch.bernoulli(1 - self.drop_rate)):
                x = block(x)
        if (self.alpha > 0).any():
            self.alpha = self.alpha.to(x.device)
        if self.scale[0] > 1:
            x = x * 2
        return x

class MovesItsFields(nn.Module):
    def __init__(self):
        super().__init__()
        self.mask = torch.zeros(4, dtype=torch.bool)

    def _apply(self, fn):
        self.mask = fn(self.mask)
        return super()._apply(fn)

    def forward(self, x):
        return x[:, self.mask.nonzero()]
"""


def test_a_plain_tensor_field_stays_where_its_factory_put_it() -> None:
    # Module.to moves parameters and buffers only: keep_probs and drop_rate (17) stay on the host.
    # A field the class moves itself (alpha, 19), a registered buffer (scale, 21) and any field of a
    # class with its own _apply (35) are wherever the module is.
    assert [row for row, _ in found(PLAIN_FIELDS, "SYNC502")] == [19, 21]
    assert [row for row, _ in found(PLAIN_FIELDS, "SYNC302")] == [35]


NUMPY_FIELDS = """\
import numpy as np
import torch

class EncodedVideo:
    def __init__(self, file, device):
        self._video = torch.tensor(np.frombuffer(file.getvalue(), dtype=np.uint8))
        self._mean = torch.from_numpy(np.load(file))
        self._copied = torch.as_tensor(file.frames())
        self._placed = torch.tensor(np.zeros(3), device=device)

    def decode(self):
        if self._video[0] > 0:
            return int(self._mean[0])
        return int(self._copied[0]) + int(self._placed[0])
"""


def test_a_plain_field_copied_from_numpy_stays_on_the_host() -> None:
    # ``torch.tensor(np...)`` / ``torch.from_numpy(...)`` make new host tensors from host data (12,
    # 13); ``torch.as_tensor`` of an opaque value keeps its place, and ``device=`` places it (14).
    assert [row for row, _ in found(NUMPY_FIELDS, "SYNC502")] == []
    assert [row for row, _ in found(NUMPY_FIELDS, "SYNC501")] == [14, 14]


FRESH_MODULE = """\
import torch
from torch import nn

class Mapper(nn.Module):
    def forward(self, x):
        return x * 2, x

    def log_prob(self, x, y):
        return x + y

if __name__ == "__main__":
    mapper = Mapper()
    logits = torch.randn(3, 4, 8)
    a, b = mapper(logits)
    assert torch.allclose(a, b)
    c = mapper.log_prob(logits, a)
    assert torch.allclose(c, logits)
    moved = Mapper().cuda()
    d, _ = moved(logits.cuda())
    print(d.sum().item())
    e = mapper(torch.randn(2, device="cuda"))
    print(e[0].sum().item())
"""


def test_a_module_built_on_the_host_and_never_moved_answers_host_inputs_on_the_host() -> None:
    assert found(FRESH_MODULE, "SYNC603") == []  # lines 15 and 17: all on the host
    # A module moved to the GPU (20), or given device data (22), answers on the device.
    assert [row for row, _ in found(FRESH_MODULE, "SYNC101")] == [20, 22]


NUMBA = """\
import math
import torch
from numba import cuda, njit

@cuda.jit(device=True)
def clamp(g: torch.Tensor, c: torch.Tensor):
    if g[0] > c[0]:
        return max(g[0], -c[0])
    return math.exp(g[1])

@njit
def host_loop(xs: torch.Tensor):
    return int(xs[0])

def launch(t: torch.Tensor):
    return t.cuda().sum().item()
"""


def test_numba_compiled_functions_hold_no_torch_code() -> None:
    assert [d.start.row for d in lint(NUMBA)] == [16]


BUILT_WHERE_TOLD = """\
import torch
from torch import nn

class Attention(nn.Module):
    def __init__(self, n, dev):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(n, device=dev))

def fuse(n, dev):
    fused = Attention(n, dev=dev).to(dev)
    plain = nn.Linear(n, n).to(dev)
    return fused, plain
"""


def test_a_constructor_told_its_device_builds_there() -> None:
    assert [row for row, _ in found(BUILT_WHERE_TOLD, "SYNC202")] == [11]


SUMS = """\
import torch
import torch.nn.functional as F

def train(qs, target, loss_record, counts: list[int]):
    critic_loss = 0.5 * sum(F.mse_loss(q, target) for q in qs)
    critic = critic_loss.item()
    total = sum(loss_record)
    stats = dict(loss=total.item())
    n = sum(counts)
    return critic, stats, int(n)
"""


def test_a_sum_over_tensors_is_a_tensor() -> None:
    assert [row for row, _ in found(SUMS, "SYNC101")] == [6, 8]
    assert found(SUMS, "SYNC501") == []  # a sum of a list of ints


NUMPY_ATTRIBUTES = """\
import numpy as np
import torch

def limits(t: torch.Tensor):
    eps = np.finfo(np.float32).eps.item()
    big = torch.finfo(torch.float32).max
    return eps, big, t.cuda().max().item()
"""


def test_what_numpy_gives_holds_numpy_data() -> None:
    assert [row for row, _ in found(NUMPY_ATTRIBUTES, "SYNC101")] == [7]


MODULE_TEXT = """\
import torch
from torch import nn

def bench(device):
    tp = nn.Linear(2, 2)
    tp = tp.to(device=device)
    print(f"module: {tp}")
    m = tp.cuda()
    print(f"module: {m}")
    x = torch.randn(2, device="cuda")
    print(f"output: {tp(x)}")
"""


def test_a_module_moved_is_still_a_module_whose_text_holds_no_tensor() -> None:
    assert [row for row, _ in found(MODULE_TEXT, "SYNC503")] == [11]
    assert [row for row, _ in found(MODULE_TEXT, "SYNC202")] == [6]


TO_ANOTHER_TENSOR = """\
import torch

class Likelihood(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_noise = torch.nn.Parameter(torch.zeros(1))

    def set_noise(self, value):
        if not torch.is_tensor(value):
            value = torch.as_tensor(value).to(self.raw_noise)
        return value

def scale(x: torch.Tensor, n: int):
    on_gpu = torch.ones(3).to(x.cuda())
    host = torch.ones(3).to(torch.zeros(1))
    return torch.tensor(n * 2.0).to(x), on_gpu, host
"""


def test_a_host_tensor_moved_to_another_tensors_device_is_an_upload_when_that_tensor_may_be_on_the_gpu() -> None:
    assert found(TO_ANOTHER_TENSOR, "SYNC202") == [
        (10, Confidence.MEDIUM), (14, Confidence.HIGH), (16, Confidence.MEDIUM)
    ]


def test_the_parameters_of_a_layer_built_above_are_host_tensors_until_it_moves() -> None:
    # demucs' ScaledEmbedding: smoothing the embedding's weight while the model is still on the host.
    source = """\
import torch
from torch import nn

class ScaledEmbedding(nn.Module):
    def __init__(self, num_embeddings: int, dim: int, device):
        super().__init__()
        self.embedding = nn.Embedding(num_embeddings, dim)
        weight = torch.cumsum(self.embedding.weight.data, dim=0)
        weight = weight / torch.arange(1, num_embeddings + 1).to(weight).sqrt()[:, None]
        self.embedding.to(device)
        scale = torch.ones(num_embeddings).to(self.embedding.weight)
"""
    # The move of the module itself copies its parameters; once moved, its device is unknown.
    assert found(source, "SYNC202") == [(10, Confidence.MEDIUM), (11, Confidence.MEDIUM)]


def test_an_acronym_called_builds_a_module() -> None:
    source = """\
import torch
from torch import nn

def build():
    lstm = nn.LSTM(3, 3)
    lstm.cuda()
    return nn.GRU(3, 3).cuda(), FNO(modes=4).to("cuda")
"""
    assert found(source, "SYNC202") == [(6, Confidence.MEDIUM), (7, Confidence.MEDIUM), (7, Confidence.MEDIUM)]


FIELDS_BUILT_LATER = """\
import torch

class Sampler:
    def __init__(self, n):
        self.n = n
        self.rewards = self.lengths = None
        self.pending = None

    def reset(self):
        self.rewards = torch.zeros(self.n)
        self.lengths = torch.zeros(self.n, dtype=torch.int32)

    def connect(self, n):
        self.pending = torch.zeros(n, device="cuda")

    def step(self, dones_orig):
        finished = dones_orig.cpu().nonzero(as_tuple=True)[0]
        stats = self.rewards[finished], self.lengths[finished]
        self.lengths[finished] = 0
        return stats, self.pending[finished]
"""


def test_a_field_left_none_until_a_method_builds_it_on_the_host_stays_there() -> None:
    # ``None`` in __init__ is a placeholder: rewards and lengths are only ever built by torch.zeros
    # without a device, so indexing them with a CPU index (18, 19) copies nothing to a GPU; the
    # field built on the GPU (pending, 20) takes the index with a blocking copy.
    assert [row for row, _ in found(FIELDS_BUILT_LATER, "SYNC203")] == [20]
    assert found(FIELDS_BUILT_LATER, "SYNC403") == []


MODULE_KEPT_ON_THE_HOST = """\
import safetensors.torch
import torch

def build(device):
    model = Net(4)
    if device is not None and device != torch.device("cpu"):
        model.cuda(device)
    else:
        model = model.cpu()
    return model

def build_on_cpu():
    model = Net(4)
    return model.cpu()

def build_moved(device):
    model = Net(4)
    model.to(device)
    return model.cpu()

def given_weights(w):
    linear = Linear(4, 4)
    linear.weight.data = w
    return linear.cpu()

def loaded(path):
    model = Net(4)
    model.load_state_dict(torch.load(path), assign=True)
    return model.cpu()

def loaded_on_the_host(path):
    model = Net(4)
    model.load_state_dict(safetensors.torch.load_file(path), assign=True)
    return model.cpu()
"""


def test_cpu_of_a_module_built_on_the_host_in_the_function_copies_nothing() -> None:
    # The else arm (9) and the plain function (14) hold the module as built; after ``.to(device)``
    # (19), a weight of the caller's (24) or a state dict assigned as ``torch.load`` read it (29),
    # it may be on the GPU. safetensors reads into host memory (34).
    assert [row for row, _ in found(MODULE_KEPT_ON_THE_HOST, "SYNC103")] == [19, 24, 29]
    assert [row for row, _ in found(MODULE_KEPT_ON_THE_HOST, "SYNC202")] == [7, 18]


DTYPE_HELD = """\
import torch

def map_to_cell(positions: torch.Tensor, cell: torch.Tensor, device) -> torch.Tensor:
    original_type = positions.dtype
    base = torch.zeros(3)
    cast = base.to(original_type)
    moved = base.to(device)
    return cast, moved
"""


def test_a_name_holding_a_tensors_dtype_is_a_cast_target_not_a_device() -> None:
    assert [row for row, _ in found(DTYPE_HELD, "SYNC202")] == [7]
