"""What other modules of the project say about a file: helpers' results, callers' arguments."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from syncllint.config import Settings
from syncllint.diagnostics import Confidence
from syncllint.project.facts import module_name
from syncllint.project.index import linked_facts, summary_options
from syncllint.runner import lint_files
from tests.test_cli import run

SETTINGS = Settings(select=("ALL",), min_confidence=Confidence.LOW)

LOADER = """
import torch

def load_dump(path):
    return torch.load(path, map_location="cpu")

def load_live(path):
    return torch.load(path).cuda()
"""


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def findings(root: Path, files: dict[str, str], target: str) -> list[tuple[str, int]]:
    """(code, line) of what a run over the whole project reports in ``target``."""
    write(root, files)
    paths = sorted(root.rglob("*.py"))
    linked = linked_facts(paths, summary_options(SETTINGS))
    results = lint_files(paths, SETTINGS, jobs=1, linked=linked)
    return [(d.code, d.start.row) for r in results if r.filename == str(root / target) for d in r.diagnostics]


def confident_findings(root: Path, files: dict[str, str], target: str) -> list[tuple[str, int, Confidence]]:
    """``findings`` with each finding's confidence."""
    write(root, files)
    paths = sorted(root.rglob("*.py"))
    results = lint_files(paths, SETTINGS, jobs=1, linked=linked_facts(paths, summary_options(SETTINGS)))
    return [(d.code, d.start.row, d.confidence) for r in results if r.filename == str(root / target) for d in r.diagnostics]


def package(**modules: str) -> dict[str, str]:
    return {"pkg/__init__.py": "", **{f"pkg/{name.replace('__', '/')}.py": text for name, text in modules.items()}}


def test_an_imported_helper_that_loads_onto_the_host_gives_host_tensors(tmp_path: Path) -> None:
    user = """
    from pkg.loader import load_dump, load_live

    def compare(a, b):
        x = load_dump(a)
        y = load_live(b)
        return x.max().item(), y.max().item()
    """
    assert findings(tmp_path, package(loader=LOADER, user=user), "pkg/user.py") == [("SYNC101", 7)]


def test_the_same_file_alone_does_not_know_the_helper(tmp_path: Path) -> None:
    user = "from pkg.loader import load_dump\n\ndef compare(a):\n    return load_dump(a).max().item()\n"
    write(tmp_path, package(loader=LOADER, user=user))
    alone = run("check", "-", "--stdin-filename", "user.py", "--select", "ALL", "--min-confidence", "low", stdin=user)
    assert "SYNC101" in alone.stdout
    assert findings(tmp_path, {}, "pkg/user.py") == []


def test_module_aliases_relative_imports_and_package_reexports_resolve(tmp_path: Path) -> None:
    user = """
    from .. import loader
    from pkg import load_dump as fetch

    def compare(a, b):
        return loader.load_dump(a).item(), fetch(b).item()
    """
    files = package(loader=LOADER, sub__user=user)
    files["pkg/__init__.py"] = "from .loader import load_dump\n"
    files["pkg/sub/__init__.py"] = ""
    assert findings(tmp_path, files, "pkg/sub/user.py") == []


def test_a_method_inherited_from_another_module_keeps_its_place(tmp_path: Path) -> None:
    mixins = """
    class Snapshots:
        def _snapshot(self, buf, idx):
            return buf[idx].float().cpu().clone()
    """
    user = """
    import torch
    from pkg.mixins import Snapshots

    class Checker(Snapshots):
        def check(self, buf, idx):
            return torch.equal(self._snapshot(buf, idx), self._snapshot(buf, idx + 1))
    """
    assert findings(tmp_path, package(mixins=mixins, user=user), "pkg/user.py") == []


POLICY = """
import torch

def rebalance(weight: torch.Tensor, n: int):
    return weight.cpu().tolist()
"""




def test_a_public_function_without_a_project_caller_is_not_assumed_fed_by_anyone(tmp_path: Path) -> None:
    assert ("SYNC103", 5) in findings(tmp_path, package(policy=POLICY), "pkg/policy.py")


def test_a_public_function_called_in_its_own_module_takes_what_those_calls_pass(tmp_path: Path) -> None:
    own = POLICY + "\n\ndef plan(lens_cpu):\n    return rebalance(lens_cpu, 4)\n"
    assert findings(tmp_path, package(policy=own), "pkg/policy.py") == []
    # A call elsewhere with other data keeps the finding, as does a second local call.
    other = "from pkg.policy import rebalance\n\ndef hot(load):\n    return rebalance(load, 2)\n"
    assert ("SYNC103", 5) in findings(tmp_path, {"pkg/hot.py": other}, "pkg/policy.py")


def test_a_function_passed_on_may_be_called_with_anything(tmp_path: Path) -> None:
    caller = """
    from pkg.policy import rebalance

    def step(load, run):
        rebalance(load.cpu(), 4)
        return run(rebalance)
    """
    assert ("SYNC103", 5) in findings(tmp_path, package(policy=POLICY, state=caller), "pkg/policy.py")


def test_a_device_string_argument_is_not_host_data(tmp_path: Path) -> None:
    helper = """
    import torch

    def to_device(device):
        return torch.tensor([1, 2, 3]).to(device)
    """
    caller = "from pkg.helper import to_device\n\ndef build():\n    return to_device('cuda')\n"
    assert [code for code, _ in findings(tmp_path, package(helper=helper, caller=caller), "pkg/helper.py")] == ["SYNC202"]


def test_folders_without_init_between_packages_are_crossed(tmp_path: Path) -> None:
    files = {
        "top/__init__.py": "",
        "top/kits/cache/__init__.py": "",  # ``top/kits`` has no __init__.py (a namespace package)
        "top/kits/cache/mixins.py": "class Snapshots:\n    def _snap(self, b):\n        return b.cpu()\n",
        "top/kits/cache/storage.py": (
            "import torch\nfrom top.kits.cache.mixins import Snapshots\n\n"
            "class T(Snapshots):\n    def check(self, a, b):\n        return torch.equal(self._snap(a), self._snap(b))\n"
        ),
    }
    write(tmp_path, files)
    assert module_name(tmp_path / "top/kits/cache/storage.py") == ("top.kits.cache.storage", False)
    assert findings(tmp_path, {}, "top/kits/cache/storage.py") == []


def test_a_changed_helper_is_seen_through_the_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SYNCLLINT_NO_CACHE")
    user = "import torch\nfrom pkg.loader import load_dump\n\ndef compare(a):\n    return load_dump(a).max().item()\n"
    write(tmp_path, package(loader=LOADER, user=user))
    assert run("check", "pkg", cwd=tmp_path).returncode == 0
    assert run("check", "pkg", cwd=tmp_path).returncode == 0  # warm: the saved facts
    # The helper now returns device data: the unchanged caller must be linted again, not read
    # from the result cache.
    (tmp_path / "pkg/loader.py").write_text("import torch\n\ndef load_dump(path):\n    return torch.load(path).cuda()\n")
    second = run("check", "pkg/user.py", cwd=tmp_path)
    assert second.returncode == 1 and "SYNC101" in second.stdout


def test_fix_sees_the_facts_a_check_sees(tmp_path: Path) -> None:
    user = "import torch\nfrom pkg.loader import load_dump\n\ndef compare(a):\n    return load_dump(a).max().item()\n"
    write(tmp_path, package(loader=LOADER, user=user))
    assert run("check", "pkg", "--fix", cwd=tmp_path).returncode == 0
    assert run("check", "pkg", "--add-noqa", cwd=tmp_path).returncode == 0
    assert "noqa" not in (tmp_path / "pkg/user.py").read_text()


def test_a_parameter_every_call_leaves_none_holds_none(tmp_path: Path) -> None:
    sampler = """
    import torch

    class Sampler:
        def sample(self, logits: torch.Tensor, mask: torch.Tensor):
            return self._contexts(mask)

        def _contexts(self, mask, drafts=None, rows=None):
            if drafts is None:
                return mask
            return torch.where(mask, drafts, rows.cpu())

        def _scaled(self, x, scale=None):
            return x * scale.cpu()

        def run(self, x: torch.Tensor, x_cpu):
            return self._scaled(x, x_cpu), self._scaled(x)
    """
    # ``drafts`` and ``rows`` are None for every caller: the last line of ``_contexts`` does not
    # run for them (neither a host operand of ``where`` nor a device ``.cpu()``); ``scale`` gets
    # host data once and None once: host data.
    assert findings(tmp_path, package(sampler=sampler), "pkg/sampler.py") == []
    sampler = sampler.replace("return self._contexts(mask)", "return self._contexts(mask, logits, logits)")
    assert findings(tmp_path, package(sampler=sampler), "pkg/sampler.py") == [("SYNC103", 11)]


def test_an_attribute_every_project_assignment_fills_with_host_data(tmp_path: Path) -> None:
    batch = """
    import numpy as np
    import torch

    class InputBatch:
        def __init__(self, n):
            self.num_tokens = None
            self.num_tokens = np.zeros(n, dtype=np.int32)
            self.positions = torch.zeros(n, dtype=torch.int64, device="cuda")
    """
    runner = """
    import torch

    def step(batch, i):
        return batch.num_tokens[i].item(), batch.positions[i].item()
    """
    assert findings(tmp_path, package(batch=batch, runner=runner), "pkg/runner.py") == [("SYNC101", 5)]
    # The same name set elsewhere from something the code does not show: no fact.
    other = "class Runner:\n    def __init__(self, make):\n        self.num_tokens = make()\n"
    assert findings(tmp_path, {"pkg/other.py": other}, "pkg/runner.py") == [("SYNC101", 5), ("SYNC101", 5)]


def test_factories_in_model_folders_are_no_host_evidence(tmp_path: Path) -> None:
    layer = """
    import torch
    from torch import nn

    class Table(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.rows = torch.empty(n)

        def forward(self, x):
            return x
    """
    user = "import torch\n\ndef read(table, i):\n    return table.rows[i].item()\n"
    files = {"vllm/__init__.py": "", "vllm/model_executor/__init__.py": "", "vllm/model_executor/models/__init__.py": "",
             "vllm/model_executor/models/table.py": layer, "vllm/user.py": user}
    assert findings(tmp_path, files, "vllm/user.py") == [("SYNC101", 4)]


def test_a_caller_local_assigned_host_data_is_host_data(tmp_path: Path) -> None:
    plan = """
    import torch

    def _plan(qo_lens: torch.Tensor, kv_lens: torch.Tensor, heads: int):
        return qo_lens.tolist(), kv_lens.tolist()
    """
    caller = """
    import torch
    from pkg.plan import _plan

    def build(meta, seq_lens: torch.Tensor, lo, hi):
        kv_cpu = seq_lens.cpu().to(torch.int32)
        side_kv = kv_cpu[lo:hi]
        side_qo = (meta.query_start_loc_cpu[1:] - meta.query_start_loc_cpu[:-1]).to(torch.int32)
        return _plan(side_qo, side_kv, 8)
    """
    # ``side_kv`` and ``side_qo`` are host data; the caller's own ``seq_lens.cpu()`` is its finding.
    assert findings(tmp_path, package(plan=plan, caller=caller), "pkg/plan.py") == []
    assert findings(tmp_path, {}, "pkg/caller.py") == [("SYNC103", 6)]


def test_behind_star_arguments_only_explicit_ones_count(tmp_path: Path) -> None:
    plan = """
    import torch

    def _plan(qo_lens: torch.Tensor, kv_lens: torch.Tensor, offset=None):
        return qo_lens.tolist(), kv_lens.tolist()

    def plan(qo_lens, *args, **kwargs):
        return _plan(qo_lens.cpu(), *args, **kwargs)
    """
    # ``qo_lens`` is given before the star (host data); ``kv_lens`` hides behind it.
    assert findings(tmp_path, package(plan=plan), "pkg/plan.py") == [("SYNC102", 5), ("SYNC103", 8)]


def test_a_parameter_every_call_fills_with_device_data(tmp_path: Path) -> None:
    helper = """
    import torch

    def _relative_rms(candidate, reference):
        return float((candidate - reference).pow(2).mean().sqrt())

    def _masked(mask, values, cpu_counts):
        return torch.where(mask, values, cpu_counts)

    def test_attention():
        q = torch.randn(4, 8, device="cuda")
        out = q * 2
        assert _relative_rms(out, q) < 0.1

    def step(mask, values, counts_cpu, device):
        return _masked(mask, values, counts_cpu[:4].to(device=device, non_blocking=True))
    """
    # Both calls show where their data is: on the device. ``cpu_counts`` is named for the host
    # but gets a device copy.
    assert findings(tmp_path, package(helper=helper), "pkg/helper.py") == [("SYNC501", 5)]


def test_the_stored_summaries_belong_to_this_syncllint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from syncllint.project import store

    write(tmp_path, package(loader=LOADER))
    cache = tmp_path / "cache"
    paths = sorted(tmp_path.rglob("*.py"))
    linked_facts(paths, summary_options(SETTINGS), cache)
    first = {p.name for p in cache.glob("project-summaries-*.json")}
    # Another syncllint reads modules differently: it neither reuses nor keeps the old reading.
    monkeypatch.setattr(store, "source_digest", lambda: "another version")
    linked_facts(paths, summary_options(SETTINGS), cache)
    second = {p.name for p in cache.glob("project-summaries-*.json")}
    assert len(first) == len(second) == 1 and first != second


def test_a_checkpoint_read_through_a_helper_typed_any_is_host_data(tmp_path: Path) -> None:
    loader = """
    from typing import Any
    from safetensors.torch import load_file

    def _patch(module, tensor: Any) -> None:
        module.alpha = float(tensor.detach().cpu().item())

    def patch_scales(model, path):
        state_dict = load_file(path)
        for name, module in model.named_modules():
            scale = state_dict.get(name + ".scale")
            if scale is not None:
                _patch(module, scale)
    """
    assert findings(tmp_path, package(loader=loader), "pkg/loader.py") == []


def test_a_device_parameter_every_caller_sets_to_the_cpu_is_the_host(tmp_path: Path) -> None:
    helper = """
    import numpy as np
    import torch

    def make_padded(rows, *, device: str | torch.device | None = None):
        return torch.from_numpy(np.array(rows)).to(device)
    """
    caller = "from pkg.helper import make_padded\n\ndef convert(rows):\n    return make_padded(rows, device='cpu')\n"
    assert findings(tmp_path, package(helper=helper, caller=caller), "pkg/helper.py") == []
    other = "from pkg.helper import make_padded\n\ndef upload(rows, dev):\n    return make_padded(rows, device=dev)\n"
    assert [code for code, _ in findings(tmp_path, {"pkg/other.py": other}, "pkg/helper.py")] == ["SYNC202"]


BATCH = """
from dataclasses import dataclass

import numpy as np
import torch

@dataclass
class InputBatch:
    num_scheduled_tokens: np.ndarray
    input_ids: torch.Tensor
"""


def test_a_field_a_class_declares_numpy_is_host_data_wherever_it_is_read(tmp_path: Path) -> None:
    state = """
    import torch

    def prepare(input_batch):
        return input_batch.num_scheduled_tokens.max().item(), input_batch.input_ids.max().item()
    """
    # An assignment elsewhere whose place the code does not show does not outweigh the declaration.
    runner = "class Runner:\n    def __init__(self, make):\n        self.num_scheduled_tokens = make()\n"
    files = package(batch=BATCH, state=state, runner=runner)
    assert findings(tmp_path, files, "pkg/state.py") == [("SYNC101", 5)]
    # A class that declares the same name a tensor does.
    other = "import torch\n\nclass Other:\n    num_scheduled_tokens: torch.Tensor\n"
    assert len(findings(tmp_path, {"pkg/other.py": other}, "pkg/state.py")) == 2


def test_a_declared_numpy_field_does_not_make_a_submodule_of_that_name_host_data(tmp_path: Path) -> None:
    fields = "import numpy as np\n\nclass Clip:\n    audio: np.ndarray\n"
    model = """
    import torch

    class Model(torch.nn.Module):
        def __init__(self, config):
            self.audio = AudioEncoder(config) if config.audio else None

        def embed(self, features: torch.Tensor):
            return features.to(device=self.audio.device)
    """
    assert findings(tmp_path, package(fields=fields, model=model), "pkg/model.py") == []


def test_a_write_into_a_local_keeps_it_assigned_once_and_a_rebinding_does_not(tmp_path: Path) -> None:
    helper = """
    import torch

    def _activations():
        x = torch.randn(4, 4)
        x[:, ::2] *= 8.0
        return x

    def _rebound(make):
        x = torch.randn(4, 4)
        x, scale = make(x)
        return x

    def run(device, make):
        return _activations().to(device), _rebound(make).to(device)
    """
    # ``x[...] *= 8.0`` writes into the host tensor; ``x, scale = make(x)`` may put anything in x.
    assert findings(tmp_path, package(helper=helper), "pkg/helper.py") == [("SYNC202", 15)]


def test_a_size_passed_as_a_tensor_annotated_parameter_is_host_data(tmp_path: Path) -> None:
    model = """
    import torch

    class Encoder(torch.nn.Module):
        def _output_lengths(self, input_lengths: torch.LongTensor):
            return int((input_lengths - 127) / 64 + 1)

        def forward(self, x, attention_mask):
            return self._output_lengths(attention_mask.shape[-1])
    """
    assert findings(tmp_path, package(model=model), "pkg/model.py") == []


CHAIN = """
import torch

def _leaf(shape):
    return int(shape[0].item())

def _middle(crops, n):
    for j in range(n):
        crop = crops[j].long()
        _leaf(crop)

def _outer(packed):
    _middle(packed, 2)
    return packed.view(torch.uint8).cpu()
"""


def test_a_parameter_passed_on_takes_what_every_call_of_the_caller_passes(tmp_path: Path) -> None:
    # The only callers hand over host copies; ``_outer`` and ``_middle`` pass them on, untouched
    # or through a row and a cast, so neither ``.cpu()`` nor ``.item()`` reads device memory.
    caller = CHAIN + "\ndef test_one(case):\n    return _outer(case.cpu())\n"
    assert findings(tmp_path, package(chain=caller), "pkg/chain.py") == [("SYNC103", 17)]
    # One caller with device data: the findings along the chain stay.
    device = caller + "\ndef test_two():\n    return _outer(torch.ones(3, device='cuda'))\n"
    assert {("SYNC101", 5), ("SYNC103", 17)} <= set(findings(tmp_path, package(chain=device), "pkg/chain.py"))


def test_a_parameter_rebound_before_it_is_passed_on_takes_nothing_from_the_callers(tmp_path: Path) -> None:
    rebound = CHAIN.replace("    _middle(packed, 2)", "    packed = packed.cuda()\n    _middle(packed, 2)")
    caller = rebound + "\ndef test_one(case):\n    return _outer(case.cpu())\n"
    assert ("SYNC101", 5) in findings(tmp_path, package(chain=caller), "pkg/chain.py")


def test_a_copy_to_a_cpu_device_held_in_a_local_is_host_data(tmp_path: Path) -> None:
    module = """
    import torch

    def _slot(buf, i):
        return int(buf[i, 0].item())

    def launch(canary, on):
        work_device = torch.device("cpu")
        buf = canary.detach().to(device=work_device).view(torch.int64)
        return _slot(buf, 0)
    """
    assert ("SYNC101", 5) not in findings(tmp_path, package(ref=module), "pkg/ref.py")
    onto_device = module.replace('torch.device("cpu")', 'torch.device("cuda")')
    assert ("SYNC101", 5) in findings(tmp_path, package(ref=onto_device), "pkg/ref.py")


METHOD_POLICY = """
import torch

class DefaultPolicy:
    def rebalance_experts(self, weight: torch.Tensor, n: int):
        return weight.float().cpu().numpy()
"""


@pytest.mark.parametrize(
    ("policy", "call", "row"),
    [
        # A public function, imported by the caller.
        (POLICY, "from pkg.policy import rebalance\n\ndef step(load):\n    return rebalance({}, 4)\n", 5),
        # A method, reached by its name through an object nothing types.
        (METHOD_POLICY, "def step(state, load):\n    return state.policy.rebalance_experts({}, 4)\n", 6),
    ],
)
def test_a_function_or_method_every_project_call_feeds_host_data(tmp_path: Path, policy: str, call: str, row: int) -> None:
    assert findings(tmp_path, package(policy=policy, state=call.format("load.cpu()")), "pkg/policy.py") == []
    # One call that passes something else is enough to keep the finding.
    assert ("SYNC103", row) in findings(tmp_path, {"pkg/hot.py": call.format("load")}, "pkg/policy.py")


def test_a_method_name_two_classes_define_or_passed_on_says_nothing(tmp_path: Path) -> None:
    caller = "def step(state, load):\n    return state.policy.rebalance_experts(load.cpu(), 4)\n"
    # The other class takes other parameters under the name (copies of one signature pool their calls).
    twin = METHOD_POLICY.replace("DefaultPolicy", "OtherPolicy").replace("n: int", "n: int, scale: float")
    files = package(policy=METHOD_POLICY, twin=twin, state=caller)
    assert ("SYNC103", 6) in findings(tmp_path, files, "pkg/policy.py")
    (tmp_path / "pkg/twin.py").unlink()
    hooked = "def wire(state, hooks):\n    hooks.append(state.policy.rebalance_experts)\n"
    assert ("SYNC103", 6) in findings(tmp_path, {"pkg/hooks.py": hooked}, "pkg/policy.py")


def test_a_test_module_calling_a_method_with_toy_data_says_nothing(tmp_path: Path) -> None:
    test = "import torch\n\ndef test_policy(policy):\n    policy.rebalance_experts(torch.zeros(4).cpu(), 4)\n"
    assert ("SYNC103", 6) in findings(tmp_path, package(policy=METHOD_POLICY, tests__test_policy=test), "pkg/policy.py")


def test_a_classmethod_called_through_its_imported_class_takes_what_the_call_passes(tmp_path: Path) -> None:
    model = """
    import torch

    class LoRAModel:
        @classmethod
        def from_checkpoint(cls, path, lens: torch.Tensor):
            return lens.cpu().tolist()
    """
    caller = "from pkg.model import LoRAModel\n\ndef load(path, lens):\n    return LoRAModel.from_checkpoint(path, lens.cpu())\n"
    assert findings(tmp_path, package(model=model, manager=caller), "pkg/model.py") == []
    hot = "from pkg.model import LoRAModel\n\ndef hot(path, lens):\n    return LoRAModel.from_checkpoint(path, lens)\n"
    assert ("SYNC103", 7) in findings(tmp_path, {"pkg/hot.py": hot}, "pkg/model.py")


BROADCAST = """
import torch

def broadcast_sizes(data, force_cpu_device: bool = True):
    device = torch.device("cuda" if torch.cuda.is_available() and not force_cpu_device else "cpu")
    size = torch.tensor([len(data)], device=device)
    return size.item()
"""


@pytest.mark.parametrize(
    ("call", "reported"),
    [
        ("broadcast_sizes(data)", False),  # every call leaves the flag at its default: the CPU branch
        ("broadcast_sizes(data, force_cpu_device=False)", True),
        ("broadcast_sizes(data, False)", True),
        ("broadcast_sizes(*data)", True),  # behind ``*args`` the flag may be given
    ],
)
def test_a_flag_no_call_gives_takes_its_default(tmp_path: Path, call: str, reported: bool) -> None:
    caller = f"from pkg.comm import broadcast_sizes\n\ndef sync(data):\n    return {call}\n"
    found = findings(tmp_path, package(comm=BROADCAST, scheduler=caller), "pkg/comm.py")
    assert (("SYNC201", 6) in found and ("SYNC101", 7) in found) is reported
    assert found == [] or reported


def test_a_flag_the_function_rebinds_says_nothing(tmp_path: Path) -> None:
    rebinding = BROADCAST.replace("    device =", "    force_cpu_device = force_cpu_device and not data\n    device =")
    caller = "from pkg.comm import broadcast_sizes\n\ndef sync(data):\n    return broadcast_sizes(data)\n"
    assert ("SYNC101", 8) in findings(tmp_path, package(comm=rebinding, scheduler=caller), "pkg/comm.py")


def test_calls_through_a_star_reexport_reach_the_function(tmp_path: Path) -> None:
    caller = "from pkg.utils import broadcast_sizes\n\ndef sync(data):\n    return broadcast_sizes(data, force_cpu_device=False)\n"
    files = {"pkg/__init__.py": "", "pkg/utils/__init__.py": "from pkg.utils.comm import *\n",
             "pkg/utils/comm.py": BROADCAST, "pkg/scheduler.py": caller}
    # The one caller (through ``from pkg.utils.comm import *``) asks for the accelerator.
    assert ("SYNC101", 7) in findings(tmp_path, files, "pkg/utils/comm.py")
    files["pkg/scheduler.py"] = caller.replace(", force_cpu_device=False", "")
    assert findings(tmp_path, files, "pkg/utils/comm.py") == []


DISPATCHER = """
import torch

class Dispatcher:
    def __init__(self, n, local):
        chunks = torch.arange(n, device=torch.device("cpu"))
        self.sorted_idxs = chunks.reshape(-1, local).T.ravel()
        self.splits = None

    def sort_chunks(self, x, sizes, order):
        return torch.cat([x[i] for i in order.tolist()])

    def preprocess(self, counts):
        self.splits = counts.sum(dim=0).to(torch.device("cpu"), non_blocking=True)

    def split(self, x, splits):
        return torch.split(x, splits.tolist())

    def dispatch(self, x, counts):
        self.preprocess(counts)
        x = self.split(x, self.splits)
        return self.sort_chunks(x, counts, self.sorted_idxs)
"""


def test_an_attribute_the_class_fills_with_host_data_is_host_data_as_an_argument(tmp_path: Path) -> None:
    # ``self.sorted_idxs`` (a view of a CPU ``arange``) and ``self.splits`` (moved with
    # ``.to(torch.device("cpu"))``) are host tensors where the class passes them to its own methods.
    assert findings(tmp_path, package(dispatch=DISPATCHER), "pkg/dispatch.py") == []
    # One assignment the module does not show as host: the attribute says nothing any more.
    shown = DISPATCHER.replace("        self.splits = None\n", "        self.splits = torch.ones(n).cuda()\n")
    assert ("SYNC102", 17) in findings(tmp_path, package(dispatch=shown), "pkg/dispatch.py")
    cuda = DISPATCHER.replace('device=torch.device("cpu")', 'device=torch.device("cuda")')
    assert ("SYNC102", 11) in findings(tmp_path, package(dispatch=cuda), "pkg/dispatch.py")


GENERATION_MODEL = """
import torch

class VLModel(torch.nn.Module):
    def forward(self, input_ids, pixel_values=None, grid_thw=None):
        sizes = (grid_thw.prod(-1) // 4).tolist()
        return self.encode(pixel_values, sizes)

    def prepare_inputs_for_generation(self, context):
        grid_thw = None
        if context.images:
            grid_thw = torch.stack([m.grid for m in context.images]).cpu()
        return dict(input_ids=context.input_ids, pixel_values=context.pixels, grid_thw=grid_thw)
"""


def test_forward_takes_the_host_values_prepare_inputs_for_generation_returns(tmp_path: Path) -> None:
    # The ``.cpu()`` copy itself is reported; the ``.tolist()`` of its result in ``forward`` is not.
    assert findings(tmp_path, package(model=GENERATION_MODEL), "pkg/model.py") == [("SYNC103", 12)]
    # A value the method leaves on the device, or a dict built elsewhere, says nothing.
    on_device = GENERATION_MODEL.replace(".cpu()", ".cuda()")
    assert ("SYNC102", 6) in findings(tmp_path, package(model=on_device), "pkg/model.py")
    unpacked = GENERATION_MODEL.replace("return dict(", "return dict(**context.extra, ")
    assert ("SYNC102", 6) in findings(tmp_path, package(model=unpacked), "pkg/model.py")


VISION = """
import torch

class {name}(torch.nn.Module):
    def rot_pos_emb(self, grid_thw: torch.Tensor):
        return [int(t) * int(h) for t, h, w in grid_thw]
"""


def test_copies_of_one_method_in_several_classes_pool_their_calls(tmp_path: Path) -> None:
    caller = "import torch\n\ndef prepare(visual, grids):\n    return visual.rot_pos_emb(torch.stack(grids).cpu())\n"
    files = package(qwen=VISION.format(name="QwenVision"), intern=VISION.format(name="InternVision"), engine=caller)
    assert findings(tmp_path, files, "pkg/qwen.py") == []
    # Another class takes other parameters under that name: a call may be either's, so none counts.
    files["pkg/other.py"] = "class Other:\n    def rot_pos_emb(self, freqs, scale):\n        return freqs\n"
    assert ("SYNC501", 6) in findings(tmp_path, files, "pkg/qwen.py")


SCHEDULER_COPIES = """
import numpy as np
import torch

class {name}:
    def set_timesteps(self, n, sigmas=None):
        sigmas = {sigmas}
        return self._convert_to_exponential(in_sigmas=sigmas, num_inference_steps=n)

    def _convert_to_exponential(self, in_sigmas: torch.Tensor, num_inference_steps: int):
        sigma_min = in_sigmas[-1].item()
        return np.exp(np.linspace(np.log(sigma_min), 0.0, num_inference_steps))
"""


def test_a_method_called_through_self_in_its_own_module_gets_only_that_modules_calls(tmp_path: Path) -> None:
    # Each scheduler calls its own copy of the helper: another module's call of its copy with data
    # of unknown place says nothing of this one, which only ever gets numpy data.
    files = package(
        euler=SCHEDULER_COPIES.format(name="Euler", sigmas="np.flip(np.array(sigmas)).copy()"),
        heun=SCHEDULER_COPIES.format(name="Heun", sigmas="self.make(sigmas)"),
    )
    assert findings(tmp_path, files, "pkg/euler.py") == []
    assert ("SYNC101", 11) in findings(tmp_path, files, "pkg/heun.py")


EMA = """
import torch

class Strategy:
    def moving_average(self, model, model_ema, beta=0.99, device="cpu"):
        for param, param_ema in zip(model.parameters(), model_ema.parameters()):
            data = param.data.to(device)
            param_ema.data.copy_((1 - beta) * data + beta * param_ema.data)
"""


def test_a_cpu_device_default_every_call_replaces_is_the_callers_device(tmp_path: Path) -> None:
    # Every call passes "cuda": the move is no copy to the host. A call that keeps the default
    # runs the CPU path, and the move of the parameters there is a blocking copy to the host.
    actor = "def step(strategy, actor, ema):\n    strategy.moving_average(actor, ema, 0.9, {device})\n"
    files = package(strategy=EMA, actor=actor.format(device='"cuda"'))
    assert findings(tmp_path, files, "pkg/strategy.py") == []
    files["pkg/other.py"] = "def keep(strategy, actor, ema):\n    strategy.moving_average(actor, ema)\n"
    assert ("SYNC103", 7) in findings(tmp_path, files, "pkg/strategy.py")


def test_an_annotated_cpu_device_default_every_call_replaces_is_the_callers_device(tmp_path: Path) -> None:
    # demucs: ``create_sin_embedding(..., device: str = "cpu")``, every call giving ``device=x.device``.
    embedding = """
    import torch

    def create_sin_embedding(length: int, dim: int, device: str = "cpu"):
        pos = torch.arange(length).view(-1, 1, 1)
        return pos.to(device)

    def position(x):
        return create_sin_embedding(x.shape[0], 8, device=x.device)
    """
    assert ("SYNC202", 6) in findings(tmp_path, package(embedding=embedding), "pkg/embedding.py")
    unused = embedding.replace("device=x.device", "")
    assert findings(tmp_path, package(embedding=unused), "pkg/embedding.py") == []


def test_a_none_default_some_call_gives_is_a_value_of_unknown_place(tmp_path: Path) -> None:
    quantizer = """
    import torch

    class Quantizer(torch.nn.Module):
        def __init__(self, levels):
            self.levels = list(levels)
            self.codes = self._compute(None)

        def _compute(self, device=None):
            return torch.tensor(self.levels, device=device)

    def reinit(module):
        module._compute(device=module.codes.device)
    """
    assert ("SYNC201", 10, Confidence.MEDIUM) in confident_findings(tmp_path, package(quant=quantizer), "pkg/quant.py")
    # Every call leaves it None: the tensor is built on the default device, the host (low, hidden by default).
    alone = quantizer.replace("module._compute(device=module.codes.device)", "module._compute()")
    assert confident_findings(tmp_path, package(quant=alone), "pkg/quant.py") == [("SYNC201", 10, Confidence.LOW)]


def test_an_element_of_a_list_of_tensors_is_not_host_data_for_being_in_a_list(tmp_path: Path) -> None:
    backend = "import torch\n\nclass Backend:\n    def ring_chunk(self, q, key: torch.Tensor):\n        return torch.tensor([0, key.shape[0]], device=key.device)\n"
    caller = (
        "import torch\n\ndef ring(impl, q, k, v):\n    kv0 = torch.stack((k, v))\n"
        "    bufs = [kv0, torch.empty_like(kv0)]\n    return impl.ring_chunk(q, bufs[0][0])\n"
    )
    assert ("SYNC201", 5) in findings(tmp_path, package(backend=backend, ring=caller), "pkg/backend.py")
    numbers = caller.replace("bufs[0][0]", "[3, 4][0]")
    assert findings(tmp_path, package(backend=backend, ring=numbers), "pkg/backend.py") == []


DP_UTILS = """
import torch

def _post_process(tensor, pad):
    if pad:
        return torch.tensor([int(tensor.max())] * 2, device="cpu")
    return tensor.cpu()

def _synchronize(tensor, pad):
    lens = _post_process(tensor, pad)
    return True, lens, 3

def coordinate(tensor, pad):
    if tensor is None:
        return False, None, 0
    (ubatch, lens, mode) = _synchronize(tensor, pad)
    return (ubatch, lens, mode)

def on_device(tensor):
    return False, tensor.cuda()
"""


def test_unpacking_a_helpers_tuple_gives_each_element_the_place_its_returns_show(tmp_path: Path) -> None:
    # vLLM's ``coordinate_batch_across_dp``: the token counts it hands back were copied to the host.
    runner = """
    import torch
    from pkg.dp_utils import coordinate, on_device

    class Runner:
        def step(self, tensor, rank):
            ubatch, lens = False, None
            if tensor is not None:
                ubatch, lens, mode = (
                    coordinate(tensor, True)
                )
                padded = int(lens[rank].item())
            first = coordinate(tensor, True)[1][rank].item()
            flag, moved = on_device(tensor)
            return moved.sum().item() + first + padded
    """
    found = confident_findings(tmp_path, package(dp_utils=DP_UTILS, runner=runner), "pkg/runner.py")
    assert found == [("SYNC101", 15, Confidence.HIGH)]


def test_a_tuple_helper_says_nothing_of_a_spelling_that_two_definitions_answer_differently(tmp_path: Path) -> None:
    runner = """
    import torch
    from pkg.dp_utils import coordinate

    def coordinate(tensor, pad):
        return False, tensor, 0

    def step(tensor, rank):
        ubatch, lens, mode = coordinate(tensor, True)
        return lens[rank].item()
    """
    # The module's own definition shadows the import: its element says nothing of the place.
    assert findings(tmp_path, package(dp_utils=DP_UTILS, runner=runner), "pkg/runner.py") == [("SYNC101", 10)]


SCHEDULER = """
import numpy as np
import torch

class Scheduler:
    def set_timesteps(self, n, device=None):
        sigmas = np.array([1.0, 2.0])
        if self.kind == "linear":
            sigmas = np.interp(np.arange(n), np.arange(2), sigmas)
        elif self.kind == "log":
            sigmas = torch.linspace(0, 1, n).exp().numpy()
        if self.karras:
            sigmas = self._convert_to_karras(in_sigmas=sigmas, n=n)
        sigmas = torch.from_numpy(sigmas).to(device=device)
        self.sigmas = sigmas

    def _convert_to_karras(self, in_sigmas: torch.Tensor, n: int) -> torch.Tensor:
        sigma_min = in_sigmas[-1].item()
        return np.linspace(sigma_min, 1.0, n)
"""


def test_a_call_sees_what_a_name_holds_on_every_path_above_it(tmp_path: Path) -> None:
    # ``sigmas`` is numpy wherever ``_convert_to_karras`` runs; the move to the device comes after.
    assert [f for f in findings(tmp_path, package(schedulers=SCHEDULER), "pkg/schedulers.py") if f[0] == "SYNC101"] == []
    # In a loop, an assignment below the call reaches it on the next turn.
    looped = SCHEDULER.replace(
        "        if self.karras:\n            sigmas = self._convert_to_karras(in_sigmas=sigmas, n=n)\n"
        "        sigmas = torch.from_numpy(sigmas).to(device=device)\n",
        "        for _ in range(2):\n            sigmas = self._convert_to_karras(in_sigmas=sigmas, n=n)\n"
        "            sigmas = torch.from_numpy(sigmas).to(device=device)\n",
    )
    assert [f for f in findings(tmp_path, package(schedulers=looped), "pkg/schedulers.py") if f[0] == "SYNC101"] == [
        ("SYNC101", 18)
    ]


SCHEDULER_ARMS = """
import numpy as np
import torch

class Scheduler:
    def set_timesteps(self, n, sigmas: list[float] | None = None, device=None):
        if sigmas is not None:
            sigmas = np.array(sigmas)
        else:
            sigmas = np.array([1.0, 2.0])
        if self.karras:
            sigmas = self._convert_to_karras(in_sigmas=sigmas, n=n)
        elif self.beta:
            sigmas = np.flip(sigmas).copy()
            sigmas = self._convert_to_beta(in_sigmas=sigmas, n=n)
        sigmas = torch.from_numpy(sigmas).to(device=device)
        self.sigmas = sigmas

    def _convert_to_karras(self, in_sigmas: torch.Tensor, n: int) -> torch.Tensor:
        return torch.linspace(0, 1, n, device="cuda")

    def _convert_to_beta(self, in_sigmas: torch.Tensor, n: int) -> torch.Tensor:
        sigma_min = in_sigmas[-1].item()
        return np.linspace(sigma_min, 1.0, n)
"""


def test_an_assignment_in_the_other_arm_of_an_if_does_not_reach_a_call(tmp_path: Path) -> None:
    # The karras arm's device result never reaches the beta arm; a parameter annotated as a list
    # holds host data on the path that leaves it alone; ``np.flip(x).copy()`` is an array.
    assert [f for f in findings(tmp_path, package(schedulers=SCHEDULER_ARMS), "pkg/schedulers.py") if f[0] == "SYNC101"] == []
    # Sequential ``if``s are no arms of one another: the device result above reaches the call.
    sequential = SCHEDULER_ARMS.replace("        elif self.beta:\n", "        if self.beta:\n")
    sequential = sequential.replace("            sigmas = np.flip(sigmas).copy()\n", "")
    assert [f for f in findings(tmp_path, package(schedulers=sequential), "pkg/schedulers.py") if f[0] == "SYNC101"] == [
        ("SYNC101", 22)
    ]
    # Unless the arm replaces the name above the call, on every path to it: ``np.flip(x).copy()`` is an array.
    replaced = SCHEDULER_ARMS.replace("        elif self.beta:\n", "        if self.beta:\n")
    assert [f for f in findings(tmp_path, package(schedulers=replaced), "pkg/schedulers.py") if f[0] == "SYNC101"] == []


def test_an_attribute_the_caller_fills_with_host_data_is_host_data_in_another_module(tmp_path: Path) -> None:
    fit = """
    import torch

    def best_fit(image, possible: torch.Tensor):
        scales = possible.float() / 2
        return possible[scales > 1].tolist()
    """
    transform = """
    import torch
    from pkg.fit import best_fit

    class Transform:
        def __init__(self):
            self.possible = torch.tensor([[1, 2], [3, 4]])

        def __call__(self, image):
            return best_fit(image, self.possible)
    """
    assert confident_findings(tmp_path, package(fit=fit, transform=transform), "pkg/fit.py") == []
    moved = transform.replace("torch.tensor([[1, 2], [3, 4]])", "torch.tensor([[1, 2], [3, 4]]).cuda()")
    found = confident_findings(tmp_path, package(fit=fit, transform=moved), "pkg/fit.py")
    assert sorted(code for code, _, _ in found) == ["SYNC102", "SYNC301"]


def test_a_flag_named_like_a_device_tensor_is_no_device_data_for_the_callee(tmp_path: Path) -> None:
    # pytorch_metric_learning: ``is_cuda = query.is_cuda`` handed on to a helper that tests it.
    search = """
    import torch

    class FaissKNN:
        def __call__(self, query, k):
            is_cuda = query.is_cuda
            return try_gpu(query, k, is_cuda)

    def try_gpu(query, k, is_cuda):
        if is_cuda:
            return query.topk(k)
        return query.cpu().topk(k)
    """
    found = findings(tmp_path, package(search=search), "pkg/search.py")
    assert ("SYNC502", 10) not in found
    assert ("SYNC103", 12) in found


BACKEND_DEFAULT = """
import torch

if torch.cuda.is_available():
    torch.set_default_device("cuda")
"""

BACKEND_HELPER = """
import torch

def set_up():
    torch.set_default_device("cuda")
"""

SCRIPT_DEFAULT = """
import torch

if __name__ == "__main__":
    torch.set_default_device("cuda")
"""

BIASED_NET = """
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.b = torch.nn.Parameter(torch.tensor(0.0))
"""


def test_a_default_device_set_at_import_elsewhere_puts_every_factory_on_the_accelerator(tmp_path: Path) -> None:
    # DeepXDE's backend makes CUDA the default device when it is imported: ``torch.tensor(0.0)``
    # in any model of the project then copies a host number to the GPU.
    files = package(backend=BACKEND_DEFAULT, net=BIASED_NET)
    assert ("SYNC201", 7) in findings(tmp_path / "imported", files, "pkg/net.py")
    # A function that sets it runs only if someone calls it: the project's factories stay where they were.
    assert findings(tmp_path / "called", package(backend=BACKEND_HELPER, net=BIASED_NET), "pkg/net.py") == []
    # So does a module that sets it only when run as a script (LLM Compressor's vendored DeepSeek model).
    assert findings(tmp_path / "script", package(backend=SCRIPT_DEFAULT, net=BIASED_NET), "pkg/net.py") == []
