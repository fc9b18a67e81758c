"""What `ladder optimize` and `ladder suite` share: their arguments, and running the loop over operators."""

from __future__ import annotations

import argparse
import sys
from contextlib import nullcontext
from pathlib import Path

from bench.operator import Operator
from ladder import rewriters, validators
from ladder.context import DEFAULT_SOL_TARGET
from ladder.levels import registry
from ladder.loop import Loop, LoopConfig, LoopError
from ladder.progress import RichProgress
from ladder.records import History, HistoryError
from ladder.rewriters.base import RewriterUnavailable

EXIT_BAD_INPUT, EXIT_REWRITER_DOWN, EXIT_DEADLINE = 2, 3, 4


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rounds", type=int, default=15, help="rounds per operator (default %(default)s)")
    p.add_argument("--out", type=Path, required=True, help="run directory: history.sqlite and per-round files")
    rewriters.add_arguments(p)
    p.add_argument("--validator", default="harness", choices=sorted(validators.VALIDATORS),
                   help="how candidates are checked (default %(default)s)")  # fmt: skip
    p.add_argument("--no-ladder", action="store_true",
                   help="rewrite without diagnosis (ablation baseline): every round goes to the rewriter")  # fmt: skip
    p.add_argument("--sol-target", type=float, default=DEFAULT_SOL_TARGET,
                   help="fraction of speed of light at which a case stops mattering (default %(default)s)")  # fmt: skip
    p.add_argument("--ncu", default="ncu", help="Nsight Compute executable for L2 counters (default %(default)s)")
    p.add_argument("--index", type=Path, help="compiler index for L4 (default out/compiler-index.db, built from "
                                              "third_party/triton when absent)")  # fmt: skip
    p.add_argument("--deadline-s", type=float,
                   help="start no round after this many seconds; finished rounds are kept and the same command "
                        "resumes (exit status 4)")  # fmt: skip
    p.add_argument("--quiet", action="store_true", help="no progress display")


def run_ops(ops: list[Operator], args: argparse.Namespace) -> int:
    if args.rounds < 1:
        print(f"--rounds must be ≥ 1, got {args.rounds}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not 0 < args.sol_target <= 1:
        print(f"--sol-target must be in (0, 1], got {args.sol_target}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.deadline_s is not None and args.deadline_s <= 0:
        print(f"--deadline-s must be > 0, got {args.deadline_s}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.index is not None and not args.index.is_file():
        print(f"--index {args.index} does not exist: build it with `compiler-index build --source "
              f"third_party/triton --db {args.index}`", file=sys.stderr)  # fmt: skip
        return EXIT_BAD_INPUT
    try:
        rewriter = rewriters.from_args(args)
        validator = validators.create(args.validator)
        history = History(args.out)
    except (ValueError, HistoryError) as e:
        print(f"ladder: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    options: tuple = (("ncu", args.ncu),) + ((("index_db", str(args.index)),) if args.index else ())
    config = LoopConfig(rounds=args.rounds, diagnose=not args.no_ladder, sol_target=args.sol_target,
                        level_options=options, deadline_s=args.deadline_s)  # fmt: skip
    try:
        with nullcontext() if args.quiet else RichProgress() as progress:
            loop = Loop(history, args.out, rewriter, validator, registry(), config, progress)
            unfinished = []
            for op in ops:
                loop.run(op)
                if loop.deadline_reached:  # this operator, and every one after it, stopped short
                    unfinished.append(op.name)
    except RewriterUnavailable as e:
        print(f"ladder: stopped, the rewriter is unavailable: {e}\nFinished rounds are kept in {history.path}; "
              f"run the same command again to resume.", file=sys.stderr)  # fmt: skip
        return EXIT_REWRITER_DOWN
    except LoopError as e:
        print(f"ladder: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    finally:
        history.close()
    print(f"history: {history.path}  (ladder report {args.out})")
    if loop.deadline_reached:
        print(f"ladder: --deadline-s {args.deadline_s:g} reached; not finished: {', '.join(unfinished)}. Run the same "
              f"command again to resume.", file=sys.stderr)  # fmt: skip
        return EXIT_DEADLINE
    return 0

