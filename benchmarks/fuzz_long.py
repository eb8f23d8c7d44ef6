"""A long fuzzing run: the properties of tests/test_fuzz.py with many more examples.

    python benchmarks/fuzz_long.py --examples 10000 [--source mutated|generated|notebooks|all]

Prints how many programs were linted, how many produced findings or SYNC001, how long it took,
and the minimal failing program if any property broke (exit code 1).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from fuzzing import EVERYTHING, generated_programs, lint_never_raises, mutated_programs
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as fixed_seed
from hypothesis import strategies as st

from syncllint.notebook import lint_notebook


def run(source: str, examples: int, seed: int) -> dict[str, object]:
    seen: Counter[str] = Counter()
    strategy = {
        "mutated": mutated_programs(),
        "generated": generated_programs(),
        "notebooks": st.lists(mutated_programs(), min_size=1, max_size=4),
    }[source]

    @settings(
        max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck),
        phases=(Phase.generate, Phase.shrink),
    )
    @given(strategy)
    def prop(program: object) -> None:
        seen["programs"] += 1
        if isinstance(program, list):
            text = json.dumps({"cells": [{"cell_type": "code", "source": c} for c in program]})
            result = lint_notebook(text.encode(), "fuzzed.ipynb", EVERYTHING)
            assert result.internal_error is None, result.internal_error
            diagnostics = result.diagnostics
        else:
            assert isinstance(program, str)
            diagnostics = lint_never_raises(program)
        codes = {d.code for d in diagnostics}
        seen["with SYNC001" if "SYNC001" in codes else "parsed"] += 1
        if codes - {"SYNC001"}:
            seen["with findings"] += 1

    started = time.perf_counter()
    failure = None
    try:
        fixed_seed(seed)(prop)()
    except Exception:  # noqa: BLE001 - report the falsifying example, do not hide it
        failure = traceback.format_exc()[-6000:]
    return {
        "source": source,
        "examples_requested": examples,
        "programs_linted": seen["programs"],
        "parsed": seen["parsed"],
        "sync001": seen["with SYNC001"],
        "with_findings": seen["with findings"],
        "seconds": round(time.perf_counter() - started, 1),
        "failure": failure,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--source", choices=["mutated", "generated", "notebooks", "all"], default="all")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sources = ["mutated", "generated", "notebooks"] if args.source == "all" else [args.source]
    failed = False
    for source in sources:
        result = run(source, args.examples, args.seed)
        print(json.dumps(result, indent=2), flush=True)
        failed = failed or result["failure"] is not None
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
