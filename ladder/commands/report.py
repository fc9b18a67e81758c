"""`ladder report DIR`: speedups of each operator's best round, the suite aggregate, level accounting, a plot."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ladder.commands.base import Command
from ladder.records import History, HistoryError
from ladder.report import plot, render, summarize


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dir", type=Path, help="run directory (holds history.sqlite)")
    p.add_argument("--json", type=Path, help="also write the summary as JSON here")
    p.add_argument("--plot", type=Path, help="distribution plot (PNG; default DIR/speedups.png)")


def run(args: argparse.Namespace) -> int:
    if not (args.dir / History.FILE).is_file():
        print(f"ladder: no {History.FILE} in {args.dir}: give the --out directory of a ladder run", file=sys.stderr)
        return 2
    try:
        with History(args.dir) as h:
            summary = summarize(h, args.dir)
    except HistoryError as e:
        print(f"ladder: {e}", file=sys.stderr)
        return 2
    print(render(summary))
    if summary.timed:
        print(f"plot: {plot(summary, args.plot or args.dir / 'speedups.png')}")
    if args.json:
        args.json.write_text(json.dumps(summary.to_json(), indent=1))
    return 0


COMMAND = Command("report", "speedups per operator, suite aggregate, level accounting and a plot", add_arguments, run)
