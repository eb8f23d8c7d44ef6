"""Allowed regions (`with gpu_sync_allowed(...)` in every form) and `# noqa` suppression."""

from __future__ import annotations

import pytest

from tests.conftest import codes, lint

PRELUDE = "import torch\nx = torch.ones(4, device='cuda')\n"


@pytest.mark.parametrize(
    "region",
    [
        "from vllm.utils.gpu_sync_debug import gpu_sync_allowed\nwith gpu_sync_allowed():\n    v = x.item()\n",
        "from vllm.utils.gpu_sync_debug import gpu_sync_allowed\nwith gpu_sync_allowed(first_only=True):\n    v = x.item()\n",
        "from vllm.utils.gpu_sync_debug import gpu_sync_allowed as ok\nwith ok():\n    v = x.item()\n",
        "from .gpu_sync_debug import gpu_sync_allowed\nwith gpu_sync_allowed():\n    v = x.item()\n",
        "from ..utils import gpu_sync_debug\nwith gpu_sync_debug.gpu_sync_allowed():\n    v = x.item()\n",
        "import contextlib\nfrom m import gpu_sync_allowed\nwith open('f') as f, gpu_sync_allowed(), contextlib.suppress(Exception):\n    v = x.item()\n",
        "from contextlib import nullcontext\nfrom m import gpu_sync_allowed\nwith (nullcontext() if fast else gpu_sync_allowed()):\n    v = x.item()\n",
        "from contextlib import nullcontext\nfrom m import gpu_sync_allowed\nwith gpu_sync_allowed() if slow else nullcontext():\n    v = x.item()\n",
        "from m import gpu_sync_allowed\ndef f():\n    with gpu_sync_allowed():\n        for i in range(3):\n            if x.sum() > 0:\n                v = x.tolist()\n",
    ],
)
def test_allowed_region_suppresses(region: str) -> None:
    assert codes(PRELUDE + region) == []


def test_region_ends_with_its_body() -> None:
    source = PRELUDE + "from m import gpu_sync_allowed\nwith gpu_sync_allowed():\n    a = x.item()\nb = x.item()\n"
    assert [(d.code, d.start.row) for d in lint(source)] == [("SYNC101", 6)]


def test_def_and_lambda_inside_region_are_not_covered() -> None:
    source = PRELUDE + (
        "from m import gpu_sync_allowed\n"
        "with gpu_sync_allowed():\n"
        "    def later():\n"
        "        return x.item()\n"
        "    cb = lambda: x.tolist()\n"
        "    now = x.item()\n"
    )
    assert [(d.code, d.start.row) for d in lint(source)] == [("SYNC101", 6), ("SYNC102", 7)]


def test_other_context_managers_do_not_allow() -> None:
    source = PRELUDE + "import torch\nwith torch.no_grad():\n    v = x.item()\n"
    assert codes(source) == ["SYNC101"]


def test_configured_allowed_context() -> None:
    source = PRELUDE + "from util import sync_ok\nwith sync_ok():\n    v = x.item()\n"
    assert codes(source) == ["SYNC101"]
    assert codes(source, allowed_contexts=("sync_ok",)) == []
    assert codes(source, allowed_contexts=("other.sync_ok",)) == ["SYNC101"]
    assert codes(source, allowed_contexts=("util.sync_ok",)) == []


@pytest.mark.parametrize(
    ("line", "suppressed"),
    [
        ("v = x.item()  # noqa", True),
        ("v = x.item()  # noqa: SYNC101", True),
        ("v = x.item()  # NOQA:sync101", True),
        ("v = x.item()  # noqa: SYNC102, SYNC101", True),
        ("v = x.item()  # noqa: SYNC102", False),
        ("v = x.item()  # noqa: E501", False),
        ("v = x.item()  # something else", False),
        ("v = '# noqa'.join([str(x.item())])", False),
    ],
)
def test_noqa_on_the_line(line: str, suppressed: bool) -> None:
    assert codes(PRELUDE + line + "\n") == ([] if suppressed else ["SYNC101"])


def test_noqa_on_any_line_of_a_multiline_statement() -> None:
    first = PRELUDE + "v = max(  # noqa: SYNC101\n    x.item(),\n    3,\n)\n"
    last = PRELUDE + "v = max(\n    x.item(),\n    3,\n)  # noqa: SYNC101\n"
    other_statement = PRELUDE + "v = 1  # noqa\nw = max(\n    x.item(),\n)\n"
    assert codes(first) == []
    assert codes(last) == []
    assert codes(other_statement) == ["SYNC101"]


def test_noqa_on_compound_statement_header() -> None:
    source = PRELUDE + "for i in range(\n    int(x.sum().item())\n):  # noqa: SYNC101\n    y = x.item()\n"
    assert [(d.code, d.start.row) for d in lint(source)] == [("SYNC101", 6)]


def test_file_level_noqa() -> None:
    assert codes("# syncllint: noqa\n" + PRELUDE + "v = x.item()\nw = x.tolist()\n") == []
    assert codes("# syncllint: noqa: SYNC101\n" + PRELUDE + "v = x.item()\nw = x.tolist()\n") == ["SYNC102"]


def test_a_helper_called_only_inside_an_allowed_region_is_allowed() -> None:
    source = """\
    import torch
    from vllm.utils.gpu_sync_debug import gpu_sync_allowed

    def _sync_ranks(t: torch.Tensor):
        return t.sum().item()

    def _elsewhere_too(t: torch.Tensor):
        return t.max().item()

    def step(t: torch.Tensor):
        with gpu_sync_allowed():
            a = _sync_ranks(t)
            b = _elsewhere_too(t)
        return a + b + _elsewhere_too(t)
    """
    rows = [d.start.row for d in lint(source) if d.code == "SYNC101"]
    assert rows == [8]  # _sync_ranks runs only in the region; _elsewhere_too also outside it
