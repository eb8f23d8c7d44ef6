"""The fix machinery: edit application, rounds, revert on broken output, byte-exact writes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import libcst as cst
import pytest

from syncllint import fixer
from syncllint.config import Settings
from syncllint.diagnostics import (
    Applicability,
    Confidence,
    Diagnostic,
    Edit,
    Fix,
    Location,
    Severity,
)
from syncllint.engine import FileResult
from syncllint.fix_run import FixOptions, process_path
from syncllint.fixer import apply_fixes, fix_path, fix_source
from syncllint.fixes import import_edits

ALL = Settings(select=("ALL",))
UPLOAD = 'import torch\n\nids = torch.tensor([1, 2], device="cuda")  # ids\n'
UPLOADED = 'import torch\n\nids = torch.tensor([1, 2], pin_memory=True).to("cuda", non_blocking=True)  # ids\n'


def _fix(content: str, start: tuple[int, int], end: tuple[int, int]) -> Fix:
    return Fix(Applicability.SAFE, "m", (Edit(content, Location(*start), Location(*end)),))


def test_non_overlapping_edits_apply_from_the_end() -> None:
    text = "a = 1\nb = 2\n"
    out, applied = apply_fixes(text, [("X1", _fix("10", (1, 5), (1, 6))), ("X2", _fix("20", (2, 5), (2, 6)))])
    assert out == "a = 10\nb = 20\n" and applied == ["X1", "X2"]


def test_overlapping_edit_waits_for_the_next_round() -> None:
    text = "value = f(g(x))\n"
    outer = _fix("F(g(x))", (1, 9), (1, 16))
    inner = _fix("G(x)", (1, 11), (1, 15))
    out, applied = apply_fixes(text, [("INNER", inner), ("OUTER", outer)])
    assert out == "value = F(g(x))\n" and applied == ["OUTER"]


def test_an_edit_shared_by_two_fixes_is_applied_once() -> None:
    text = "x = a\ny = b\n"
    imp = Edit("import m\n", Location(1, 1), Location(1, 1))
    one = Fix(Applicability.SAFE, "m", (Edit("m.a", Location(1, 5), Location(1, 6)), imp))
    two = Fix(Applicability.SAFE, "m", (Edit("m.b", Location(2, 5), Location(2, 6)), imp))
    out, applied = apply_fixes(text, [("A", one), ("B", two)])
    assert out == "import m\nx = m.a\ny = m.b\n" and applied == ["A", "B"]


def test_insertion_lands_before_a_replacement_at_the_same_point() -> None:
    text = "x = a\n"
    imp = Edit("import m\n", Location(1, 1), Location(1, 1))
    fix = Fix(Applicability.SAFE, "m", (Edit("m.a = 1", Location(1, 1), Location(1, 6)), imp))
    assert apply_fixes(text, [("A", fix)])[0] == "import m\nm.a = 1\n"


def test_fix_source_rewrites_and_a_second_run_changes_nothing() -> None:
    outcome = fix_source(UPLOAD, "f.py", ALL)
    assert outcome.fixed == UPLOADED and outcome.fixed_counts == {"SYNC201": 1}
    assert fix_source(outcome.fixed, "f.py", ALL).fixed == outcome.fixed


def test_unsafe_fixes_need_the_flag() -> None:
    source = 'import torch\n\ncpu_t = torch.ones(4)\ndev = cpu_t.to("cuda")\n'
    assert fix_source(source, "f.py", ALL).fixed == source
    assert "pin_memory().to(" in fix_source(source, "f.py", ALL, unsafe=True).fixed


def test_broken_output_reverts_the_file_and_names_the_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    source = "x = 1\n"
    bad = Diagnostic(
        "SYNC999", "bad", "m", "f.py", Location(1, 1), Location(1, 6), Confidence.HIGH, Severity.ERROR,
        fix=_fix("def (", (1, 1), (1, 6)),
    )
    monkeypatch.setattr(fixer, "lint_source", lambda text, name, settings, **options: FileResult(name, (bad,)))
    outcome = fix_source(source, "f.py", ALL)
    assert outcome.fixed == source and not outcome.changed
    assert outcome.error is not None and "SYNC999" in outcome.error


def test_rounds_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    # A fix that always finds more to do (x -> xx -> xxx ...) stops after MAX_ROUNDS.
    def endless(text: str, name: str, settings: Settings, **options: object) -> FileResult:
        d = Diagnostic("SYNC998", "grow", "m", name, Location(1, 1), Location(1, 2), Confidence.HIGH,
                       Severity.ERROR, fix=_fix("xx", (1, 1), (1, 2)))
        return FileResult(name, (d,))

    monkeypatch.setattr(fixer, "lint_source", endless)
    outcome = fix_source("x\n", "f.py", ALL)
    assert outcome.fixed_counts["SYNC998"] == fixer.MAX_ROUNDS


def _write(tmp_path: Path, data: bytes, mode: int = 0o644) -> Path:
    path = tmp_path / "f.py"
    path.write_bytes(data)
    os.chmod(path, mode)
    return path


def test_crlf_bom_and_mode_are_kept(tmp_path: Path) -> None:
    original = b"\xef\xbb\xbf" + UPLOAD.replace("\n", "\r\n").encode()
    path = _write(tmp_path, original, 0o755)
    outcome = fix_path(str(path), ALL)
    assert outcome.changed
    assert path.read_bytes() == b"\xef\xbb\xbf" + UPLOADED.replace("\n", "\r\n").encode()
    assert stat.S_IMODE(path.stat().st_mode) == 0o755
    assert [p.name for p in tmp_path.iterdir()] == ["f.py"]  # no temp file left behind


def test_pep263_encoding_is_kept_byte_for_byte(tmp_path: Path) -> None:
    head = "# -*- coding: latin-1 -*-\n# caf\xe9\n"
    path = _write(tmp_path, (head + UPLOAD).encode("latin-1"))
    fix_path(str(path), ALL)
    assert path.read_bytes() == (head + UPLOADED).encode("latin-1")


def test_import_added_once_after_existing_imports_in_crlf(tmp_path: Path) -> None:
    source = (
        '"""Doc."""\r\nfrom __future__ import annotations\r\n\r\nimport numpy as np\r\nfrom torch import Tensor\r\n\r\n'
        "def f(x: Tensor, mask: Tensor, v: Tensor) -> None:\r\n"
        "    mask = x > 0\r\n    x[mask] = v\r\n    x[mask] = v\r\n"
    )
    outcome = fix_source(source, "f.py", ALL, unsafe=True)
    assert outcome.fixed.count("import torch\r\n") == 1
    assert "from torch import Tensor\r\nimport torch\r\n" in outcome.fixed
    assert outcome.fixed.count("x.copy_(torch.where(mask, v, x))\r\n") == 2
    assert "\n" not in outcome.fixed.replace("\r\n", "")


def test_import_edits_skip_bound_names_and_go_after_the_docstring() -> None:
    module = cst.parse_module('"""Doc."""\n\nx = 1\n')
    (edit,) = import_edits(module, (("torch", None), ("torch", None)))
    assert edit.content == "import torch\n" and edit.start == Location(2, 1)
    assert import_edits(cst.parse_module("import torch\n"), (("torch", None),)) == ()
    helper = import_edits(cst.parse_module("import torch\n"), (("vllm.utils.torch_utils", "async_tensor_h2d"),))
    assert helper[0].content == "from vllm.utils.torch_utils import async_tensor_h2d\n"


def test_import_after_a_last_line_without_newline() -> None:
    module = cst.parse_module("import os")
    (edit,) = import_edits(module, (("torch", None),))
    out, _ = apply_fixes("import os", [("X", Fix(Applicability.SAFE, "m", (edit,)))])
    assert out == "import os\nimport torch"
    compile(out, "f.py", "exec")


def test_add_allow_wraps_statements_and_adds_the_import(tmp_path: Path) -> None:
    path = _write(tmp_path, b"import torch\n\nx = torch.randn(4, device='cuda')\nn = x.sum().item()  # why\n")
    outcome = process_path(str(path), ALL, FixOptions(add_allow=True))
    text = path.read_text()
    assert "from syncllint.runtime import gpu_sync_allowed\n" in text
    assert "with gpu_sync_allowed():  # TODO(syncllint): justify or remove\n    n = x.sum().item()  # why\n" in text
    assert outcome.remaining == ()


def test_add_noqa_marks_what_is_left(tmp_path: Path) -> None:
    path = _write(tmp_path, b"import torch\n\nx = torch.randn(4, device='cuda')\nif x.sum().item():  # noqa: SYNC102\n    pass\n")
    outcome = process_path(str(path), ALL, FixOptions(add_noqa=True))
    assert "if x.sum().item():  # noqa: SYNC101, SYNC102\n" in path.read_text()
    assert outcome.remaining == ()


def test_add_allow_falls_back_to_noqa_on_a_compound_header(tmp_path: Path) -> None:
    source = b"import torch\n\nx = torch.randn(4, device='cuda')\nif x.sum().item() > 0:\n    n = x.max().item()\n"
    path = _write(tmp_path, source)
    outcome = process_path(str(path), ALL, FixOptions(add_allow=True))
    text = path.read_text()
    assert "if x.sum().item() > 0:  # noqa: SYNC101\n" in text
    assert "    with gpu_sync_allowed():  # TODO(syncllint): justify or remove\n        n = x.max().item()\n" in text
    assert outcome.remaining == ()
    compile(text, "f.py", "exec")


def test_multi_line_fixes_keep_their_indentation_inside_blocks() -> None:
    source = (
        "import torch\n\n\ndef f(x: torch.Tensor, n: int):\n    x = x.cuda()\n    if n:\n"
        "        x[\n            1, n\n        ] = 0\n"
        "        t = torch.tensor(\n            [1, 2],\n            dtype=torch.int32,\n            device=\"cuda\",\n        )\n"
        "    return x, t\n"
    )
    fixed = fix_source(source, "f.py", ALL).fixed
    assert "        x[\n            1, n\n        ].fill_(0)\n" in fixed
    assert (
        "        t = torch.tensor(\n            [1, 2],\n            dtype=torch.int32,\n            pin_memory=True,\n"
        "        ).to(\"cuda\", non_blocking=True)\n"
    ) in fixed


def test_mixed_line_endings_and_bom_are_kept_outside_the_edit(tmp_path: Path) -> None:
    # Every kind of line break, a form feed, a tab, trailing blanks and no final newline: only the
    # edited span may change.
    head = b"\xef\xbb\xbf# -*- coding: utf-8 -*-\r\nimport torch\n\x0c\r\n# caf\xc3\xa9 \t \r"
    tail = b"\r\n\tpass  \n# end"
    before = b'ids = torch.tensor([1, 2], device="cuda")  # ids'
    after = b'ids = torch.tensor([1, 2], pin_memory=True).to("cuda", non_blocking=True)  # ids'
    path = _write(tmp_path, head + before + b"\nif ids:" + tail)
    outcome = fix_path(str(path), ALL)
    assert outcome.changed and outcome.error is None
    assert path.read_bytes() == head + after + b"\nif ids:" + tail


def test_non_utf8_cookie_keeps_the_non_ascii_bytes_on_an_edited_line(tmp_path: Path) -> None:
    source = "# coding: cp1252\r\nimport torch\r\n\r\nids = torch.tensor([1, 2], device=\"cuda\")  # \u20ac \xe9\r\n"
    path = _write(tmp_path, source.encode("cp1252"))
    fix_path(str(path), ALL)
    expected = source.replace('device="cuda")', 'pin_memory=True).to("cuda", non_blocking=True)')
    assert path.read_bytes() == expected.encode("cp1252")


def test_the_temporary_files_of_a_write_ended_midway_are_swept_and_nothing_else(tmp_path: Path) -> None:
    from syncllint.fixer import remove_stray_temporaries

    (tmp_path / "a[1].py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 2\n")
    stray = tmp_path / ".a[1].py.k3j_x9.syncllint-tmp"
    other = tmp_path / ".b.py.q1w2e3.syncllint-tmp"
    stray.write_text("x = 1  # half\n")
    other.write_text("y = 2  # half\n")
    remove_stray_temporaries([str(tmp_path / "a[1].py")])
    assert sorted(p.name for p in tmp_path.iterdir()) == [".b.py.q1w2e3.syncllint-tmp", "a[1].py", "b.py"]
