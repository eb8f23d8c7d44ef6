"""Write the reviewers' instructions for a drawn round: ``labelling-prompt.md`` with the round's rows.

    python benchmarks/accuracy/prompts.py uniformN PARTS [OUT_DIR]

Splits ``.work/worklist-uniformN.csv`` into PARTS files ``OUT_DIR/PROMPT-uniformN-a.md`` ... (default
``.work/prompts``); each tells one reviewer where the project's code is, how to judge a line (the
measured facts, the verdicts) and which CSV to write (``OUT_DIR/uniformN-a.csv``, columns of
``labels.csv``). Reviewers never see the linter's messages. Append their CSVs to ``labels.csv``.
"""

from __future__ import annotations

import csv
import string
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import CORPORA, WORK

TEMPLATE = Path(__file__).resolve().parent / "labelling-prompt.md"


def write_prompts(round_name: str, parts: int, out_dir: Path) -> list[Path]:
    with (WORK / f"worklist-{round_name}.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    roots = {c.project: c.root for c in CORPORA}
    template = TEMPLATE.read_text()
    out_dir.mkdir(parents=True, exist_ok=True)
    size = -(-len(rows) // parts)
    written: list[Path] = []
    for part, key in zip(range(parts), string.ascii_lowercase):
        chunk = rows[part * size:(part + 1) * size]
        if not chunk:
            break
        listed = "\n".join(
            ", ".join(r[k] for k in ("n", "project", "version", "file", "line", "code", "source")) for r in chunk
        )
        text = (template.replace("__ROOT__", str(roots[chunk[0]["project"]]))
                .replace("__OUT__", str(out_dir / f"{round_name}-{key}.csv"))
                .replace("__ROWS__", listed))
        path = out_dir / f"PROMPT-{round_name}-{key}.md"
        path.write_text(text)
        written.append(path)
    return written


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4) or not sys.argv[2].isdigit():
        print("usage: prompts.py uniformN PARTS [OUT_DIR]", file=sys.stderr)
        sys.exit(2)
    target = Path(sys.argv[3]) if len(sys.argv) == 4 else WORK / "prompts"
    for path in write_prompts(sys.argv[1], int(sys.argv[2]), target):
        print(path)
