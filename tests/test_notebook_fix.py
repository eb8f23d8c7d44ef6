"""``check --fix`` on notebooks: fixed cell by cell, written back as the same notebook."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from syncllint.cli import cli
from syncllint.config import Settings
from syncllint.notebook_fix import fix_notebook_text

UPLOAD = 'ids = torch.tensor([1, 2], device="cuda")'
UPLOADED = 'ids = torch.tensor([1, 2], pin_memory=True).to("cuda", non_blocking=True)'
OUTPUT = {"name": "stdout", "output_type": "stream", "text": ["tensor([1, 2])\n"]}


def _notebook(**layout: object) -> str:
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Upload \u00e9\n"]},
        {"cell_type": "code", "execution_count": 1, "metadata": {"tags": ["setup"]}, "outputs": [OUTPUT],
         "source": ["import torch\n", "%matplotlib inline"]},
        {"cell_type": "code", "execution_count": 2, "metadata": {}, "outputs": [OUTPUT],
         "source": ["%time x = 1\n", UPLOAD + "\n", "!nvidia-smi"]},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": UPLOAD},
        {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": ["%%bash\n", UPLOAD]},
    ]
    meta = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}
    data = {"cells": cells, "metadata": meta, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(data, **layout)  # type: ignore[arg-type]


NBFORMAT = _notebook(indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def _run(*args: str, stdin: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["check", "--isolated", *args], input=stdin)
    return result.exit_code, result.output


def test_fix_rewrites_only_the_fixed_sources_and_keeps_everything_else(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    path.write_text(NBFORMAT, encoding="utf-8")
    code, output = _run("--fix", str(path))
    assert code == 0, output
    after = path.read_text(encoding="utf-8")
    # Byte for byte the same file but for the two fixed lines (the %%bash cell is not Python).
    expected = NBFORMAT.replace(json.dumps(UPLOAD + "\n"), json.dumps(UPLOADED + "\n"), 1)
    expected = expected.replace(f'"source": {json.dumps(UPLOAD)}', f'"source": {json.dumps(UPLOADED)}', 1)
    assert after == expected
    assert after != NBFORMAT
    cells = json.loads(after)["cells"]
    assert cells[1]["source"] == ["import torch\n", "%matplotlib inline"]  # magics kept
    assert cells[2]["source"][0] == "%time x = 1\n" and cells[2]["source"][2] == "!nvidia-smi"
    assert cells[4]["source"] == ["%%bash\n", UPLOAD]
    assert cells[2]["outputs"] == [OUTPUT] and cells[1]["metadata"] == {"tags": ["setup"]}
    # A second --fix is a no-op.
    assert _run("--fix", str(path)) == (0, "All checks passed!\n")
    assert path.read_text(encoding="utf-8") == after


@pytest.mark.parametrize("layout", [{}, {"indent": 2}, {"indent": 1, "ensure_ascii": True}])
def test_the_json_layout_of_the_file_is_kept(tmp_path: Path, layout: dict[str, object]) -> None:
    original = _notebook(**layout)
    outcome = fix_notebook_text(original, "nb.ipynb", Settings())
    assert outcome.changed and outcome.error is None
    expected = original.replace(json.dumps(UPLOAD + "\n"), json.dumps(UPLOADED + "\n"), 1)
    assert outcome.fixed == expected.replace(f'"source": {json.dumps(UPLOAD)}', f'"source": {json.dumps(UPLOADED)}', 1)


def test_a_notebook_on_stdin_is_fixed_to_stdout() -> None:
    code, output = _run("--fix", "--stdin-filename", "nb.ipynb", "-", stdin=NBFORMAT)
    assert code == 0
    # The report (stderr) is mixed into the output, before or after the notebook depending on click.
    fixed, _ = json.JSONDecoder().raw_decode(output[output.index("{") :])
    assert fixed["cells"][3]["source"] == UPLOADED


def test_an_import_added_by_a_fix_lands_before_its_use() -> None:
    cells: list[dict[str, object]] = [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": "from torch import Tensor\n"},
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
         "source": "def f(x: Tensor, v: Tensor) -> None:\n    mask = x > 0\n    x[mask] = v\n"},
    ]
    text = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
    outcome = fix_notebook_text(text, "nb.ipynb", Settings(select=("ALL",)), unsafe=True)
    assert outcome.changed and outcome.error is None, outcome.error
    fixed = json.loads(outcome.fixed)["cells"]
    # At the boundary of two cells an insertion goes to the later one: the earlier may lack a final newline.
    assert fixed[0]["source"] == cells[0]["source"]
    assert fixed[1]["source"].startswith("import torch\n") and "torch.where(mask, v, x)" in fixed[1]["source"]
    again = fix_notebook_text(outcome.fixed, "nb.ipynb", Settings(select=("ALL",)), unsafe=True)
    assert not again.changed


@pytest.mark.parametrize(
    "text",
    [
        '{"cells": [',  # not JSON
        json.dumps({"cells": [{"cell_type": "code", "source": "import torch\n" + UPLOAD + "\nif (:\n"}]}),
        json.dumps({"cells": [{"cell_type": "code", "source": ["import torch\n", UPLOAD]}],
                    "metadata": {"language_info": {"name": "julia"}}}),
    ],
    ids=["invalid-json", "cell-that-does-not-parse", "not-python"],
)
def test_notebooks_that_cannot_be_fixed_safely_are_not_written(tmp_path: Path, text: str) -> None:
    path = tmp_path / "nb.ipynb"
    path.write_text(text, encoding="utf-8")
    _run("--fix", str(path))
    assert path.read_text(encoding="utf-8") == text
    assert [p.name for p in tmp_path.iterdir()] == ["nb.ipynb"]


def test_diff_shows_the_notebook_change_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    path.write_text(NBFORMAT, encoding="utf-8")
    code, output = _run("--diff", str(path))
    assert code == 1
    assert "+    " + json.dumps(UPLOADED + "\n") in output
    assert path.read_text(encoding="utf-8") == NBFORMAT


def test_what_is_left_after_a_fix_is_shown_with_its_cell_source(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    data = json.loads(NBFORMAT)
    data["cells"][3]["source"] = "y = torch.ones(2, device='cuda').sum().item()\n"
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    code, output = _run("--fix", "--output-format", "full", str(path))
    assert code == 1
    assert "nb.ipynb:cell 4:1:5: SYNC101" in output
    assert "1 | y = torch.ones(2, device='cuda').sum().item()" in output
    assert "pin_memory=True" in json.loads(path.read_text(encoding="utf-8"))["cells"][2]["source"][1]


def test_add_noqa_does_not_touch_a_notebook_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    text = json.dumps({"cells": [{"cell_type": "code", "source": "import torch\nx = torch.ones(1, device='cuda').item()\n"}]})
    path.write_text(text, encoding="utf-8")
    code, output = _run("--add-noqa", str(path))
    assert code == 2 and "does not mark findings in notebooks" in output
    assert path.read_text(encoding="utf-8") == text
