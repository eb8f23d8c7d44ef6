"""Functions the project calls only inside ``with gpu_sync_allowed():`` accept their syncs, across modules."""

from __future__ import annotations

from pathlib import Path

from tests.test_project_index import findings, package

MODEL = """
import torch

class Model(torch.nn.Module):
    def select_items(self, pixel_values, sizes):
        return torch.tensor(sizes, device="cuda")

    def item_sizes(self, pixel_values, sizes):
        return torch.tensor(sizes, device="cuda")
"""

RUNNER = """
from vllm.utils.gpu_sync_debug import gpu_sync_allowed

class Manager:
    def select(self, kwargs, sizes):
        with gpu_sync_allowed():
            return self.model.select_items(kwargs["pixel_values"], sizes)

    def specs(self, kwargs, sizes):
        with gpu_sync_allowed():
            first = self.model.item_sizes(kwargs["pixel_values"], sizes)
        return first, self.model.item_sizes(kwargs["pixel_values"], sizes)
"""


def test_a_method_called_only_inside_an_allowed_region_elsewhere_accepts_its_syncs(tmp_path: Path) -> None:
    # ``select_items`` runs only under the runner's ``gpu_sync_allowed()``; ``item_sizes`` is also
    # called outside it, so its copy is reported.
    found = findings(tmp_path, package(model=MODEL, runner=RUNNER), "pkg/model.py")
    assert found == [("SYNC201", 9)]


def test_without_the_allowed_caller_both_are_reported(tmp_path: Path) -> None:
    runner = RUNNER.replace("with gpu_sync_allowed():", "if True:")
    found = findings(tmp_path, package(model=MODEL, runner=runner), "pkg/model.py")
    assert found == [("SYNC201", 6), ("SYNC201", 9)]


def test_a_name_the_framework_calls_by_itself_is_never_taken(tmp_path: Path) -> None:
    model = MODEL.replace("select_items", "forward")
    runner = RUNNER.replace("select_items", "forward")
    found = findings(tmp_path, package(model=model, runner=runner), "pkg/model.py")
    assert found == [("SYNC201", 6), ("SYNC201", 9)]
