"""``# noqa`` comments: which rows suppress which codes."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

_NOQA = re.compile(
    r"#\s*noqa(?P<sep>\s*:\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*))?",
    re.IGNORECASE,
)
_FILE_NOQA = re.compile(
    r"#\s*syncllint\s*:\s*noqa(?:\s*:\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*))?",
    re.IGNORECASE,
)
_CODE_SPLIT = re.compile(r"[\s,]+")

# None in a row's entry means a blanket ``# noqa``.
Codes = frozenset[str] | None


def _codes(text: str | None) -> Codes:
    if not text:
        return None
    return frozenset(c.upper() for c in _CODE_SPLIT.split(text.strip()) if c)


@dataclass(frozen=True)
class NoqaMap:
    rows: dict[int, Codes] = field(default_factory=dict)
    file_codes: Codes = frozenset()  # empty: no file-level noqa; None: the whole file

    def suppresses(self, code: str, first_row: int, last_row: int) -> bool:
        if self.file_codes is None or code in self.file_codes:
            return True
        for row in range(first_row, last_row + 1):
            if row in self.rows:
                codes = self.rows[row]
                if codes is None or code in codes:
                    return True
        return False


def _comments(source: str) -> list[tuple[int, str]]:
    try:
        return [
            (tok.start[0], tok.string)
            for tok in tokenize.generate_tokens(io.StringIO(source).readline)
            if tok.type == tokenize.COMMENT
        ]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        # libcst parsed it, tokenize did not (rare); fall back to a line scan.
        return [(i, line[line.index("#"):]) for i, line in enumerate(source.splitlines(), 1) if "#" in line]


def parse_noqa(source: str) -> NoqaMap:
    if "noqa" not in source.lower():
        return NoqaMap()
    rows: dict[int, Codes] = {}
    file_codes: Codes = frozenset()
    for row, comment in _comments(source):
        file_match = _FILE_NOQA.search(comment)
        if file_match:
            codes = _codes(file_match.group("codes"))
            file_codes = None if codes is None or file_codes is None else file_codes | codes
            continue
        match = _NOQA.search(comment)
        if match:
            codes = _codes(match.group("codes"))
            if match.group("sep") and codes is None:
                codes = frozenset()
            rows[row] = codes
    return NoqaMap(rows, file_codes)
