"""Apply fixes: non-overlapping edits from the end of the file, re-lint, repeat until nothing changes.

The result must parse (libcst) and compile, else the file is left as it was and an error names the
rules whose fixes broke it. Writes are atomic (a temp file in the same folder, then ``os.replace``)
and keep the file's mode, encoding (PEP 263 cookie), BOM and line endings: only the edited spans
change, byte for byte.
"""

from __future__ import annotations

import glob
import os
import re
import stat
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from syncllint.config import Settings
from syncllint.diagnostics import Applicability, Diagnostic, Fix, Location
from syncllint.engine import lint_source
from syncllint.project.facts import NO_LINKED_FACTS, LinkedFacts
from syncllint.results import parse_error
from syncllint.runner import decode_source

MAX_ROUNDS = 10
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class FixOutcome:
    """What fixing one file's text produced."""

    original: str
    fixed: str
    fixed_counts: Counter[str] = field(default_factory=Counter)  # code -> findings fixed
    remaining: tuple[Diagnostic, ...] = ()
    error: str | None = None  # an internal error line: the fixes of these rules broke the file

    @property
    def changed(self) -> bool:
        return self.fixed != self.original


def is_applicable(fix: Fix | None, unsafe: bool) -> bool:
    if fix is None:
        return False
    return fix.applicability is Applicability.SAFE or (unsafe and fix.applicability is Applicability.UNSAFE)


class _Offsets:
    """1-based (row, column) -> offset in the text; columns count characters, as libcst does."""

    def __init__(self, text: str) -> None:
        self._starts = [0] + [m.end() for m in _LINE_BREAK.finditer(text)]
        self._length = len(text)

    def __call__(self, where: Location) -> int:
        row = where.row - 1
        if row >= len(self._starts):
            return self._length
        return min(self._starts[row] + where.column - 1, self._length)


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    if a[0] == a[1] and b[0] == b[1]:
        return a[0] == b[0]  # two insertions at one point: order would be arbitrary
    return max(a[0], b[0]) < min(a[1], b[1]) or (a[0] == a[1] and b[0] < a[0] < b[1]) or (
        b[0] == b[1] and a[0] < b[0] < a[1]
    )


def apply_fixes(text: str, fixes: Sequence[tuple[str, Fix]]) -> tuple[str, list[str]]:
    """Apply every fix that overlaps no fix already taken (in source order); return the text and
    the codes of the fixes applied. A fix is all its edits or nothing; an edit shared verbatim by
    two fixes (the same import) is applied once."""
    offsets = _Offsets(text)
    taken: dict[tuple[int, int, str], None] = {}
    applied: list[str] = []
    ordered = sorted(fixes, key=lambda cf: min((e.start, e.end) for e in cf[1].edits))
    for code, fix in ordered:
        spans = [(offsets(e.start), offsets(e.end), e.content) for e in fix.edits]
        new = [s for s in spans if s not in taken]
        clash = any(_overlaps(s[:2], t[:2]) for s in new for t in taken) or any(
            _overlaps(a[:2], b[:2]) for i, a in enumerate(new) for b in new[i + 1 :]
        )
        if clash:
            continue
        taken.update(dict.fromkeys(new))
        applied.append(code)
    out = text
    # From the end, so earlier offsets stay valid; at one start, the longer span goes first so an
    # insertion at that point lands before the replacement's text.
    for start, end, content in sorted(taken, key=lambda s: (s[0], s[1]), reverse=True):
        out = out[:start] + content + out[end:]
    return out, applied


def invalid_reason(text: str, filename: str) -> str | None:
    """Why ``text`` is not valid Python (libcst and ``compile``), or None."""
    try:
        cst.parse_module(text)
        compile(text, filename, "exec", dont_inherit=True)
    except (cst.ParserSyntaxError, SyntaxError, ValueError) as err:
        return f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else err}"
    return None


def fix_source(
    text: str, filename: str, settings: Settings, *, unsafe: bool = False, linked: LinkedFacts = NO_LINKED_FACTS
) -> FixOutcome:
    """Fix ``text`` until no applicable fix is left (at most MAX_ROUNDS rounds)."""
    current = text
    counts: Counter[str] = Counter()
    result = lint_source(current, filename, settings, linked=linked)
    for _ in range(MAX_ROUNDS):
        fixes = [(d.code, d.fix) for d in result.diagnostics if d.fix is not None and is_applicable(d.fix, unsafe)]
        if not fixes:
            break
        new_text, applied = apply_fixes(current, fixes)
        if not applied or new_text == current:
            break
        reason = invalid_reason(new_text, filename)
        if reason is not None:
            codes = ", ".join(sorted(set(applied)))
            original = lint_source(text, filename, settings, linked=linked).diagnostics
            message = f"fixes of {codes} made {filename} invalid ({reason}); the file was left unchanged"
            return FixOutcome(text, text, Counter(), original, message)
        counts.update(applied)
        current = new_text
        result = lint_source(current, filename, settings, linked=linked)
    return FixOutcome(text, current, counts, result.diagnostics)


_TEMPORARY_SUFFIX = ".syncllint-tmp"


def write_atomic(path: Path, text: str, encoding: str, bom: bool) -> None:
    """Replace ``path``'s content in one step, keeping its mode (symlinks: the target is written)."""
    target = Path(os.path.realpath(path))
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode(encoding)
    mode = stat.S_IMODE(target.stat().st_mode)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=_TEMPORARY_SUFFIX, dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def remove_stray_temporaries(paths: list[str]) -> None:
    """Delete what ``write_atomic`` left of ``paths`` when its process was killed mid-write (a pool
    ends every worker once one dies): the files themselves are whole, old or new."""
    for path in paths:
        target = Path(os.path.realpath(path))
        for stray in target.parent.glob(f".{glob.escape(target.name)}.*{_TEMPORARY_SUFFIX}"):
            try:
                stray.unlink()
            except OSError:
                pass


def fix_path(path: str, settings: Settings, *, unsafe: bool = False, write: bool = True) -> FixOutcome:
    """Fix one file on disk (or only compute the fix when ``write`` is False)."""
    try:
        source = decode_source(Path(path).read_bytes())
    except OSError as err:
        diag = parse_error(path, f"cannot read file: {err.strerror or err}")
        return FixOutcome("", "", remaining=(diag,))
    except (UnicodeDecodeError, SyntaxError, LookupError) as err:
        diag = parse_error(path, f"cannot decode file: {err}")
        return FixOutcome("", "", remaining=(diag,))
    outcome = fix_source(source.text, path, settings, unsafe=unsafe)
    if write and outcome.changed:
        try:
            write_atomic(Path(path), outcome.fixed, source.encoding, source.bom)
        except (OSError, UnicodeEncodeError) as err:
            message = f"cannot write fixes to {path}: {err}"
            return FixOutcome(source.text, source.text, Counter(), outcome.remaining, message)
    return outcome
