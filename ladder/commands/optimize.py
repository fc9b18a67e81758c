"""`ladder optimize OP`: run (or resume) the optimization loop on one operator."""

from __future__ import annotations

import argparse
import sys

from ladder.commands.base import Command
from ladder.runner import EXIT_BAD_INPUT, add_run_arguments, run_ops
from suite.operator import get_operator


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("op", help="operator name (suite/ops)")
    add_run_arguments(p)


def run(args: argparse.Namespace) -> int:
    try:
        op = get_operator(args.op)
    except KeyError as e:
        print(f"ladder: {e.args[0]}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return run_ops([op], args)


COMMAND = Command("optimize", "run or resume the optimization loop on one operator", add_arguments, run)
