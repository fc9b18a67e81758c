"""`ladder export DIR`: the history as JSON lines (formats: docs/ladder.md, "JSONL export")."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ladder import synthesis_export
from ladder.commands.base import Command
from ladder.records import History, HistoryError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", type=Path, help="run directory (holds history.sqlite)")
    p.add_argument("-o", "--output", type=Path, help="JSONL file (default DIR/rounds.jsonl)")
    p.add_argument("--op", help="only this operator")
    p.add_argument(
        "--format",
        choices=("ladder", "synthesis"),
        default="ladder",
        help="ladder: every round, all fields (docs/ladder.md); synthesis: the patterns synthesizer's "
        "reader format, rewrite rounds only",
    )


def run(args: argparse.Namespace) -> int:
    if not (args.dir / History.FILE).is_file():
        print(f"ladder: no {History.FILE} in {args.dir}: give the --out directory of a ladder run", file=sys.stderr)
        return 2
    out = args.output or args.dir / "rounds.jsonl"
    try:
        with History(args.dir) as h:
            n = h.export_jsonl(out, args.op) if args.format == "ladder" else synthesis_export.export(h, out, args.op)
    except HistoryError as e:
        print(f"ladder: {e}", file=sys.stderr)
        return 2
    print(f"{n} rounds → {out}")
    return 0


COMMAND = Command("export", "write the round history as JSON lines for the patterns synthesizer", add_arguments, run)
