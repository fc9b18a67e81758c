"""`ladder suite`: run (or resume) the optimization loop on every operator of the suite, in suite order."""

from __future__ import annotations

import argparse
import sys

from ladder.commands.base import Command
from ladder.runner import EXIT_BAD_INPUT, add_run_arguments, run_ops
from suite.operator import all_operators


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ops", help="comma-separated subset of operators (default: all)")
    add_run_arguments(p)


def run(args: argparse.Namespace) -> int:
    ops = all_operators()
    names = [n.strip() for n in args.ops.split(",") if n.strip()] if args.ops else list(ops)
    unknown = [n for n in names if n not in ops]
    if unknown or not names:
        print(
            f"ladder: unknown operator(s) {', '.join(unknown) or '(none given)'}; operators: {', '.join(ops)}",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    return run_ops([ops[n] for n in names], args)


COMMAND = Command("suite", "run or resume the optimization loop on every suite operator", add_arguments, run)
