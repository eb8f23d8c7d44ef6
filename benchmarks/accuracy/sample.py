"""Draw the sample that ``labels.csv`` labels (fixed seed), and show a sampled line in context.

    python benchmarks/accuracy/sample.py draw [PROJECT ...] # lint every corpus at --select ALL --min-confidence low,
                                                   # write .work/worklist.csv
    python benchmarks/accuracy/sample.py draw-extra  # then: 3 more default-threshold findings per (project, code)
    python benchmarks/accuracy/sample.py show N..M # print worklist rows N..M with their function's context
    python benchmarks/accuracy/sample.py draw-uniform [ROUND] [--fresh-files]  # held-out round: uniform draws
                                                   # from the current linter (--fresh-files: unlabelled files only)
    python benchmarks/accuracy/sample.py show-uniform N..M [ROUND]

Two strata:
- findings of the linter at ``--min-confidence low`` (every rule), stratified by (code, confidence): the
  low-confidence ones are the candidate non-findings at the default threshold;
- grep hits of sync idioms (``.item()``, ``.tolist()``, ``int(``, ``torch.nonzero`` ...) on lines the linter
  did not report at all: true syncs there are false negatives, host code there is a checked non-finding.
"""

from __future__ import annotations

import csv
import json
import random
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import (
    CORPORA,
    WORK,
    Corpus,
    fresh_files,
    relative_file,
    run_linter,
    sampled_files,
)

SEED = 20261129
FINDINGS_PER_STRATUM = 6
GREP_PER_IDIOM = 3
WORKLIST = WORK / "worklist.csv"
LABELS_FILE = Path(__file__).resolve().parent / "labels.csv"

# Idioms that sync when the receiver is a device tensor; grepped on lines the linter left alone.
GREP_IDIOMS: dict[str, str] = {
    ".item()": r"\.item\(\)",
    ".tolist()": r"\.tolist\(\)",
    ".cpu()": r"\.cpu\(\)",
    ".numpy()": r"\.numpy\(\)",
    "int(": r"(?<![\w.])int\((?!\))",
    "float(": r"(?<![\w.])float\((?!\))",
    "bool(": r"(?<![\w.])bool\((?!\))",
    "if ...any()/all()": r"^\s*(if|elif|while|assert)\b.*\.(any|all)\(\)",
    "torch.tensor(": r"torch\.(tensor|as_tensor)\(",
    "[mask]": r"\w\[[^\]]*mask[^\]]*\]",
    "nonzero/where": r"(\.nonzero\(|torch\.nonzero\(|torch\.argwhere\(|torch\.where\([^,()]*\)$)",
    "unique/bincount/repeat_interleave": r"(\.unique\(|torch\.unique|bincount\(|repeat_interleave\()",
    ".to(device)/.cuda()": r"(\.cuda\(\)|\.to\((self\.)?device\)|\.to\(\"cuda\"\))",
    "synchronize": r"\.synchronize\(\)",
    "equal/allclose": r"torch\.(equal|allclose)\(",
}


def lint_all(corpus: Corpus) -> list[dict[str, Any]]:
    cache = WORK / f"findings-{corpus.project}-{corpus.version}-ALL-low.json"
    if cache.exists():
        cached: list[dict[str, Any]] = json.loads(cache.read_text())
        return cached
    files = sampled_files(corpus)
    findings = run_linter(files, corpus.root, ["--select", "ALL", "--min-confidence", "low", "-j", "2"])
    cache.write_text(json.dumps(findings))
    return findings


def draw_project(corpus: Corpus) -> tuple[list[dict[str, str]], dict[str, int]]:
    """One project's share of the sample; each project has its own seeded generator."""
    rng = random.Random(f"{SEED}-{corpus.project}")
    rows: list[dict[str, str]] = []
    by_stratum: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    flagged: set[tuple[str, int]] = set()
    for f in lint_all(corpus):
        file = relative_file(corpus, f["filename"])
        for row in range(int(f["location"]["row"]), int(f["end_location"]["row"]) + 1):
            flagged.add((file, row))
        by_stratum[(f["code"], f["confidence"])].append(
            {"project": corpus.project, "version": corpus.version, "file": file,
             "line": str(f["location"]["row"]), "code": f["code"], "source": f"finding:{f['confidence']}"}
        )
    for key in sorted(by_stratum):
        items = sorted(by_stratum[key], key=lambda r: (r["file"], int(r["line"])))
        rows.extend(rng.sample(items, min(len(items), FINDINGS_PER_STRATUM)))
    by_idiom: dict[str, list[dict[str, str]]] = defaultdict(list)
    for path in sampled_files(corpus):
        file = path.relative_to(corpus.root).as_posix()
        for number, text in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if (file, number) in flagged or text.lstrip().startswith("#"):
                continue
            for idiom, pattern in GREP_IDIOMS.items():
                if re.search(pattern, text):
                    by_idiom[idiom].append(
                        {"project": corpus.project, "version": corpus.version, "file": file,
                         "line": str(number), "code": "", "source": f"grep:{idiom}"}
                    )
                    break
    for idiom in GREP_IDIOMS:
        rows.extend(rng.sample(by_idiom[idiom], min(len(by_idiom[idiom]), GREP_PER_IDIOM)))
    population = {f"finding {k[0]}/{k[1]}": len(v) for k, v in sorted(by_stratum.items())}
    population.update({f"grep {k}": len(v) for k, v in sorted(by_idiom.items())})
    return rows, population


def draw(projects: list[str]) -> None:
    """Append the named projects' rows to the worklist (numbering continues)."""
    existing: list[dict[str, str]] = []
    if WORKLIST.exists():
        with WORKLIST.open() as f:
            existing = [r for r in csv.DictReader(f) if r["project"] not in projects]
    strata_file = WORK / "strata.json"
    strata: dict[str, dict[str, int]] = json.loads(strata_file.read_text()) if strata_file.exists() else {}
    for corpus in CORPORA:
        if corpus.project in projects:
            rows, population = draw_project(corpus)
            start = max((int(r["n"]) for r in existing), default=-1) + 1
            existing.extend({"n": str(start + i), **row} for i, row in enumerate(rows))
            strata[corpus.project] = population
            print(corpus.project, len(rows), json.dumps(population))
    with WORKLIST.open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=["n", "project", "version", "file", "line", "code", "source"])
        writer.writeheader()
        writer.writerows(existing)
    strata_file.write_text(json.dumps(strata, indent=1))


EXTRA_PER_CODE = 3


def draw_extra() -> None:
    """Second round: more findings at the default threshold (medium/high), per (project, code).

    Its own generator, so the first round stays as it was; lines already in the worklist are skipped.
    """
    with WORKLIST.open() as handle:
        existing = list(csv.DictReader(handle))
    taken = {(r["project"], r["file"], r["line"]) for r in existing}
    added: list[dict[str, str]] = []
    for corpus in CORPORA:
        rng = random.Random(f"{SEED}-{corpus.project}-extra")
        by_code: dict[str, list[dict[str, str]]] = defaultdict(list)
        for f in lint_all(corpus):
            file = relative_file(corpus, f["filename"])
            row = {"project": corpus.project, "version": corpus.version, "file": file,
                   "line": str(f["location"]["row"]), "code": f["code"], "source": f"finding:{f['confidence']}"}
            if f["confidence"] != "low" and (corpus.project, file, row["line"]) not in taken:
                by_code[f["code"]].append(row)
        for code in sorted(by_code):
            items = sorted(by_code[code], key=lambda r: (r["file"], int(r["line"])))
            added.extend(rng.sample(items, min(len(items), EXTRA_PER_CODE)))
    start = max(int(r["n"]) for r in existing) + 1
    with WORKLIST.open("a", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=["n", "project", "version", "file", "line", "code", "source"])
        writer.writerows({"n": str(start + i), **row} for i, row in enumerate(added))
    print(f"added {len(added)} rows from {start}")


UNIFORM_FINDINGS = 50
UNIFORM_GREP = 25
UNIFORM_WORKLIST = WORK / "worklist-uniform.csv"


def draw_uniform(round_name: str = "uniform", fresh: bool = False, only: str | None = None,
                 findings_per_project: int = UNIFORM_FINDINGS) -> None:
    """Third round, a held-out check of the current linter: uniform draws, not stratified.

    Per project, ``UNIFORM_FINDINGS`` findings of the default run (plus the explicit waits) drawn
    uniformly, so their plain precision estimates the whole run's; and ``UNIFORM_GREP`` grep hits
    on lines that run left alone, for the misses. Lines already labelled are skipped. ``fresh``: draw
    from files with no label at all (``fresh_files``), so no earlier fix was shaped by them. ``only``:
    one project (a corpus added later, e.g. lmdeploy for ``uniform25``), drawing
    ``findings_per_project`` findings and twice ``UNIFORM_GREP`` grep lines from it.
    """
    with LABELS_FILE.open() as handle:
        taken = {(r["project"], r["file"], r["line"]) for r in csv.DictReader(handle)}
    labelled_files = {(project, file) for project, file, _ in taken}
    rows: list[dict[str, str]] = []
    population: dict[str, dict[str, int]] = {}
    for corpus in CORPORA:
        if only is not None and corpus.project != only:
            continue
        rng = random.Random(f"{SEED}-{corpus.project}-{round_name}")
        files = (fresh_files(corpus, {f for p, f in labelled_files if p == corpus.project}, round_name) if fresh
                 else sampled_files(corpus))
        findings = run_linter(files, corpus.root, ["--extend-select", "SYNC7", "-j", "2"])
        if fresh and corpus.file_sample is None and len(findings) < findings_per_project:
            # The unlabelled files of a project linted whole hold too few findings by now (vLLM
            # after uniform12): draw from the unlabelled lines of every file instead.
            files = sampled_files(corpus)
            findings = run_linter(files, corpus.root, ["--extend-select", "SYNC7", "-j", "2"])
        flagged: set[tuple[str, int]] = set()
        candidates: list[dict[str, str]] = []
        for f in findings:
            file = relative_file(corpus, f["filename"])
            for number in range(int(f["location"]["row"]), int(f["end_location"]["row"]) + 1):
                flagged.add((file, number))
            if (corpus.project, file, str(f["location"]["row"])) not in taken:
                candidates.append({"project": corpus.project, "version": corpus.version, "file": file,
                                   "line": str(f["location"]["row"]), "code": f["code"],
                                   "source": f"{round_name}:{f['confidence']}"})
        unique = {(r["file"], r["line"], r["code"]): r for r in candidates}
        ordered = [unique[k] for k in sorted(unique, key=lambda k: (k[0], int(k[1]), k[2]))]
        rows.extend(rng.sample(ordered, min(len(ordered), findings_per_project)))
        grep_hits: list[dict[str, str]] = []
        for path in files:
            file = path.relative_to(corpus.root).as_posix()
            for number, text in enumerate(path.read_text(errors="replace").splitlines(), 1):
                if (file, number) in flagged or text.lstrip().startswith("#"):
                    continue
                if (corpus.project, file, str(number)) in taken:
                    continue
                idiom = next((i for i, pat in GREP_IDIOMS.items() if re.search(pat, text)), None)
                if idiom is not None:
                    grep_hits.append({"project": corpus.project, "version": corpus.version, "file": file,
                                      "line": str(number), "code": "", "source": f"{round_name}-grep:{idiom}"})
        grep_count = UNIFORM_GREP if only is None else 2 * UNIFORM_GREP
        rows.extend(rng.sample(grep_hits, min(len(grep_hits), grep_count)))
        population[corpus.project] = {"uniform findings": len(ordered), "uniform grep": len(grep_hits),
                                      "files": len(files)}
        print(corpus.project, json.dumps(population[corpus.project]))
    worklist = UNIFORM_WORKLIST if round_name == "uniform" else WORK / f"worklist-{round_name}.csv"
    with worklist.open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=["n", "project", "version", "file", "line", "code", "source"])
        writer.writeheader()
        writer.writerows({"n": str(i), **row} for i, row in enumerate(rows))
    (WORK / f"strata-{round_name}.json").write_text(json.dumps(population, indent=1))


def show(first: int, last: int, worklist: Path = WORKLIST) -> None:
    roots = {c.project: c.root for c in CORPORA}
    with worklist.open() as f:
        rows = [r for r in csv.DictReader(f) if first <= int(r["n"]) <= last]
    for row in rows:
        lines = (roots[row["project"]] / row["file"]).read_text(errors="replace").splitlines()
        target = int(row["line"]) - 1
        start = target
        while start > 0 and not re.match(r"\s*(async\s+)?def\s", lines[start]):
            start -= 1
        header = lines[start].strip()
        print(f"=== #{row['n']} {row['project']}:{row['file']}:{row['line']} {row['code']} {row['source']}")
        print(f"  [{start + 1}] {header[:150]}")
        for i in range(max(start + 1, target - 12), min(len(lines), target + 3)):
            mark = ">>" if i == target else "  "
            print(f"{mark}{i + 1:5d} {lines[i][:170]}")


USAGE = """usage: sample.py draw-uniform ROUND [--fresh-files] [--only PROJECT --findings N]
       sample.py draw [PROJECT ...] | draw-extra
       sample.py show-uniform FIRST[..LAST] [ROUND] | show FIRST[..LAST]"""


if __name__ == "__main__":
    named_round = len(sys.argv) > 2 and not sys.argv[2].startswith("-")
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help") or (
        sys.argv[1] in ("draw-uniform", "show-uniform", "show") and not named_round
    ):
        print(USAGE, file=sys.stderr)
        sys.exit(2)
    if sys.argv[1] == "draw-extra":
        draw_extra()
    elif sys.argv[1] == "draw-uniform":
        only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
        count = int(sys.argv[sys.argv.index("--findings") + 1]) if "--findings" in sys.argv else UNIFORM_FINDINGS
        draw_uniform(sys.argv[2], fresh="--fresh-files" in sys.argv, only=only, findings_per_project=count)
    elif sys.argv[1] == "draw":
        draw(sys.argv[2:] or [c.project for c in CORPORA])
    elif sys.argv[1] == "show-uniform":
        a, _, b = sys.argv[2].partition("..")
        named = sys.argv[3] if len(sys.argv) > 3 else "uniform"
        show(int(a), int(b or a), UNIFORM_WORKLIST if named == "uniform" else WORK / f"worklist-{named}.csv")
    else:
        a, _, b = sys.argv[2].partition("..")
        show(int(a), int(b or a))
