"""Precision and recall of ``syncllint check`` against the hand labels in ``labels.csv``.

    python benchmarks/accuracy/score.py            # lint the labelled files at the default settings
    python benchmarks/accuracy/score.py --full     # lint the whole trees (slow), count unlabelled findings
    python benchmarks/accuracy/score.py --min-confidence low --select ALL

Downloads and extracts the corpora first if ``.work/`` lacks them (same versions as the labels).
A label matches a finding when the finding's span covers the labelled line and the codes agree (a
label without a code, from the grep stratum, matches any finding on its line):

- verdict ``sync``   + matching finding: true positive;  no finding: false negative;
- verdict ``no-sync`` + matching finding: false positive; no finding: true negative;
- a sync whose reason starts with ``accepted:`` (inside the project's ``gpu_sync_allowed``) counts
  like a ``no-sync``: the linter must stay quiet there.

Findings on lines nobody labelled are counted and listed apart: they are neither right nor wrong yet.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import CORPORA, HERE, ensure_extracted, relative_file, run_linter

LABELS = HERE / "labels.csv"
STRATA = HERE / "strata.json"  # population of each sampled stratum when the sample was drawn


@dataclass(frozen=True)
class Label:
    project: str
    version: str
    file: str
    line: int
    code: str
    verdict: str
    reason: str
    device_info: str
    source: str

    @property
    def is_sync(self) -> bool:
        return self.verdict == "sync"

    @property
    def should_report(self) -> bool:
        """A sync the project marked as accepted (``gpu_sync_allowed``) must not be reported."""
        return self.is_sync and not self.reason.startswith("accepted:")

    @property
    def sample(self) -> str:
        """``uniform`` / ``uniform2``: held-out rounds drawn uniformly from a later linter; else ``stratified``."""
        if self.source.startswith("uniform"):
            return self.source.split(":", 1)[0].removesuffix("-grep")
        return "stratified"

    @property
    def from_finding(self) -> bool:
        """Sampled from the linter's findings (its code is the finding's), not from the grep stratum."""
        return self.source.startswith("finding") or self.source.startswith("uniform") and "-grep:" not in self.source


@dataclass(frozen=True)
class Finding:
    project: str
    file: str
    first_row: int
    last_row: int
    code: str
    confidence: str

    def covers(self, label: Label) -> bool:
        return self.project == label.project and self.file == label.file and self.first_row <= label.line <= self.last_row


def read_labels() -> list[Label]:
    with LABELS.open(newline="") as f:
        return [
            Label(r["project"], r["version"], r["file"], int(r["line"]), r["code"], r["verdict"], r["reason"],
                  r["device_info"], r["source"])
            for r in csv.DictReader(f)
        ]


def family(code: str) -> str:
    return f"SYNC{code[4]}xx" if code.startswith("SYNC") and len(code) == 7 else "(none)"


def lint(labels: list[Label], full: bool, extra: list[str]) -> list[Finding]:
    found: list[Finding] = []
    for corpus in CORPORA:
        root = ensure_extracted(corpus)
        if full:
            paths = [root]
        else:
            paths = sorted({root / lab.file for lab in labels if lab.project == corpus.project})
        raw: list[dict[str, Any]] = run_linter(paths, root, extra)
        for f in raw:
            found.append(
                Finding(corpus.project, relative_file(corpus, f["filename"]), int(f["location"]["row"]),
                        int(f["end_location"]["row"]), f["code"], f["confidence"])
            )
    return found


def match(label: Label, findings: list[Finding]) -> Finding | None:
    covering = [f for f in findings if f.covers(label)]
    if label.from_finding:
        # A finding-stratum label judges that finding only; a grep label judges the whole line.
        covering = [f for f in covering if f.code == label.code]
    # The narrowest span is the finding about this line (not an enclosing multi-line call).
    return min(covering, key=lambda f: f.last_row - f.first_row, default=None)


def print_table(title: str, counts: dict[str, Counter[str]]) -> None:
    print(f"{title:10} {'TP':>4} {'FP':>4} {'FN':>4} {'TN':>4} {'precision':>10} {'recall':>8}")
    for key in sorted(counts, key=lambda k: (k == "overall", k)):
        c = counts[key]
        prec = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else float("nan")
        rec = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else float("nan")
        print(f"{key:10} {c['tp']:4d} {c['fp']:4d} {c['fn']:4d} {c['tn']:4d} {prec:10.3f} {rec:8.3f}")


def weighted_precision(labels: list[Label], findings: list[Finding]) -> str:
    """Precision over the findings sampled at medium/high confidence, each weighted by its stratum's size.

    The sample takes a fixed number per (project, code, confidence), so rare strata are over-represented;
    weighting by the stratum's population (``strata.json``) estimates the precision of a whole-tree run.
    """
    if not STRATA.exists():
        return "n/a (no strata.json)"
    population: dict[str, dict[str, int]] = json.loads(STRATA.read_text())
    sampled: Counter[tuple[str, str, str]] = Counter()
    for lab in labels:
        if lab.from_finding:
            sampled[(lab.project, lab.code, lab.source.split(":", 1)[1])] += 1
    right = total = 0.0
    for lab in labels:
        confidence = lab.source.split(":", 1)[1] if lab.from_finding else ""
        if confidence not in ("medium", "high") or match(lab, findings) is None:
            continue
        weight = population.get(lab.project, {}).get(f"finding {lab.code}/{confidence}", 0) / sampled[
            (lab.project, lab.code, confidence)]
        total += weight
        right += weight if lab.should_report else 0.0
    return f"{right / total:.3f}" if total else "n/a"


def precision_at_draw(labels: list[Label], round_name: str) -> str:
    """Precision of the linter the round was drawn from: its sampled findings, scaled per project."""
    path = HERE / f"strata-{round_name}.json"
    if not path.exists():
        return "n/a"
    population: dict[str, dict[str, int]] = json.loads(path.read_text())
    right = total = 0.0
    for project, sizes in population.items():
        drawn = [lab for lab in labels if lab.sample == round_name and lab.project == project and lab.from_finding]
        if drawn:
            right += sizes["uniform findings"] * sum(lab.should_report for lab in drawn) / len(drawn)
            total += sizes["uniform findings"]
    plain = [lab.should_report for lab in labels if lab.sample == round_name and lab.from_finding]
    return f"{sum(plain) / len(plain):.3f} on the sample, {right / total:.3f} scaled" if plain and total else "n/a"


def population_estimate(labels: list[Label], findings: list[Finding], round_name: str) -> str:
    """Precision and recall of the whole run, estimated from one uniform round.

    Each project's round drew ``n`` findings uniformly from ``N`` (and grep hits of lines that run
    left alone); the rows are scored against the current linter and scaled to their population
    (``strata-<round>.json``). Rows labelled ``unsure`` were left out of both.
    """
    path = HERE / f"strata-{round_name}.json"
    if not path.exists():
        return "n/a"
    population: dict[str, dict[str, int]] = json.loads(path.read_text())
    found = reported = true = 0.0
    parts: list[str] = []
    for project, sizes in population.items():
        rows = [lab for lab in labels if lab.sample == round_name and lab.project == project]
        p_found = p_reported = p_true = 0.0
        for stratum, size in (("finding", sizes["uniform findings"]), ("grep", sizes["uniform grep"])):
            members = [lab for lab in rows if lab.from_finding == (stratum == "finding")]
            if not members:
                continue
            hits = [match(lab, findings) is not None for lab in members]
            scale = size / len(members)
            p_found += scale * sum(h and lab.should_report for h, lab in zip(hits, members))
            p_reported += scale * sum(hits)
            p_true += scale * sum(lab.should_report for lab in members)
        parts.append(f"{project} {p_found / p_reported if p_reported else float('nan'):.3f}/"
                     f"{p_found / p_true if p_true else float('nan'):.3f}")
        found, reported, true = found + p_found, reported + p_reported, true + p_true
    overall = f"{found / reported:.3f}/{found / true:.3f}" if reported and true else "n/a"
    return f"{overall} (precision/recall; {', '.join(parts)})"


def sample_name(text: str) -> str:
    """``all``, ``stratified`` or a held-out round (``uniform``, ``uniform2``, ...): rounds are added
    with new corpora, so any ``uniformN`` is accepted and one with no labels scores nothing."""
    if text in ("all", "stratified") or re.fullmatch(r"uniform\d*", text):
        return text
    raise argparse.ArgumentTypeError(f"unknown sample `{text}` (all, stratified, uniform, uniform2, ...)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true", help="lint whole trees, not only the labelled files")
    parser.add_argument("--min-confidence", default="medium", choices=("low", "medium", "high"))
    parser.add_argument("--select", default=None, help="rule selection (default: the linter's default + SYNC7)")
    parser.add_argument("--quiet", action="store_true", help="figures only, no lists")
    parser.add_argument(
        "--sample", type=sample_name, default="all",
        help="score only the first (stratified) sample or one held-out uniform round",
    )
    args = parser.parse_args()
    labels = [lab for lab in read_labels() if args.sample == "all" or lab.sample == args.sample]
    extra = ["--min-confidence", args.min_confidence]
    extra += ["--select", args.select] if args.select else ["--extend-select", "SYNC7"]
    findings = lint(labels, args.full, extra)

    counts: dict[str, Counter[str]] = defaultdict(Counter)
    per_code: dict[str, Counter[str]] = defaultdict(Counter)
    false_pos: list[tuple[Label, Finding]] = []
    false_neg: list[Label] = []
    used: set[Finding] = set()
    for label in labels:
        hit = match(label, findings)
        fam = family(label.code or (hit.code if hit else ""))
        if hit is not None:
            used.add(hit)
        outcome = ("tp" if hit else "fn") if label.should_report else ("fp" if hit else "tn")
        for key in (fam, "overall"):
            counts[key][outcome] += 1
        per_code[label.code or (hit.code if hit else "(none)")][outcome] += 1
        if outcome == "fp" and hit is not None:
            false_pos.append((label, hit))
        elif outcome == "fn":
            false_neg.append(label)
    labelled_lines = {(lab.project, lab.file, lab.line) for lab in labels}
    unlabelled = [
        f for f in findings
        if f not in used and not any((f.project, f.file, row) in labelled_lines for row in range(f.first_row, f.last_row + 1))
    ]

    print(f"labels: {len(labels)} ({sum(lab.is_sync for lab in labels)} sync, "
          f"{sum(not lab.is_sync for lab in labels)} no-sync); findings: {len(findings)} "
          f"(min-confidence {args.min_confidence}, {'whole trees' if args.full else 'labelled files'})")
    print_table("family", counts)
    print()
    print_table("rule", per_code)
    print(f"\nprecision of the default-threshold findings, weighted by stratum size: "
          f"{weighted_precision(labels, findings)}")
    for round_name in sorted({lab.sample for lab in labels} - {"stratified"}):
        print(f"{round_name}: precision of the linter it was drawn from: {precision_at_draw(labels, round_name)}; "
              f"this linter, scaled to the population: {population_estimate(labels, findings, round_name)}")
    if args.quiet:
        return
    print(f"\nfalse positives ({len(false_pos)}):")
    for label, hit in false_pos:
        print(f"  {label.project}:{label.file}:{label.line} {hit.code}[{hit.confidence}] -- {label.reason} ({label.device_info})")
    print(f"\nfalse negatives ({len(false_neg)}):")
    for label in false_neg:
        print(f"  {label.project}:{label.file}:{label.line} {label.code or '-'} -- {label.reason} ({label.device_info})")
    by_code = Counter(f.code for f in unlabelled)
    print(f"\nunlabelled findings ({len(unlabelled)}): " + ", ".join(f"{k} {v}" for k, v in sorted(by_code.items())))
    for f in unlabelled[:200]:
        print(f"  {f.project}:{f.file}:{f.first_row} {f.code}[{f.confidence}]")


if __name__ == "__main__":
    main()
