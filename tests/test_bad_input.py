"""Whatever a repository contains, a run never crashes: broken files become one SYNC001 finding
and every other file is still linted. One test per kind of bad input."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from syncllint.cli import cli
from syncllint.config import Settings
from syncllint.discovery import discover
from syncllint.engine import lint_source
from syncllint.runner import lint_files, lint_path

SYNC = 'import torch\nx = torch.ones(1, device="cuda").item()\n'
SETTINGS = Settings(select=("ALL",))


def found(path: Path) -> list[tuple[str, int, int]]:
    result = lint_path(str(path), SETTINGS)
    assert result.internal_error is None, result.internal_error
    return [(d.code, d.start.row, d.start.column) for d in result.diagnostics]


def run_check(tmp_path: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["check", str(tmp_path), "--isolated", "-j", "1", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def test_syntax_error_is_one_finding_with_the_parsers_message_and_the_rest_goes_on(tmp_path: Path) -> None:
    (tmp_path / "a_broken.py").write_text("def f(:\n    pass\n")
    (tmp_path / "b_fine.py").write_text(SYNC)
    code, output = run_check(tmp_path)
    assert code == 1
    lines = output.splitlines()
    assert lines[0].endswith("a_broken.py:1:7: SYNC001 cannot parse file: invalid syntax [high]")
    assert "b_fine.py:2:5: SYNC101" in lines[1]


def test_non_utf8_with_a_pep263_cookie_is_decoded(tmp_path: Path) -> None:
    path = tmp_path / "latin.py"
    path.write_bytes(b"# -*- coding: latin-1 -*-\nimport torch\ns = '\xe9\xe9'; x = torch.ones(1, device='cuda').item()\n")
    assert found(path) == [("SYNC101", 3, 15)]  # columns count characters, not bytes


def test_non_utf8_without_a_cookie_is_one_finding(tmp_path: Path) -> None:
    path = tmp_path / "latin.py"
    path.write_bytes(b"s = '\xe9'\n")
    assert found(path) == [("SYNC001", 1, 1)]


def test_unknown_encoding_cookie_is_one_finding(tmp_path: Path) -> None:
    path = tmp_path / "odd.py"
    path.write_bytes(b"# -*- coding: klingon -*-\nx = 1\n")
    assert found(path) == [("SYNC001", 1, 1)]


def test_bom(tmp_path: Path) -> None:
    path = tmp_path / "bom.py"
    path.write_bytes(b"\xef\xbb\xbf" + SYNC.encode())
    assert found(path) == [("SYNC101", 2, 5)]


@pytest.mark.parametrize("newline", ["\r\n", "\r", "mixed"])
def test_crlf_cr_and_mixed_line_endings(tmp_path: Path, newline: str) -> None:
    lines = ["import torch", "y = 1", 'x = torch.ones(1, device="cuda").item()', ""]
    if newline == "mixed":
        text = lines[0] + "\r\n" + lines[1] + "\n" + lines[2] + "\r\n"
    else:
        text = newline.join(lines)
    path = tmp_path / "endings.py"
    path.write_bytes(text.encode())
    assert found(path) == [("SYNC101", 3, 5)]


def test_tabs_and_form_feeds(tmp_path: Path) -> None:
    path = tmp_path / "tabs.py"
    path.write_bytes(b"import torch\n\x0c\ndef f():\n\tif True:\n\t\treturn torch.ones(1, device='cuda').item()\n")
    assert found(path) == [("SYNC101", 5, 10)]


def test_nul_bytes(tmp_path: Path) -> None:
    path = tmp_path / "nul.py"
    path.write_bytes(b"x = 1\x00\n")
    assert found(path) == [("SYNC001", 1, 1)]


@pytest.mark.parametrize("seed", range(20))
def test_random_bytes(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    path = tmp_path / "random.py"
    path.write_bytes(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 4000))))
    assert {code for code, _, _ in found(path)} <= {"SYNC001"}


def test_a_100k_line_file(tmp_path: Path) -> None:
    # Like a large generated module: a 97,000-line data string, then 3,000 lines of code and comments
    # (the suite must stay fast on a loaded 2-core CI machine; the corpus script covers big code).
    data = '"""\n' + "".join(f"row {i}: {i * 7 % 13}\n" for i in range(96_997)) + '"""\n'
    code = "".join(f"v{i} = {i}\n" if i % 3 else "# generated\n" for i in range(2_999))
    path = tmp_path / "big.py"
    path.write_text("import torch\n" + data + code + 'x = torch.ones(1, device="cuda").item()\n')
    assert path.read_text().count("\n") == 100_000
    assert found(path) == [("SYNC101", 100_000, 5)]


def test_brackets_nested_past_cpythons_limit(tmp_path: Path) -> None:
    # libcst's native parser overflows the C stack (a segfault) at about 2,000 levels.
    path = tmp_path / "deep.py"
    path.write_text("x = " + "(" * 5000 + "1" + ")" * 5000 + "\n")
    result = lint_path(str(path), SETTINGS)
    assert [(d.code, d.message) for d in result.diagnostics] == [
        ("SYNC001", "cannot parse file: too many nested parentheses")
    ]


def test_brackets_in_strings_do_not_count() -> None:
    source = "import torch\ns = '" + "(" * 500 + "'\nx = torch.ones(1, device='cuda').item()\n"
    assert [d.code for d in lint_source(source, "s.py", SETTINGS).diagnostics] == ["SYNC101"]


def test_deep_but_legal_nesting_is_still_analysed() -> None:
    # Deeper than the default recursion limit lets libcst's visitors go: analysed on a big stack.
    chain = " + ".join(["x"] * 600)
    source = f"import torch\nx = torch.ones(1, device='cuda')\ny = {chain} + x.item()\n"
    limit = sys.getrecursionlimit()
    assert [(d.code, d.start.row) for d in lint_source(source, "chain.py", SETTINGS).diagnostics] == [("SYNC101", 3)]
    assert sys.getrecursionlimit() == limit


def test_nested_brackets_within_the_limit() -> None:
    source = "import torch\nx = torch.ones(1, device='cuda')\ny = " + "[" * 150 + "x.item()" + "]" * 150 + "\n"
    assert [d.code for d in lint_source(source, "nest.py", SETTINGS).diagnostics] == ["SYNC101"]


def test_symlink_loops(tmp_path: Path) -> None:
    (tmp_path / "self.py").symlink_to("self.py")
    (tmp_path / "a.py").symlink_to("b.py")
    (tmp_path / "b.py").symlink_to("a.py")
    (tmp_path / "loop").symlink_to(tmp_path, target_is_directory=True)
    (tmp_path / "dangling.py").symlink_to(tmp_path / "nowhere.py")
    (tmp_path / "real.py").write_text(SYNC)
    code, output = run_check(tmp_path)
    assert code == 1
    assert [line.split(":")[0].rsplit("/", 1)[-1] for line in output.splitlines()[:-1]] == ["real.py"]


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = tmp_path / "secret.py"
    secret.write_text(SYNC)
    (tmp_path / "open.py").write_text(SYNC)
    if os.geteuid() == 0:  # chmod 000 does not stop root: make the read fail instead
        real = Path.read_bytes

        def read_bytes(self: Path) -> bytes:
            if self.name == "secret.py":
                raise PermissionError(13, "Permission denied", str(self))
            return real(self)

        monkeypatch.setattr(Path, "read_bytes", read_bytes)
    else:
        secret.chmod(0)
    results = lint_files(discover([str(tmp_path)], SETTINGS, False).files, SETTINGS, jobs=1)
    assert [(Path(r.filename).name, [d.code for d in r.diagnostics]) for r in results] == [
        ("open.py", ["SYNC101"]),
        ("secret.py", ["SYNC001"]),
    ]
    assert "Permission denied" in results[1].diagnostics[0].message


def test_unreadable_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "hidden.py").write_text(SYNC)
    (tmp_path / "open.py").write_text(SYNC)
    if os.geteuid() == 0:  # root reads anything: make listing the folder fail as it would for a user
        real = os.scandir

        def scandir(path: object = ".") -> object:
            if str(path).endswith("locked"):
                raise PermissionError(13, "Permission denied", str(path))
            return real(path)  # type: ignore[arg-type]

        monkeypatch.setattr(os, "scandir", scandir)
    else:
        locked.chmod(0)
    try:
        found = discover([str(tmp_path)], SETTINGS, False)
        result = CliRunner().invoke(cli, ["check", str(tmp_path), "--isolated", "-j", "1"])
    finally:
        locked.chmod(0o755)
    assert [f.name for f in found.files] == ["open.py"]
    assert [u.split(": ")[1] for u in found.unreadable] == ["Permission denied"]
    assert result.exit_code == 1 and "open.py:2:5: SYNC101" in result.stdout
    assert "warning: cannot read folder" in result.stderr and "locked" in result.stderr


def test_files_that_vanish_during_a_run(tmp_path: Path) -> None:
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text(SYNC)
    files = discover([str(tmp_path)], SETTINGS, False).files
    (tmp_path / "b.py").unlink()
    results = lint_files(files, SETTINGS, jobs=1)
    assert [[d.code for d in r.diagnostics] for r in results] == [["SYNC101"], ["SYNC001"], ["SYNC101"]]
    assert "No such file" in results[1].diagnostics[0].message


def test_a_fifo_named_like_a_python_file_does_not_block(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    assert discover([str(tmp_path)], SETTINGS, False).files == ()  # skipped in walks
    assert found(fifo) == [("SYNC001", 1, 1)]  # named explicitly: reported, not read


def test_python2_files(tmp_path: Path) -> None:
    path = tmp_path / "old.py"
    path.write_text('print "hello"\nexec "x = 1"\n')
    result = lint_path(str(path), SETTINGS)
    [d] = result.diagnostics
    assert (d.code, d.start.row) == ("SYNC001", 1)
    assert "print" in d.message


NEWEST_SYNTAX = '''\
import torch

type Pair[T] = tuple[T, T]

class Box[T: torch.Tensor]:
    def read[S](self, x: T, y: S) -> float:
        return x.item()

def f[*Ts, **P](t: torch.Tensor) -> None:
    try:
        pass
    except* ValueError as group:
        raise
    match t.dim():
        case 0 | 1:
            pass
    if (n := t.sum().item()) > 0:
        print(f"{f"{t.max().item()!r:>{n}}"}")
'''


def test_newest_syntax_libcst_supports() -> None:
    found = [(d.code, d.start.row) for d in lint_source(NEWEST_SYNTAX, "new.py", SETTINGS).diagnostics]
    assert found == [("SYNC101", 7), ("SYNC101", 17), ("SYNC101", 18)]


def test_a_bug_in_a_rule_is_an_internal_error_for_that_file_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from syncllint import engine

    (tmp_path / "a.py").write_text(SYNC)
    (tmp_path / "boom.py").write_text(SYNC)
    real = engine.lint_source

    def flaky(source: str, filename: str, settings: Settings, **options):  # type: ignore[no-untyped-def]
        if filename.endswith("boom.py"):
            raise KeyError("a rule bug")
        return real(source, filename, settings, **options)

    monkeypatch.setattr(engine, "lint_source", flaky)
    result = CliRunner().invoke(cli, ["check", str(tmp_path), "--isolated", "-j", "1"])
    assert result.exit_code == 2
    assert "a.py:2:5: SYNC101" in result.stdout
    assert "internal error:" in result.stderr and "boom.py: KeyError" in result.stderr

    (tmp_path / "a.py").unlink()
    alone = CliRunner().invoke(cli, ["check", str(tmp_path), "--isolated", "-j", "1"])
    assert alone.exit_code == 2 and "All checks passed" not in alone.stdout


@pytest.mark.skipif(
    __import__("multiprocessing").get_start_method() != "fork", reason="the crash is planted through fork inheritance"
)
def test_a_worker_that_dies_costs_only_its_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from syncllint import runner

    for i in range(20):
        (tmp_path / f"m{i:02}.py").write_text(SYNC)
    (tmp_path / "m05.py").write_text("CRASH = 1\n")
    real = runner._lint_path

    def crashing(path: str, settings: Settings, *rest: object):  # type: ignore[no-untyped-def]
        if Path(path).read_text() == "CRASH = 1\n":
            os._exit(139)  # what a segfault in native code looks like to the pool
        return real(path, settings, *rest)

    monkeypatch.setattr(runner, "_lint_path", crashing)  # inherited by the forked workers
    monkeypatch.setattr(runner, "POOL_MIN_BYTES", 0)  # small files would be linted in-process
    results = lint_files(sorted(tmp_path.iterdir()), SETTINGS, jobs=2)
    assert [Path(r.filename).name for r in results if r.internal_error] == ["m05.py"]
    assert sum(1 for r in results if [d.code for d in r.diagnostics] == ["SYNC101"]) == 19


def test_a_fix_run_that_ends_in_an_internal_error_does_not_say_all_checks_passed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from syncllint import fixer

    (tmp_path / "boom.py").write_text(SYNC)

    def broken(source: str, filename: str, settings: Settings, **options):  # type: ignore[no-untyped-def]
        raise KeyError("a rule bug")

    monkeypatch.setattr(fixer, "lint_source", broken)  # what the fix loop lints with
    result = CliRunner().invoke(cli, ["check", str(tmp_path), "--fix", "--isolated", "-j", "1"])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code == 2
    assert "internal error:" in result.stderr and "KeyError" in result.stderr
    assert "All checks passed" not in result.stdout
    assert (tmp_path / "boom.py").read_text() == SYNC


@pytest.mark.skipif(
    __import__("multiprocessing").get_start_method() != "fork", reason="the crash is planted through fork inheritance"
)
def test_a_fix_worker_that_dies_costs_only_its_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from syncllint import fix_run

    upload = 'import torch\n\ndef f(ids):\n    return torch.tensor([1, 2], device="cuda")\n'
    for i in range(20):
        (tmp_path / f"m{i:02}.py").write_text(upload)
    (tmp_path / "m05.py").write_text("CRASH = 1\n")
    real = fix_run._process_path

    def crashing(path: str, *rest: object):  # type: ignore[no-untyped-def]
        if Path(path).read_text() == "CRASH = 1\n":
            os._exit(139)
        return real(path, *rest)

    monkeypatch.setattr(fix_run, "_process_path", crashing)  # inherited by the forked workers
    paths = [str(p) for p in sorted(tmp_path.iterdir())]
    results = fix_run.process_paths(paths, SETTINGS, fix_run.FixOptions(fix=True), jobs=2)
    assert [Path(name).name for name, outcome in results if outcome.error] == ["m05.py"]
    assert len(results) == 20
    fixed = [p for p in tmp_path.iterdir() if "pin_memory=True" in p.read_text()]
    assert len(fixed) == 19 and (tmp_path / "m05.py").read_text() == "CRASH = 1\n"
    assert list(tmp_path.glob(".*.syncllint-tmp")) == []  # no temporary file of a worker ended mid-write
