"""Run ``syncllint check`` over the full Python trees of torch 2.13.0 and vLLM 0.33.0.

The trees come from the PyPI wheels (torch from /opt/wheels or --torch-wheel; vLLM through
``pip download --no-deps vllm==0.33.0``), unpacked into a work folder. The run passes when no file
makes syncllint crash: exit code 0 or 1, no ``internal error``, no traceback. Findings are counted
per rule and confidence (the run uses ``--min-confidence low`` so every level is counted).

    python benchmarks/real_corpora.py [-j 2] [--work-dir benchmarks/.work/corpora]
"""

from __future__ import annotations

import argparse
import glob
import json
import subprocess
import sys
import time
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
LINTED_SUFFIXES = (".py", ".pyi", ".ipynb")


def unpack(wheel: Path, into: Path) -> int:
    """Extract the lintable files of ``wheel``; return how many there are."""
    if into.is_dir() and any(into.iterdir()):
        return sum(1 for p in into.rglob("*") if p.suffix in LINTED_SUFFIXES)
    into.mkdir(parents=True, exist_ok=True)
    count = 0
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if member.endswith(LINTED_SUFFIXES):
                archive.extract(member, into)
                count += 1
    return count


def vllm_wheel(version: str, folder: Path) -> Path:
    found = sorted(folder.glob(f"vllm-{version}-*.whl"))
    if not found:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", f"vllm=={version}", "-d", str(folder)], check=True
        )
        found = sorted(folder.glob(f"vllm-{version}-*.whl"))
    return found[0]


def check_tree(tree: Path, jobs: int) -> dict[str, Any]:
    command = [
        sys.executable, "-m", "syncllint", "check", str(tree),
        "--isolated", "--no-respect-gitignore", "--exclude", "__lint_everything__",
        "--select", "ALL", "--min-confidence", "low",
        "--output-format", "json", "--exit-zero", "-j", str(jobs),
    ]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    crashed = done.returncode not in (0, 1) or "Traceback" in done.stderr or "internal error" in done.stderr
    try:
        findings = json.loads(done.stdout) if done.stdout.strip() else []
    except json.JSONDecodeError:
        findings, crashed = [], True
    by_rule = Counter(f["code"] for f in findings)
    by_confidence = Counter(f"{f['code']}/{f['confidence']}" for f in findings)
    parse_errors = Counter(f["message"].split(":")[1].strip()[:80] for f in findings if f["code"] == "SYNC001")
    files = sum(1 for p in tree.rglob("*") if p.suffix in LINTED_SUFFIXES)
    return {
        "tree": str(tree),
        "files": files,
        "exit_code": done.returncode,
        "crashed": crashed,
        "stderr": done.stderr[-4000:],
        "seconds": round(elapsed, 1),
        "findings": len(findings),
        "by_rule": dict(sorted(by_rule.items())),
        "by_rule_and_confidence": dict(sorted(by_confidence.items())),
        "parse_errors": dict(parse_errors.most_common(10)),
        "parse_error_files": sorted({f["filename"] for f in findings if f["code"] == "SYNC001"})[:20],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--torch-wheel", default=next(iter(sorted(glob.glob("/opt/wheels/torch-2.13.0*.whl"))), None))
    parser.add_argument("--vllm-version", default="0.33.0")
    parser.add_argument("--work-dir", type=Path, default=REPO / "benchmarks" / ".work" / "corpora")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--only", choices=["torch", "vllm"], help="check one corpus only")
    args = parser.parse_args()
    work: Path = args.work_dir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    corpora: dict[str, Path] = {}
    if args.only in (None, "torch"):
        if not args.torch_wheel:
            parser.error("no torch 2.13.0 wheel found; pass --torch-wheel")
        corpora["torch-2.13.0"] = Path(args.torch_wheel)
    if args.only in (None, "vllm"):
        corpora[f"vllm-{args.vllm_version}"] = vllm_wheel(args.vllm_version, work)
    summary: dict[str, Any] = {}
    for name, wheel in corpora.items():
        tree = work / name
        unpack(wheel, tree)
        print(f"checking {name} ({tree}) ...", flush=True)
        summary[name] = check_tree(tree, args.jobs)
        result = summary[name]
        print(
            f"  {result['files']} files, {result['seconds']} s, exit {result['exit_code']}, "
            f"crashed: {result['crashed']}, findings: {result['findings']}",
            flush=True,
        )
        for code, count in result["by_rule"].items():
            print(f"    {code}: {count}")
        if result["stderr"].strip():
            print("  stderr:", result["stderr"].strip()[-2000:])
    (work / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"summary: {work / 'summary.json'}")
    return 1 if any(r["crashed"] for r in summary.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
