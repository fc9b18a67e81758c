"""`ladder export DIR`: every round as a JSON line in the format the patterns synthesizer reads (docs/ladder.md,
"JSONL export"), or each operator's best kept kernel as a module `<op>.py` (`--format kernels`), the directory
`ladder bench --candidate-dir` re-times."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ladder import round_lines
from ladder.commands.base import Command
from ladder.loop import round_dir
from ladder.records import History, HistoryError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", type=Path, help="run directory (holds history.sqlite)")
    p.add_argument("-o", "--output", type=Path, help="JSONL file (default DIR/rounds.jsonl)")
    p.add_argument("--op", help="only this operator")
    p.add_argument(
        "--format",
        choices=("rounds", "kernels"),
        default="rounds",
        help="rounds: every round as a line of the format `patterns synthesize` reads (docs/ladder.md); kernels: "
        "each operator's best kept kernel as <op>.py in the directory -o (for `ladder bench --candidate-dir`)",
    )


def run(args: argparse.Namespace) -> int:
    if not (args.dir / History.FILE).is_file():
        print(f"ladder: no {History.FILE} in {args.dir}: give the --out directory of a ladder run", file=sys.stderr)
        return 2
    out = args.output or args.dir / ("best-kernels" if args.format == "kernels" else "rounds.jsonl")
    try:
        with History(args.dir) as h:
            if args.format == "kernels":
                return _kernels(h, args.dir, out, args.op)
            n = round_lines.export(h, out, args.op)
    except HistoryError as e:
        print(f"ladder: {e}", file=sys.stderr)
        return 2
    print(f"{n} rounds → {out}")
    return 0


def _kernels(h: History, run_dir: Path, out: Path, only: str | None) -> int:
    """Each operator's best kept kernel (baseline or accepted round) as out/<op>.py."""
    if out.exists() and not out.is_dir():
        print(f"ladder: -o {out} is a file: give a directory for the <op>.py modules", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    ops = [only] if only else h.ops()
    written = 0
    for op in ops:
        best = h.best(op)
        if best is None:
            print(f"ladder: {op}: no kept kernel (no baseline or accepted round)", file=sys.stderr)
            continue
        source = round_dir(run_dir, op, best.round) / "candidate.py"
        (out / f"{op}.py").write_text(source.read_text())
        written += 1
    print(f"{written} kernels (each operator's best kept round) → {out}")
    return 0 if written == len(ops) else 1


COMMAND = Command("export", "write every round as JSON lines (the patterns synthesizer's format)", add_arguments, run)
