"""Values that flow from the engine to the fixer and the reporters."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Confidence(enum.IntEnum):
    """How sure a rule is that the flagged code synchronizes on a real GPU."""

    LOW = 1  # receiver is not known to be a tensor
    MEDIUM = 2  # tensor-like receiver, device unknown
    HIGH = 3  # receiver known to live on an accelerator

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Confidence:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"expected one of low, medium, high; got {text!r}") from None


class Severity(enum.Enum):
    ERROR = "error"  # a sync on a hot path (loop, forward, step, ...)
    WARNING = "warning"  # a sync elsewhere
    INFO = "info"  # explicit waits: visible, intentional, still worth knowing about


class Applicability(enum.Enum):
    """ruff's fix applicability levels."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    DISPLAY_ONLY = "display-only"


@dataclass(frozen=True, order=True)
class Location:
    """A point in a file: 1-based row, 1-based column (ruff's JSON convention)."""

    row: int
    column: int


@dataclass(frozen=True)
class Edit:
    """Replace the text between ``start`` and ``end`` with ``content``."""

    content: str
    start: Location
    end: Location


@dataclass(frozen=True)
class Fix:
    applicability: Applicability
    message: str
    edits: tuple[Edit, ...]


@dataclass(frozen=True)
class Diagnostic:
    """One finding in one file."""

    code: str
    name: str
    message: str
    filename: str
    start: Location
    end: Location
    confidence: Confidence
    severity: Severity
    fix: Fix | None = None
    hot_path: bool = False
    # Source rows of the statement the finding belongs to, for ``# noqa`` matching.
    statement_rows: tuple[int, int] = (0, 0)
    # Notebooks: the cell's 1-based position in the notebook; rows are then relative to the cell.
    cell: int | None = None

    @property
    def where(self) -> str:
        """``file:row:col`` or, in a notebook, ``file:cell N:row:col`` (ruff's notation)."""
        cell = f":cell {self.cell}" if self.cell is not None else ""
        return f"{self.filename}{cell}:{self.start.row}:{self.start.column}"

    @property
    def source_key(self) -> str:
        """The key of this finding's source text in the ``sources`` map the reporters get."""
        return self.filename if self.cell is None else f"{self.filename}:cell {self.cell}"

    @property
    def sort_key(self) -> tuple[str, int, int, int, str]:
        return (self.filename, self.cell or 0, self.start.row, self.start.column, self.code)


PARSE_ERROR_CODE = "SYNC001"
PARSE_ERROR_NAME = "syntax-error"
