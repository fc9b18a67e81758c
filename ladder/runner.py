"""What `ladder optimize` and `ladder suite` share: their arguments, and running the loop over operators.

With `--jobs N`, N operators are in flight at once, each in its own thread with its own history connection
(SQLite WAL: one transaction per finished round, whoever commits it) and its own Loop; operators are handed out
in order as workers free up. Workers are spread over the visible GPUs; the workers of one GPU share it through
its GpuLock (correctness runs and compiles together, timings and counters alone: ladder/harness/gpu_lock.py).
The work of a round is mostly in child processes (compiles, the harness, ncu), so threads suffice.
"""

from __future__ import annotations

import argparse
import queue
import sys
import threading
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path

from irscope.targets import Target, TargetError, local_target, parse_target
from ladder import gpu_busy, rewriters, status, validators
from ladder.confine import SandboxUnavailable
from ladder.harness import memory_budget
from ladder.harness.baselines import BaselineCache
from ladder.harness.baselines import default_path as baseline_cache_path
from ladder.harness.gpu_lock import GpuSlot, gpu_slots
from ladder.levels import LEVELS
from ladder.loop import Loop, LoopConfig, LoopError
from ladder.options import DEFAULT_SOL_TARGET, NCU_CASES, Options, build_options
from ladder.progress import HEARTBEAT_S, LOG, RichProgress, RunLog, Tee
from ladder.records import History, HistoryError
from ladder.rewriters.base import Rewriter, RewriterUnavailable
from ladder.validators import Validator
from suite.operator import Operator

EXIT_BAD_INPUT, EXIT_REWRITER_DOWN, EXIT_DEADLINE = 2, 3, 4


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rounds", type=int, default=15, help="rounds per operator (default %(default)s)")
    p.add_argument("--out", type=Path, required=True, help="run directory: history.sqlite and per-round files")
    rewriters.add_arguments(p)
    p.add_argument(
        "--validator",
        default="harness",
        choices=sorted(validators.VALIDATORS),
        help="how candidates are checked (default %(default)s)",
    )
    p.add_argument(
        "--no-ladder",
        action="store_true",
        help="rewrite without diagnosis (ablation baseline): every round goes to the rewriter",
    )
    p.add_argument(
        "--sol-target",
        type=float,
        default=DEFAULT_SOL_TARGET,
        help="fraction of speed of light at which a case stops mattering (default %(default)s)",
    )
    p.add_argument(
        "--ncu", default=Options.ncu, help="Nsight Compute executable for L2 counters, or 'none' (default %(default)s)"
    )
    p.add_argument(
        "--ncu-cases",
        type=int,
        default=NCU_CASES,
        help="cases profiled per kernel, those furthest from speed of light first (default %(default)s)",
    )
    p.add_argument(
        "--min-gain",
        type=float,
        default=0.02,
        help="accept a candidate only this much faster than its base, geo-mean (default %(default)s)",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="operators in flight at once, spread over the visible GPUs (default %(default)s)",
    )
    p.add_argument(
        "--index",
        type=Path,
        help="compiler index for L4 (default: out/compiler-index.db in the current directory; when that is absent, L4 "
        "builds it from ./third_party/triton if that checkout exists, else L4 reports itself unavailable and how "
        "to get the sources: third_party/README.md)",
    )
    p.add_argument(
        "--target",
        help="what the ladder diagnoses for (L1's cards, L3's captures, L4's compiler gates): cuda:90, cuda:80, "
        "hip:gfx942, … (default: what this machine's GPU reports; cuda:90 on a machine without one)",
    )
    p.add_argument(
        "--deadline-s",
        type=float,
        help="start no round after this many seconds; finished rounds are kept and the same command "
        "resumes (exit status 4)",
    )
    p.add_argument(
        "--no-torch-compile",
        action="store_true",
        help="do not time torch.compile with the baseline (it compiles the reference per shape; time it apart "
        "with `ladder bench --compile-cases all`)",
    )
    p.add_argument(
        "--baseline-cache",
        default=str(baseline_cache_path()),
        help="file of the initial kernels' baselines kept across runs (ladder.harness.baselines), or 'none' "
        "(default %(default)s)",
    )
    p.add_argument(
        "--heartbeat-s",
        type=float,
        default=HEARTBEAT_S,
        help="every this many seconds, one line per job: what it does and waits for (default %(default)s)",
    )
    p.add_argument(
        "--quiet", action="store_true", help="no progress on the terminal (OUT/progress.log is still written)"
    )
    p.add_argument(
        "--unsafe-no-sandbox",
        action="store_true",
        help="run candidates without confinement where none works on this machine (no bwrap, no namespaces): "
        "LLM-written code then runs as you, with your files and network (docs/ladder.md, sandbox)",
    )


def _check(args: argparse.Namespace) -> str | None:
    """What is wrong with the run's arguments, if anything."""
    if args.out.exists() and not args.out.is_dir():
        return f"--out {args.out} is a file: give a run directory (new, or a run's to resume it)"
    if args.rounds < 1:
        return f"--rounds must be ≥ 1, got {args.rounds}"
    if args.jobs < 1:
        return f"--jobs must be ≥ 1, got {args.jobs}"
    if args.ncu_cases < 1:
        return f"--ncu-cases must be ≥ 1, got {args.ncu_cases}"
    if not 0 < args.sol_target <= 1:
        return f"--sol-target must be in (0, 1], got {args.sol_target}"
    if not 0 <= args.min_gain < 1:
        return f"--min-gain must be in [0, 1), got {args.min_gain}"
    if not args.heartbeat_s > 0:
        return f"--heartbeat-s must be > 0, got {args.heartbeat_s}"
    if args.deadline_s is not None and not args.deadline_s > 0:  # NaN too
        return f"--deadline-s must be > 0, got {args.deadline_s}"
    if args.index is not None and not args.index.is_file():
        return (
            f"--index {args.index} does not exist: build it with `compiler-index build --source "
            f"third_party/triton --db {args.index}`"
        )
    return None


class _Pool:
    """Workers taking operators from one queue; each worker has its history connection, GPU slot and Loop."""

    def __init__(
        self,
        ops: list[Operator],
        args: argparse.Namespace,
        rewriter: Rewriter,
        validators_by_slot: dict[GpuSlot | None, Validator],
        progress: Tee,
        options: Options,
    ):
        self.args, self.rewriter, self.validators, self.progress = args, rewriter, validators_by_slot, progress
        self.options = options  # each job's with its own GPU slot
        self.todo: queue.Queue[Operator] = queue.Queue()
        for op in ops:
            self.todo.put(op)
        self.unfinished: list[str] = []  # operators the deadline cut short (or left unstarted)
        self.errors: list[BaseException] = []
        self._lock = threading.Lock()

    def _config(self, slot: GpuSlot | None) -> LoopConfig:
        a = self.args
        return LoopConfig(
            rounds=a.rounds,
            diagnose=not a.no_ladder,
            options=replace(self.options, gpu_slot=slot),
            deadline_s=a.deadline_s,
            min_gain=a.min_gain,
            time_compile=not a.no_torch_compile,
        )

    def work(self, slot: GpuSlot | None) -> None:
        history = History(self.args.out)
        try:
            loop = Loop(
                history,
                self.args.out,
                self.rewriter,
                self.validators[slot],
                LEVELS,
                self._config(slot),
                self.progress,
            )
            while not self.errors:
                try:
                    op = self.todo.get_nowait()
                except queue.Empty:
                    return
                loop.run(op)
                if loop.cut_short:  # the deadline passed: operators still queued get no round either
                    with self._lock:
                        self.unfinished.append(op.name)
        except BaseException as e:  # ends this worker; the others finish their operator and stop
            with self._lock:
                self.errors.append(e)
        finally:
            status.done()
            history.close()

    def run(self, slots: list[GpuSlot | None]) -> None:
        # daemon: an interrupted run exits at once; every finished round is already committed
        threads = [
            threading.Thread(target=self.work, args=(slot,), name=f"ladder-{i}", daemon=True)
            for i, slot in enumerate(slots)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if self.errors:
            raise self.errors[0]


def _target(given: str | None) -> Target:
    """--target, or this machine's GPU's (cuda:90 without one); an unbuildable GPU says where it came from."""
    if given:
        return parse_target(given)
    try:
        return local_target()
    except TargetError as e:
        raise TargetError(f"{e} (this machine's GPU; give --target to diagnose for another)") from None


def run_ops(ops: list[Operator], args: argparse.Namespace) -> int:
    problem = _check(args)
    if problem:
        print(problem, file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        options = build_options(
            target=_target(args.target),
            sol_target=args.sol_target,
            index=args.index,
            ncu=args.ncu,
            ncu_cases=args.ncu_cases,
        )
        rewriter = rewriters.from_args(args)
        gpus: list[GpuSlot | None] = list(gpu_slots()) or [None]
        slots = [gpus[i % len(gpus)] for i in range(args.jobs)]  # round-robin: job i on GPU i mod n
        memory_budget.expect_jobs(min(args.jobs, len(ops)), len(gpus))
        baselines = BaselineCache(None if args.baseline_cache == "none" else Path(args.baseline_cache))
        validators_by_slot = {
            slot: validators.create(args.validator, slot, unsafe_no_sandbox=args.unsafe_no_sandbox, baselines=baselines)
            for slot in dict.fromkeys(slots)
        }
        history = History(args.out)  # created or migrated once, before the workers open it
        path = history.path
        history.close()
    except (ValueError, HistoryError, SandboxUnavailable) as e:
        print(f"ladder: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        bar = None if args.quiet else RichProgress()
        with (
            nullcontext() if bar is None else bar,
            RunLog(args.out / LOG, None if bar is None else bar.console, args.heartbeat_s) as log,
            gpu_busy.sampling(args.out),
        ):
            pool = _Pool(ops, args, rewriter, validators_by_slot, Tee(bar, log), options)
            try:
                pool.run(slots[: len(ops)])
            finally:
                for validator in validators_by_slot.values():
                    validator.close()
    except RewriterUnavailable as e:
        print(
            f"ladder: stopped, the rewriter is unavailable: {e}\nFinished rounds are kept in {path}; "
            f"run the same command again to resume.",
            file=sys.stderr,
        )
        return EXIT_REWRITER_DOWN
    except LoopError as e:
        print(f"ladder: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except HistoryError as e:  # a record it resumes from is damaged: every readable round stays as it is
        print(
            f"ladder: {e}; the run cannot resume past it: give a new --out (this history is left as it is)",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    print(f"history: {path}  (ladder report {args.out})")
    if pool.unfinished:
        unfinished = [op.name for op in ops if op.name in pool.unfinished]
        print(
            f"ladder: --deadline-s {args.deadline_s:g} reached; not finished: {', '.join(unfinished)}. Run the "
            f"same command again to resume.",
            file=sys.stderr,
        )
        return EXIT_DEADLINE
    return 0
