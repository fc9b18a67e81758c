"""`ladder optimize OP | --op-file FILE`: run (or resume) the optimization loop on one operator, a suite operator
by name or one defined outside the repository (docs/ladder.md, "An operator of your own")."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ladder.commands.base import Command
from ladder.runner import EXIT_BAD_INPUT, add_run_arguments, run_ops
from suite.operator import Operator, OperatorFileError, get_operator, load_operator_file


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("op", nargs="?", help="operator name (suite/ops)")
    p.add_argument(
        "--op-file",
        type=Path,
        help="a Python file defining OPERATOR = suite.operator.Operator(...) with its reference, inputs, cases, "
        "tolerance and initial_kernel (a module with forward(*inputs))",
    )
    add_run_arguments(p)


def run(args: argparse.Namespace) -> int:
    if (args.op is None) == (args.op_file is None):
        print("ladder: give an operator name or --op-file FILE (one of them)", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        op: Operator = load_operator_file(args.op_file) if args.op_file else get_operator(args.op)
    except (KeyError, OperatorFileError) as e:
        print(f"ladder: {e.args[0]}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return run_ops([op], args)


COMMAND = Command("optimize", "run or resume the optimization loop on one operator", add_arguments, run)
