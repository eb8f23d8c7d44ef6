"""A long fuzzing run: the properties of tests/test_fuzz.py with many more examples.

    python benchmarks/fuzz_long.py --examples 10000 [--source mutated|lines|generated|notebooks|all] [--no-fix]

Prints how many programs were linted, how many produced findings or SYNC001, how long it took,
and the minimal failing program if any property broke (exit code 1). Unless --no-fix, every
program is also fixed with ``--fix --unsafe-fixes`` (fixer.fix_source): it never raises, a
changed output compiles, and a second fix is a no-op; ``fixed_changed`` counts the programs the
fixes changed.
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

from fuzzing import (
    EVERYTHING,
    fix_is_sound,
    generated_programs,
    line_mutated_programs,
    lint_never_raises,
    mutated_programs,
    notebook_fix_is_sound,
)
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as fixed_seed
from hypothesis import strategies as st

from syncllint.notebook import lint_notebook


def run(source: str, examples: int, seed: int, fix: bool = True) -> dict[str, object]:
    seen: Counter[str] = Counter()
    strategy = {
        "mutated": mutated_programs(),
        "lines": line_mutated_programs(),
        "generated": generated_programs(),
        "notebooks": st.lists(mutated_programs() | line_mutated_programs(), min_size=1, max_size=4),
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
            if fix:
                seen["fixed"] += 1
                if notebook_fix_is_sound(program):
                    seen["fixed changed"] += 1
        else:
            assert isinstance(program, str)
            diagnostics = lint_never_raises(program)
            if fix:
                seen["fixed"] += 1
                if fix_is_sound(program).changed:
                    seen["fixed changed"] += 1
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
        "fixed": seen["fixed"],
        "fixed_changed": seen["fixed changed"],
        "seconds": round(time.perf_counter() - started, 1),
        "failure": failure,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--source", choices=["mutated", "lines", "generated", "notebooks", "all"], default="all")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-fix", action="store_true", help="Lint only; skip the --fix properties.")
    args = parser.parse_args()
    sources = ["mutated", "lines", "generated", "notebooks"] if args.source == "all" else [args.source]
    failed = False
    for source in sources:
        result = run(source, args.examples, args.seed, fix=not args.no_fix)
        print(json.dumps(result, indent=2), flush=True)
        failed = failed or result["failure"] is not None
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
