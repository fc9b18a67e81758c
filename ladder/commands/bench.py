"""`ladder bench`: validate and time the suite's kernels (frozen initial ones, or candidates from a directory)
against eager PyTorch and torch.compile; write JSON, print a table, save a plot.

On a machine without a GPU it checks every selected kernel under TRITON_INTERPRET=1 on the small cases and says
that timing needs a GPU. Exit status 0 when every operator's candidate is accepted (correct and clean).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from irscope.argtypes import number, positive, positive_number
from ladder.commands.base import Command

HELP = "validate and time the operator suite (initial Triton kernels or candidates) against eager and torch.compile"


def _csv(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, required=True, help="output directory (bench.json, bench.png)")
    p.add_argument("--ops", type=_csv, default=[], help="comma-separated operator names (default: all)")
    p.add_argument("--cases", type=_csv, default=None, help="comma-separated case names, e.g. c1,c3 (GPU)")
    p.add_argument(
        "--candidate-dir",
        type=Path,
        default=None,
        help="directory of candidate modules named <op>.py; those ops are also timed against their initial kernel",
    )
    p.add_argument(
        "--device",
        choices=("auto", "cuda", "cpu"),
        default="auto",
        help="cuda: time on the GPU; cpu: check under the interpreter; auto (default): cuda when there is one",
    )
    p.add_argument("--seeds", type=positive, default=3, help="fresh input sets per case and input kind (default 3)")
    p.add_argument(
        "--compile-cases",
        type=str,
        default="c3",
        help="cases on which torch.compile is timed: 'c3' (default), a list, 'all' or 'none'",
    )
    p.add_argument("--rounds", type=positive, default=3, help="interleaved timing rounds (median of medians)")
    p.add_argument("--warmup-ms", type=positive_number, default=10.0, help="do_bench warm-up per round (ms)")
    p.add_argument("--rep-ms", type=positive_number, default=40.0, help="do_bench measurement time per round (ms)")
    p.add_argument(
        "--cudagraph-below-us",
        type=number(0),
        default=20.0,
        help="re-time cases faster than this with CUDA graphs (µs)",
    )
    p.add_argument(
        "--deadline-s",
        type=positive_number,
        default=480.0,
        help="start no operator or case after this many seconds (they are listed as skipped)",
    )
    p.add_argument("--op-timeout-s", type=positive_number, default=300.0, help="wall-clock limit per operator's worker")
    p.add_argument(
        "--silence-s",
        type=positive_number,
        default=120.0,
        help="kill a worker that reports nothing for this long (a hung case)",
    )


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from ladder.harness.report import print_table, save_plot
    from ladder.harness.suite_run import JSON_NAME, PLOT_NAME, SuiteSettings, run_suite
    from ladder.harness.timing import TimingSettings

    console = Console()
    device = args.device if args.device != "auto" else _detect_device()
    if args.out.exists() and not args.out.is_dir():
        print(f"ladder: --out {args.out} is a file: give a directory for bench.json and bench.png", file=sys.stderr)
        return 2
    if args.candidate_dir is not None and not args.candidate_dir.is_dir():
        console.print(f"[red]--candidate-dir {args.candidate_dir} is not a directory[/]")
        return 2
    compile_cases = {"none": [], "all": ["all"]}.get(args.compile_cases, _csv(args.compile_cases))
    settings = SuiteSettings(
        out=args.out,
        device=device,
        ops=args.ops,
        cases=args.cases,
        candidate_dir=args.candidate_dir,
        seeds=args.seeds,
        compile_cases=compile_cases,
        timing=TimingSettings(
            warmup_ms=args.warmup_ms,
            rep_ms=args.rep_ms,
            rounds=args.rounds,
            cudagraph_below_ms=args.cudagraph_below_us / 1000.0,
        ),
        deadline_s=args.deadline_s,
        op_timeout_s=args.op_timeout_s,
        silence_s=args.silence_s,
    )
    if device == "cpu":
        console.print(
            "[yellow]No GPU: checking the kernels under TRITON_INTERPRET=1 on the small cases; timing needs a GPU.[/]"
        )
        if args.cases:
            console.print("[yellow]--cases selects GPU cases; the CPU check runs each operator's small cases.[/]")
    try:
        doc = run_suite(settings, progress=lambda line: console.print(line, markup=False, highlight=False))
    except KeyError as e:
        console.print(f"[red]{e.args[0]}[/]")
        return 2
    print_table(doc, console)
    plot = save_plot(doc, args.out / PLOT_NAME)
    console.print(f"wrote {args.out / JSON_NAME}" + (f" and {plot}" if plot else ""))
    if device == "cpu":
        console.print("[yellow]Timing needs a GPU: no timings were taken on this machine.[/]")
    agg = doc["aggregate"]
    all_ok = not doc["skipped"] and agg["accepted_operators"] == agg["operators"]
    console.print(f"{agg['accepted_operators']}/{agg['operators']} operators accepted in {doc['seconds']} s")
    return 0 if all_ok else 1


def _detect_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


COMMAND = Command(name="bench", help=HELP, add_arguments=add_arguments, run=run)
