"""Check every claim of the rule catalogue: ``flag`` syncs, ``ok`` does not, ``fixed`` does not and
computes what its ``flag`` example computed. On a GPU a sync is judged twice: the runtime detector
and a timing oracle (host time while a ~100 ms sleep kernel is queued)."""

from __future__ import annotations

import dataclasses
import platform
import re
import traceback
from dataclasses import dataclass, field
from typing import Any

from syncllint.harness import snippets
from syncllint.harness.compare import same_results
from syncllint.harness.snippets import ORACLE_THRESHOLD_MS, Snippet
from syncllint.runtime.events import RACE

# ```python flag raises=TypeError: the fence's info string says the example must raise.
_RAISES = re.compile(r"\braises=(\w+)")


RACE_RULES = "SYNC8"  # race hazards: their examples claim a race (or none), not a sync


def expectation(snippet: Snippet) -> str:
    """What running the example must show: sync / no sync / race / no race / raises <Error>."""
    if snippet.raises:
        return f"raises {snippet.raises}"
    if snippet.rule.startswith(RACE_RULES):
        return "race" if snippet.kind == "flag" else "no race"
    return "sync" if snippet.kind == "flag" else "no sync"


@dataclass
class Claim:
    rule: str
    example: str  # "flag@20"
    kind: str
    expect_sync: bool
    expect: str = ""  # see ``expectation``; "" reads as expect_sync
    detector: bool | None = None
    detector_events: list[str] = field(default_factory=list)
    race: bool | None = None  # race claims only: the emulation saw a read of an unfinished copy
    raised: str = ""  # raises claims only: the exception the example raised
    oracle: bool | None = None  # None: no GPU (emulation)
    oracle_ms: float | None = None
    equal: bool | None = None  # fixed examples only
    equal_detail: str = ""
    error: str = ""

    @property
    def expected(self) -> str:
        return self.expect or ("sync" if self.expect_sync else "no sync")

    @property
    def disagreement(self) -> bool:
        return self.oracle is not None and self.detector is not None and self.oracle != self.detector

    def _sync_verdicts_hold(self) -> bool:
        if self.expected == "no race":
            return True  # its wait (if any) is what makes the read safe: syncs are not judged
        judged = [self.detector] if self.oracle is None else [self.detector, self.oracle]
        return all(verdict == self.expect_sync for verdict in judged)

    @property
    def passed(self) -> bool:
        if self.error:
            return False
        if self.expected.startswith("raises "):
            return self.raised == self.expected.split()[1]
        if self.detector is None or not self._sync_verdicts_hold():
            return False
        if self.expected in ("race", "no race") and self.race is not (self.expected == "race"):
            return False
        return self.equal is not False and not (self.kind == "fixed" and self.equal is None)

    @property
    def why(self) -> str:
        if self.error:
            return self.error
        if self.expected.startswith("raises "):
            return f"expected {self.expected}, raised {self.raised or 'nothing'}"
        reasons = []
        if self.expected in ("race", "no race") and self.race is not (self.expected == "race"):
            reasons.append(f"emulation says {'race' if self.race else 'no race'}")
        if self.expected != "no race" and self.detector != self.expect_sync:
            reasons.append(f"detector says {'sync' if self.detector else 'no sync'}")
        if self.expected != "no race" and self.oracle is not None and self.oracle != self.expect_sync:
            reasons.append(f"oracle says {'sync' if self.oracle else 'no sync'} ({self.oracle_ms:.1f} ms)")
        if self.kind == "fixed" and self.equal is not True:
            reasons.append(f"results differ: {self.equal_detail}")
        return "; ".join(reasons)

    def as_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data.update(expect=self.expected, passed=self.passed, why="" if self.passed else self.why, disagreement=self.disagreement)
        return data


def collect(rules: tuple[str, ...] = ()) -> list[tuple[Snippet, Snippet | None]]:
    """Each example, with the flag example a ``fixed`` one must match."""
    from syncllint.catalogue import load_catalogue

    out: list[tuple[Snippet, Snippet | None]] = []
    for code, page in sorted(load_catalogue().items()):
        if rules and not any(code.startswith(r.upper()) for r in rules):
            continue
        previous_flag: Snippet | None = None
        fences = page.text.splitlines()
        for example in page.examples:
            raises = _RAISES.search(fences[example.line - 1])
            snippet = Snippet(code, example.kind, example.line, example.code, raises.group(1) if raises else "")
            out.append((snippet, previous_flag if example.kind == "fixed" else None))
            if example.kind == "flag":
                previous_flag = snippet
    return out


def _describe(events: list[Any]) -> list[str]:
    return [f"{e.rule_code} {e.kind}: {e.op} (line {e.lineno})" for e in events]


def check_claim(snippet: Snippet, flag: Snippet | None, gpu: bool) -> Claim:
    expect = expectation(snippet)
    claim = Claim(snippet.rule, snippet.label, snippet.kind, expect_sync=expect == "sync", expect=expect)
    try:
        if snippet.raises:
            claim.raised, events = snippets.raised(snippet, emulate=not gpu)
            claim.detector_events = _describe(events)
            return claim
        if gpu:
            snippets.run(snippet)  # warm-up: lazy init, allocator, kernel loading
        namespace, events = snippets.detector(snippet, emulate=not gpu)
        syncs = [e for e in events if e.is_sync]
        claim.detector = bool(syncs)
        claim.detector_events = _describe(events)
        if expect in ("race", "no race"):
            # Races are tracked by the emulation only: on a GPU it runs once more, emulated.
            emulated = events if not gpu else snippets.detector(snippet, emulate=True)[1]
            claim.race = any(e.kind == RACE for e in emulated)
            if gpu:
                claim.detector_events += [f"emulated {line}" for line in _describe(emulated) if "race" in line]
        if gpu:
            claim.oracle_ms = round(snippets.oracle_ms(snippet), 3)
            claim.oracle = claim.oracle_ms > ORACLE_THRESHOLD_MS
        if flag is not None:
            before, after = snippets.run_unchecked(flag, not gpu), snippets.run_unchecked(snippet, not gpu)
            claim.equal, claim.equal_detail = same_results(before, after)
        elif snippet.kind == "fixed":
            claim.equal_detail = "no flag example before it"
        del namespace
    except Exception as err:  # noqa: BLE001 - a broken example is a failed claim, not a crash
        last = traceback.extract_tb(err.__traceback__)[-1]
        claim.error = f"{type(err).__name__}: {err} (line {last.lineno})".splitlines()[0][:300]
    return claim


@dataclass
class Verification:
    emulated: bool
    environment: dict[str, Any]
    claims: list[Claim]

    @property
    def failed(self) -> list[Claim]:
        return [c for c in self.claims if not c.passed]

    def as_json(self) -> dict[str, Any]:
        return {
            **self.environment,
            "emulated": self.emulated,
            "passed": len(self.claims) - len(self.failed),
            "failed": len(self.failed),
            "disagreements": [f"{c.rule} {c.example}" for c in self.claims if c.disagreement],
            "claims": [c.as_json() for c in self.claims],
        }


def environment(gpu: bool) -> dict[str, Any]:
    import torch

    from syncllint import __version__

    env: dict[str, Any] = {"syncllint": __version__, "torch": torch.__version__, "python": platform.python_version()}
    if gpu:
        env.update(cuda=torch.version.cuda, device=torch.cuda.get_device_name(), sleep_kernel_ms=round(snippets.sleep_kernel_ms(), 1))
    else:
        env.update(device="cpu (emulation)")
    return env


def verify(rules: tuple[str, ...] = (), force_emulation: bool = False) -> Verification:
    import torch

    gpu = torch.cuda.is_available() and not force_emulation
    env = environment(gpu)
    claims = [check_claim(snippet, flag, gpu) for snippet, flag in collect(rules)]
    return Verification(emulated=not gpu, environment=env, claims=claims)
