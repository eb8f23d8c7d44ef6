"""Jupyter notebooks are linted cell by cell, with locations that name the cell."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from syncllint.cli import cli
from syncllint.config import Settings
from syncllint.notebook import lint_notebook, neutralize_magics


def notebook(*cells: tuple[str, str], language: str = "python") -> str:
    return json.dumps(
        {
            "nbformat": 4,
            "nbformat_minor": 5,
            "metadata": {"language_info": {"name": language}},
            "cells": [
                {"cell_type": kind, "metadata": {}, "source": text.splitlines(keepends=True),
                 **({"outputs": [], "execution_count": None} if kind == "code" else {})}
                for kind, text in cells
            ],
        }
    )


DEMO = notebook(
    ("markdown", "# A decode loop\n"),
    ("code", 'import torch\n%matplotlib inline\nx = torch.randn(4, device="cuda")\n'),
    ("markdown", "Now read it back:\n"),
    ("code", "!nvidia-smi\ny = x.sum().item()\n"),
)


def _lint(text: str) -> list[tuple[str, int | None, int, int, str]]:
    result = lint_notebook(text.encode(), "nb.ipynb", Settings())
    assert result.internal_error is None
    return [(d.code, d.cell, d.start.row, d.start.column, d.confidence.label) for d in result.diagnostics]


def test_findings_name_the_cell_and_the_row_inside_it() -> None:
    # The import in cell 2 informs cell 4: the device is known, so confidence is high.
    assert _lint(DEMO) == [("SYNC101", 4, 2, 5, "high")]


def test_concise_and_json_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "nb.ipynb").write_text(DEMO)
    monkeypatch.chdir(tmp_path)
    concise = CliRunner().invoke(cli, ["check", ".", "--isolated"])  # found by the directory walk
    assert concise.exit_code == 1
    assert concise.output.startswith("nb.ipynb:cell 4:2:5: SYNC101 ")
    as_json = json.loads(CliRunner().invoke(cli, ["check", "nb.ipynb", "--isolated", "--output-format", "json"]).output)
    assert [(f["cell"], f["location"]["row"], f["location"]["column"]) for f in as_json] == [(4, 2, 5)]
    full = CliRunner().invoke(cli, ["check", "nb.ipynb", "--isolated", "--output-format", "full"])
    assert "2 | y = x.sum().item()" in full.output


def test_magics_are_neutralized_without_moving_rows() -> None:
    cell = "%load_ext autoreload\nx = !ls\nfor i in y:\n    %time f(i)\ns = ('%d'\n     % 5)\nf?\n"
    assert neutralize_magics(cell) == "pass\npass\nfor i in y:\n    pass\ns = ('%d'\n     % 5)\npass\n"
    assert neutralize_magics("%%bash\nls -l\n") is None
    assert neutralize_magics("%%time\nx = 1\n") == "pass\nx = 1\n"


def test_a_broken_cell_is_reported_and_the_others_still_linted() -> None:
    broken = notebook(
        ("code", 'import torch\nx = torch.randn(4, device="cuda")\n'),
        ("code", "def f(:\n"),
        ("code", "y = x.sum().item()\n"),
    )
    assert _lint(broken) == [("SYNC001", 2, 1, 7, "high"), ("SYNC101", 3, 1, 5, "high")]


def test_non_python_notebooks_and_cells_are_skipped() -> None:
    assert _lint(notebook(("code", "x <- c(1, 2)\n"), language="R")) == []
    assert _lint(notebook(("code", "%%bash\nfor f in *; do echo $f; done\n"))) == []


@pytest.mark.parametrize(
    "text",
    ["", "not json", "[]", '{"cells": 3}', '{"cells": [{"cell_type": "code", "source": 5}]}', "\xff\xfe"],
)
def test_malformed_notebooks_are_one_finding(text: str) -> None:
    found = _lint(text)
    assert [f[0] for f in found] == ["SYNC001"]


def test_cells_may_be_plain_strings_and_raw_cells_are_ignored() -> None:
    text = json.dumps({"cells": [
        {"cell_type": "raw", "source": "x.item()"},
        {"cell_type": "code", "source": 'import torch\ntorch.ones(1, device="cuda").item()'},
    ]})
    assert _lint(text) == [("SYNC101", 2, 2, 1, "high")]
