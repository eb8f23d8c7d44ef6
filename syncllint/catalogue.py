"""The rule catalogue: one Markdown page per rule under the top-level ``rules/`` folder.

A page starts with ``# CODE: name``, has ruff-style sections (What it does, Why is this bad,
Example, Use instead, Fix safety) and fenced examples whose info string says what they are:

- ```` ```python flag ```` must produce at least one finding of the page's rule;
- ```` ```python ok ```` must produce no finding at all;
- ```` ```python fixed ```` is what ``--fix`` turns the preceding ``flag`` example into.

Docs, tests and the GPU harness all read these pages. The wheel ships them as
``syncllint/_catalogue``; a source checkout reads ``rules/`` directly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_HEADING = re.compile(r"^#\s+(?P<code>SYNC\d{3}):\s*(?P<name>[a-z0-9-]+)\s*$", re.MULTILINE)
_FENCE = re.compile(r"^```python[ \t]+(?P<kind>flag|ok|fixed)[^\n]*\n(?P<body>.*?)^```\s*$", re.MULTILINE | re.DOTALL)
_SECTION = re.compile(r"^##\s+(?P<title>.+?)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Example:
    kind: str  # "flag", "ok" or "fixed"
    code: str
    line: int  # line of the opening fence in the page, for test ids


@dataclass(frozen=True)
class RulePage:
    code: str
    name: str
    path: Path
    text: str
    examples: tuple[Example, ...]

    def section(self, title: str) -> str:
        """The text of a ``## title`` section, '' when absent."""
        matches = list(_SECTION.finditer(self.text))
        for i, match in enumerate(matches):
            if match.group("title").lower() == title.lower():
                end = matches[i + 1].start() if i + 1 < len(matches) else len(self.text)
                return self.text[match.end():end].strip()
        return ""

    def of_kind(self, kind: str) -> tuple[Example, ...]:
        return tuple(e for e in self.examples if e.kind == kind)

    def fix_pairs(self) -> tuple[tuple[Example, Example], ...]:
        """Each ``fixed`` example with the ``flag`` example just before it."""
        pairs: list[tuple[Example, Example]] = []
        previous: Example | None = None
        for example in self.examples:
            if example.kind == "fixed" and previous is not None:
                pairs.append((previous, example))
            if example.kind == "flag":
                previous = example
        return tuple(pairs)


def catalogue_dir() -> Path:
    packaged = Path(__file__).with_name("_catalogue")
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "rules"


def parse_page(path: Path) -> RulePage:
    text = path.read_text(encoding="utf-8")
    heading = _HEADING.search(text)
    if heading is None:
        raise ValueError(f"{path}: a rule page must start with '# SYNCnnn: rule-name'")
    examples = tuple(
        Example(m.group("kind"), m.group("body"), text.count("\n", 0, m.start()) + 1) for m in _FENCE.finditer(text)
    )
    return RulePage(heading.group("code"), heading.group("name"), path, text, examples)


@lru_cache(maxsize=1)
def load_catalogue() -> dict[str, RulePage]:
    pages: dict[str, RulePage] = {}
    for path in sorted(catalogue_dir().glob("SYNC*.md")):
        page = parse_page(path)
        pages[page.code] = page
    return pages


def page_url(code: str) -> str:
    """A pointer to the rule page: repository path, also ``syncllint rule CODE``."""
    return f"rules/{code}.md"
