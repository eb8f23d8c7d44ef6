"""What the runtime checker reports: one ``SyncEvent`` per GPU<->CPU sync, and where it happened."""

from __future__ import annotations

import linecache
import os
import re
import sys
from dataclasses import dataclass, field
from functools import cache, lru_cache
from types import FrameType

# Event kinds (the vocabulary).
SCALAR_READ = "scalar read"
SHAPE_READ = "shape read"
D2H = "D2H"
H2D = "H2D"
EXPLICIT_WAIT = "explicit wait"
RACE = "race"
KINDS = (SCALAR_READ, SHAPE_READ, D2H, H2D, EXPLICIT_WAIT, RACE)

# The rule that covers each op: (preferred code, family). A preferred code that the registry
# does not know (yet) resolves to its family, e.g. "SYNC5xx".
_RULE_OF_OP: dict[str, tuple[str, str]] = {
    "item": ("SYNC101", "SYNC1"),
    "tolist": ("SYNC102", "SYNC1"),
    "cpu": ("SYNC103", "SYNC1"),
    "to(cpu)": ("SYNC103", "SYNC1"),
    "copy_(D2H)": ("SYNC103", "SYNC1"),
    "numpy": ("SYNC103", "SYNC1"),
    "torch.tensor": ("SYNC201", "SYNC2"),
    "as_tensor": ("SYNC201", "SYNC2"),
    "new_tensor": ("SYNC201", "SYNC2"),
    "to(cuda)": ("SYNC202", "SYNC2"),
    "cuda": ("SYNC202", "SYNC2"),
    "copy_(H2D)": ("SYNC202", "SYNC2"),
    "mask index": ("SYNC301", "SYNC3"),
    "nonzero": ("SYNC302", "SYNC3"),
    "masked_select": ("SYNC302", "SYNC3"),
    "unique": ("SYNC303", "SYNC3"),
    "masked write": ("SYNC401", "SYNC4"),
    "masked_fill_": ("SYNC401", "SYNC4"),
    "setitem": ("SYNC402", "SYNC4"),
    "__bool__": ("SYNC501", "SYNC5"),
    "__int__": ("SYNC502", "SYNC5"),
    "__float__": ("SYNC502", "SYNC5"),
    "__index__": ("SYNC503", "SYNC5"),
    "__format__": ("SYNC504", "SYNC5"),
    "__repr__": ("SYNC504", "SYNC5"),
    "equal": ("SYNC601", "SYNC6"),
    "allclose": ("SYNC601", "SYNC6"),
    "linalg check": ("SYNC602", "SYNC6"),
    "torch.cuda.synchronize": ("SYNC701", "SYNC7"),
    "Stream.synchronize": ("SYNC701", "SYNC7"),
    "Event.synchronize": ("SYNC701", "SYNC7"),
    "read before copy done": ("SYNC801", "SYNC8"),
}
_FAMILY_OF_KIND = {SCALAR_READ: "SYNC1", SHAPE_READ: "SYNC3", D2H: "SYNC1", H2D: "SYNC2", EXPLICIT_WAIT: "SYNC7", RACE: "SYNC8"}


@cache
def _registered_codes() -> frozenset[str]:
    try:
        from syncllint.checks import all_rules
    except Exception:  # noqa: BLE001 - the runtime must work without the linter's dependencies
        return frozenset()
    return frozenset(rule.code for rule in all_rules())


def rule_code_for(kind: str, op: str) -> str:
    """The rule code that covers ``op``: a registered code, else the family (``SYNC5xx``)."""
    preferred, family = _RULE_OF_OP.get(op, ("", _FAMILY_OF_KIND.get(kind, "SYNC1")))
    if preferred and preferred in _registered_codes():
        return preferred
    return f"{family}xx"


@dataclass(frozen=True)
class SyncEvent:
    kind: str  # one of KINDS
    op: str  # what synced: "item", "to(cpu)", "nonzero", "torch.cuda.synchronize", ...
    filename: str  # the first frame outside torch and syncllint
    lineno: int
    allowed: bool  # inside gpu_sync_allowed (or torch.compile's own work)
    rule_code: str
    emulated: bool  # seen by the CPU emulation rather than on a real device
    source_line: str = ""

    @property
    def is_sync(self) -> bool:
        """A race is a wrong-result hazard, not a sync."""
        return self.kind != RACE

    def describe(self) -> str:
        where = f"{self.filename}:{self.lineno}"
        what = "race: host read of a non_blocking copy before it finished" if self.kind == RACE else f"GPU->CPU sync ({self.kind})"
        line = f"\n    {self.source_line}" if self.source_line else ""
        tag = " [emulated]" if self.emulated else ""
        return f"{where}: {self.rule_code} {what}: {self.op}{tag}{line}"


@dataclass
class SyncReport:
    """What one ``sync_check`` saw, in order."""

    mode: str
    emulated: bool
    events: list[SyncEvent] = field(default_factory=list)

    @property
    def syncs(self) -> list[SyncEvent]:
        """Syncs outside allowed regions (races excluded)."""
        return [e for e in self.events if e.is_sync and not e.allowed]

    @property
    def races(self) -> list[SyncEvent]:
        return [e for e in self.events if e.kind == RACE and not e.allowed]

    @property
    def violations(self) -> list[SyncEvent]:
        return [e for e in self.events if not e.allowed]


class SyncCheckError(RuntimeError):
    """Raised at the sync in mode "error"."""

    def __init__(self, event: SyncEvent) -> None:
        super().__init__(event.describe())
        self.event = event


class SyncWarning(UserWarning):
    """Issued at the sync in mode "warn"."""


# ---- where did it happen -------------------------------------------------------------------

# torch.compile's own work (inductor's constant folding and autotuning, cudagraph capture). Not
# _dynamo: its eval_frame wraps every TorchDispatchMode call, and tracing sets is_compiling().
_COMPILE_PARTS = (f"{os.sep}_inductor{os.sep}", f"cuda{os.sep}graphs.py")


@lru_cache(maxsize=1)
def _skipped_prefixes() -> tuple[str, ...]:
    import warnings

    import syncllint

    prefixes = [os.path.dirname(os.path.abspath(syncllint.__file__)) + os.sep, os.path.abspath(warnings.__file__)]
    torch_file = getattr(sys.modules.get("torch"), "__file__", None)
    if torch_file:
        prefixes.append(os.path.dirname(os.path.abspath(torch_file)) + os.sep)
    return tuple(prefixes)


def _is_internal(filename: str) -> bool:
    if filename.startswith("<") and not filename.startswith("<frozen"):
        return False  # exec'd snippets ("<rules/SYNC101.md:20>") are user code
    return filename.startswith((*_skipped_prefixes(), "<frozen"))


def _is_compile_frame(filename: str) -> bool:
    return any(part in filename for part in _COMPILE_PARTS)


@dataclass(frozen=True)
class Site:
    filename: str
    lineno: int
    in_compile: bool  # a torch.compile / cudagraph frame lies between the user and the sync


def user_site(frame: FrameType | None = None) -> Site:
    """The first frame outside torch and syncllint, and whether torch.compile is on the way."""
    current: FrameType | None = frame if frame is not None else sys._getframe(1)
    in_compile = False
    while current is not None:
        filename = current.f_code.co_filename
        if not _is_internal(filename):
            return Site(filename, current.f_lineno, in_compile)
        if _is_compile_frame(filename):
            in_compile = True
        current = current.f_back
    return Site("<unknown>", 0, in_compile)


def source_line(filename: str, lineno: int) -> str:
    return linecache.getline(filename, lineno).strip()


# What a line of source that synced most likely did, for the debug mode's anonymous warning.
_OP_OF_SOURCE: tuple[tuple[re.Pattern[str], str, str], ...] = tuple(
    (re.compile(pattern), op, kind)
    for pattern, op, kind in (
        (r"\.item\(", "item", SCALAR_READ),
        (r"\.tolist\(", "tolist", D2H),
        (r"\.cpu\(", "cpu", D2H),
        (r"\.to\(\s*(['\"]cpu|device\s*=\s*['\"]cpu|torch\.device\(\s*['\"]cpu)", "to(cpu)", D2H),
        (r"\.numpy\(", "numpy", D2H),
        (r"\b(torch\.)?(tensor|as_tensor|asarray)\(", "torch.tensor", H2D),
        (r"\.new_tensor\(", "new_tensor", H2D),
        (r"\.cuda\(|\.to\(", "to(cuda)", H2D),
        (r"\.copy_\(", "copy_(H2D)", H2D),
        (r"\b(nonzero|argwhere|where)\(", "nonzero", SHAPE_READ),
        (r"masked_select\(", "masked_select", SHAPE_READ),
        (r"\bunique(_consecutive)?\(", "unique", SHAPE_READ),
        (r"\b(equal|allclose)\(", "equal", SCALAR_READ),
        (r"\blinalg\.|\bcholesky\(|\binverse\(", "linalg check", SCALAR_READ),
        (r"\.synchronize\(", "Stream.synchronize", EXPLICIT_WAIT),
        (r"\bbool\(|\bif\b|\bwhile\b|\bassert\b|\bnot\b", "__bool__", SCALAR_READ),
        (r"\bint\(|\bfloat\(", "__int__", SCALAR_READ),
        (r"\bstr\(|\bprint\(|\brepr\(|f['\"]", "__format__", SCALAR_READ),
        (r"\[", "mask index", SHAPE_READ),
    )
)


def classify_source(line: str) -> tuple[str, str]:
    """(op, kind) guessed from the source line of a sync the debug mode reported."""
    for pattern, op, kind in _OP_OF_SOURCE:
        if pattern.search(line):
            return op, kind
    return "cuda sync", SCALAR_READ
