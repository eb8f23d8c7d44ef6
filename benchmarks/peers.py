"""syncllint against its peers on real code: wall medians, ratios and peak memory.

    python benchmarks/peers.py                      # vLLM 1-in-20 sample, 2 jobs, 3 rounds
    python benchmarks/peers.py --corpus vllm --every 1 --rounds 1 --skip fixit

Fetches the .py files of the ``vllm==0.33.0`` wheel (``pip download --no-deps``) and of the
``torch==2.13.0`` CPU wheel (/opt/wheels, else the PyTorch CPU index) into benchmarks/.work/,
installs TorchFix, Fixit and ruff into benchmarks/.work/venv, and runs every tool on the same
files with the same core count, interleaved (round 1: every tool, round 2: every tool, ...).
"Cold" means no cache; "warm" means syncllint's (and ruff's) cache filled by a previous run.
Peak memory: the largest single process (getrusage of children) and the largest sum over the
tool's process tree (sampled from /proc every 50 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
WORK = HERE / ".work"
VENV = WORK / "venv"
WHEELS = {
    "vllm": ("vllm==0.33.0", None),
    "torch": ("torch==2.13.0", "https://download.pytorch.org/whl/cpu"),
}
LOCAL_WHEELS = Path("/opt/wheels")
PEERS = ("torchfix", "fixit", "ruff")


# -- corpora --------------------------------------------------------------------------------------


def fetch_wheel(name: str) -> Path:
    spec, index = WHEELS[name]
    project = spec.split("==")[0]
    version = spec.split("==")[1]
    for folder in (LOCAL_WHEELS, WORK / "dl"):
        found = sorted(folder.glob(f"{project}-{version}*.whl")) if folder.is_dir() else []
        if found:
            return found[0]
    (WORK / "dl").mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", spec, "-d", str(WORK / "dl")]
    if index:
        command += ["--index-url", index]
    subprocess.run(command, check=True)
    return min((WORK / "dl").glob(f"{project}-{version}*.whl"))


def corpus(name: str) -> Path:
    """The wheel's .py files, extracted once."""
    root = WORK / name
    if not root.is_dir():
        with zipfile.ZipFile(fetch_wheel(name)) as wheel:
            for member in wheel.infolist():
                if member.filename.endswith(".py"):
                    wheel.extract(member, root)
        _mark_root(root)
    return root


def _mark_root(root: Path) -> None:
    """An empty pyproject.toml makes the corpus its own project: Fixit (trailrunner) otherwise
    applies this repository's .gitignore, which ignores benchmarks/.work/, and checks nothing."""
    (root / "pyproject.toml").write_text("# benchmark corpus\n", encoding="utf-8")


def sample(name: str, every: int) -> Path:
    """Every n-th .py file (sorted by path) of a corpus, copied with its relative path."""
    root = corpus(name)
    if every == 1:
        return root
    target = WORK / f"{name}-every{every}"
    if not target.is_dir():
        for path in sorted(root.rglob("*.py"))[::every]:
            destination = target / path.relative_to(root)
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, destination)
        _mark_root(target)
    return target


# -- tools ----------------------------------------------------------------------------------------


def ensure_venv() -> Path:
    bin_dir = VENV / "bin"
    if not (bin_dir / "torchfix").exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(bin_dir / "pip"), "install", "-q", "torchfix", "fixit", "ruff"], check=True)
    return bin_dir


def versions(bin_dir: Path) -> dict[str, str]:
    out = subprocess.run(
        [str(bin_dir / "pip"), "list", "--format", "json"], capture_output=True, text=True, check=True
    ).stdout
    wanted = {"torchfix", "fixit", "ruff", "libcst"}
    found = {p["name"].lower(): p["version"] for p in json.loads(out) if p["name"].lower() in wanted}
    found["syncllint"] = subprocess.run(
        [sys.executable, "-m", "syncllint", "--version"], capture_output=True, text=True, cwd=REPO, check=False
    ).stdout.strip()
    return found


@dataclass(frozen=True)
class Tool:
    name: str
    command: list[str]
    prepare: list[str] | None = None  # run (untimed) before each timed run


def tools(bin_dir: Path, target: Path, jobs: int, skip: set[str]) -> list[Tool]:
    me = [sys.executable, "-m", "syncllint", "check", str(target), "--isolated", "--no-respect-gitignore", "--exit-zero", "-q", "-j", str(jobs)]
    cache = WORK / "syncllint-cache"
    ruff_cache = WORK / "ruff-cache"
    chosen = [
        Tool("syncllint cold", [*me, "--no-cache"]),
        Tool("syncllint warm", [*me, "--cache-dir", str(cache)], prepare=[*me, "--cache-dir", str(cache)]),
        Tool("torchfix", [str(bin_dir / "torchfix"), "--jobs", str(jobs), str(target)]),
        # Fixit has no jobs flag: it uses every core it may run on, so all tools run under taskset.
        Tool("fixit", [str(bin_dir / "fixit"), "lint", str(target)]),
        Tool("ruff cold", [str(bin_dir / "ruff"), "check", "--isolated", "--no-respect-gitignore", "--no-cache", "--exit-zero", "-q", str(target)]),
        Tool(
            "ruff warm",
            [str(bin_dir / "ruff"), "check", "--isolated", "--no-respect-gitignore", "--cache-dir", str(ruff_cache), "--exit-zero", "-q", str(target)],
            prepare=[str(bin_dir / "ruff"), "check", "--isolated", "--no-respect-gitignore", "--cache-dir", str(ruff_cache), "--exit-zero", "-q", str(target)],
        ),
    ]
    return [t for t in chosen if t.name.split()[0] not in skip]


# -- measuring ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    wall_s: float
    cpu_s: float  # user + system time of the whole process tree: steadier than wall on a busy machine
    max_process_mb: float
    max_tree_mb: float
    returncode: int


def _tree_rss_kb(root: int) -> int:
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry)
        children.setdefault(int(fields[1]), []).append(pid)
        rss[pid] = int(fields[21]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, ()))
    return total


def measure(command: list[str], cpus: str | None) -> Run:
    """Wall time and memory of one run, in a fresh wrapper so getrusage covers this run only."""
    if cpus:
        command = ["taskset", "-c", cpus, *command]
    wrapper = (
        "import resource, subprocess, sys, time, json\n"
        "t = time.perf_counter()\n"
        "rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode\n"
        "wall = time.perf_counter() - t\n"
        "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(json.dumps([wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, rc]))\n"
    )
    process = subprocess.Popen([sys.executable, "-c", wrapper, *command], stdout=subprocess.PIPE, text=True, cwd=REPO)
    peak = [0]
    done = threading.Event()

    def sample_tree() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], _tree_rss_kb(process.pid))

    sampler = threading.Thread(target=sample_tree, daemon=True)
    sampler.start()
    out, _ = process.communicate()
    done.set()
    sampler.join()
    wall, cpu, kb, rc = json.loads(out)
    return Run(wall, cpu, kb / 1024, peak[0] / 1024, rc)


def one_file_runs(target: Path, rounds: int, cpus: str | None) -> dict[str, float]:
    """`syncllint check one.py`: the median-sized file of the corpus, no cache and warm cache."""
    files = sorted(target.rglob("*.py"), key=lambda p: p.stat().st_size)
    one = files[len(files) // 2]
    base = [sys.executable, "-m", "syncllint", "check", str(one), "--isolated", "--no-respect-gitignore", "--exit-zero", "-q"]
    cache = WORK / "one-file-cache"
    measure([*base, "--cache-dir", str(cache)], cpus)
    cold = [measure([*base, "--no-cache"], cpus).wall_s for _ in range(rounds)]
    warm = [measure([*base, "--cache-dir", str(cache)], cpus).wall_s for _ in range(rounds)]
    return {"file_bytes": one.stat().st_size, "cold_s": statistics.median(cold), "warm_s": statistics.median(warm)}


def prefilter_agreement(target: Path) -> None:
    """Lint every file with the prefilter on and off (default settings, then every rule at low
    confidence) and print how many files it skipped and how many disagree (must be 0)."""
    sys.path.insert(0, str(REPO))
    from syncllint.checks import all_rules
    from syncllint.config import Settings
    from syncllint.diagnostics import Confidence
    from syncllint.engine import lint_source
    from syncllint.prefilter import build_prefilter
    from syncllint.runner import decode_source

    files = sorted(target.rglob("*.py"))
    for settings in (Settings(), Settings(select=("ALL",), min_confidence=Confidence.LOW)):
        prefilter = build_prefilter(
            tuple(r.triggers for r in all_rules()), settings.device_suffixes, settings.host_suffixes
        )
        skipped = differ = findings = 0
        for path in files:
            source = decode_source(path.read_bytes()).text
            on = lint_source(source, str(path), settings, use_prefilter=True).diagnostics
            off = lint_source(source, str(path), settings, use_prefilter=False).diagnostics
            differ += on != off
            findings += len(off)
            skipped += not prefilter.may_report(source)
        print(
            f"{target.name}: {len(files)} files; select={settings.select} min-confidence={settings.min_confidence.name}: "
            f"{findings} findings, {skipped} files not parsed, {differ} files differ"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", choices=sorted(WHEELS), default="vllm")
    parser.add_argument("--every", type=int, default=20, help="take every n-th file (1: the whole corpus)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cpus", default=None, help="taskset CPU list, e.g. 0,1 (default: no pinning)")
    parser.add_argument("--skip", default="", help="comma-separated tools to leave out: torchfix,fixit,ruff")
    parser.add_argument("--prefilter-check", action="store_true", help="only compare findings with the prefilter on and off")
    args = parser.parse_args()

    target = sample(args.corpus, args.every)
    if args.prefilter_check:
        prefilter_agreement(target)
        return
    files = sorted(target.rglob("*.py"))
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    bin_dir = ensure_venv()
    chosen = tools(bin_dir, target, args.jobs, set(filter(None, args.skip.split(","))))
    print(f"# {args.corpus} every {args.every}: {len(files)} files, {lines:,} lines; jobs={args.jobs}; load {os.getloadavg()}")
    print(f"# versions: {versions(bin_dir)}")
    runs: dict[str, list[Run]] = {t.name: [] for t in chosen}
    for round_ in range(args.rounds):
        for tool in chosen:
            if tool.prepare:
                subprocess.run(tool.prepare, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
            run = measure(tool.command, args.cpus)
            runs[tool.name].append(run)
            print(
                f"  round {round_ + 1} {tool.name:15} wall {run.wall_s:8.2f} s  cpu {run.cpu_s:8.2f} s  "
                f"rc={run.returncode}  load {os.getloadavg()[0]:.1f}",
                flush=True,
            )

    base = runs.get("syncllint cold")
    our_wall = statistics.median(r.wall_s for r in base) if base else None
    our_cpu = statistics.median(r.cpu_s for r in base) if base else None
    print()
    print("| tool | wall median (s) | wall vs syncllint cold | CPU median (s) | CPU vs syncllint cold | max process (MB) | max tree (MB) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, measured in runs.items():
        wall = statistics.median(r.wall_s for r in measured)
        cpu = statistics.median(r.cpu_s for r in measured)
        wall_ratio = f"{wall / our_wall:.1f}x" if our_wall else "-"
        cpu_ratio = f"{cpu / our_cpu:.1f}x" if our_cpu else "-"
        process = max(r.max_process_mb for r in measured)
        tree = max(r.max_tree_mb for r in measured)
        print(f"| {name} | {wall:.2f} | {wall_ratio} | {cpu:.2f} | {cpu_ratio} | {process:.0f} | {tree:.0f} |")
    single = one_file_runs(target, args.rounds, args.cpus)
    print(f"\none file ({single['file_bytes']:,} bytes): cold {single['cold_s']:.2f} s, warm {single['warm_s']:.2f} s")
    result = {
        "corpus": args.corpus, "every": args.every, "files": len(files), "lines": lines, "jobs": args.jobs,
        "runs": {k: [r.__dict__ for r in v] for k, v in runs.items()}, "one_file": single,
        "maxrss_self_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }
    (WORK / f"results-{args.corpus}-every{args.every}.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
