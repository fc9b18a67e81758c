"""`ladder diagnose OP | FILE.py:KERNEL`: one pass up the ladder on a kernel; prints each level's evidence and
stop tests.

OP is a bundled operator (suite/ops; its frozen initial kernel, or --kernel FILE with the same `forward`).
FILE.py:KERNEL is any kernel of the user's own, specialized by `irscope dump`'s arguments (--arg, --constexpr,
--num-warps, …); it has no timings, so L2 says so and L1, L3 and L4 run on the compiled code."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from irscope.argtypes import non_negative, number
from irscope.capture import SpecError
from irscope.capture.arguments import add_specialization_arguments, specialization
from irscope.capture.loader import KernelLoadError, load_module
from irscope.targets import TargetError
from ladder import api
from ladder.commands.base import Command
from ladder.context import operator_context
from ladder.evidence import ARTIFACT, LEVEL_TITLES, RAN, LevelResult, SourceRef
from ladder.kernel_spec import KernelSpec
from ladder.options import DEFAULT_SOL_TARGET, MAX_COUNTERFACTUALS, Options, build_options
from ladder.policy import Diagnosis
from ladder.validation import Validation
from suite.operator import get_operator


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("op", metavar="OP|FILE.py:KERNEL", help="an operator name (suite/ops) or a kernel of your own")
    p.add_argument(
        "--kernel", type=Path, help="with OP: the kernel module to diagnose (default: the frozen initial kernel)"
    )
    add_specialization_arguments(p)
    p.add_argument(
        "--validation",
        type=Path,
        help="that kernel's validation JSON with GPU timings (OUT/OP/round-NNN/validation.json)",
    )
    p.add_argument("--out", type=Path, help="where levels write artifacts (default out/diagnose/OP)")
    p.add_argument(
        "--sol-target",
        type=number(0, 1, low_open=True),
        default=DEFAULT_SOL_TARGET,
        help="fraction of speed of light at which a case stops mattering (default %(default)s)",
    )
    p.add_argument("--ncu", default=Options.ncu, help="Nsight Compute executable for L2 counters")
    p.add_argument(
        "--index",
        type=Path,
        help="compiler index for L4 (default: out/compiler-index.db in the current directory; when that is absent, L4 "
        "builds it from ./third_party/triton if that checkout exists, else L4 reports itself unavailable and how "
        "to get the sources: third_party/README.md)",
    )
    p.add_argument(
        "--counterfactuals",
        type=non_negative,
        default=None,
        metavar="N",
        help=f"what-if compiles L4 may run to test its hypotheses (default {MAX_COUNTERFACTUALS}; 0 skips them)",
    )
    p.add_argument(
        "--through",
        choices=["L1", "L2", "L3", "L4"],
        default="L4",
        help="also run the levels above the one the ladder stops at, up to this one (default L4)",
    )
    p.add_argument("--json", action="store_true", help="print the diagnosis as JSON")


def _level(r: LevelResult) -> list[str]:
    lines = [f"{r.level} {LEVEL_TITLES[r.level]}: {r.status}" + (f" — {r.reason}" if r.status != RAN else "")]
    lines += [f"  evidence {e.render()}" for e in r.evidence]
    lines += [
        f"  hypothesis {h.bottleneck} at {h.hotspot} (cases {', '.join(h.cases) or 'all'}) [{', '.join(h.evidence)}]"
        for h in r.hypotheses
    ]
    for f in r.families:
        state = f"ruled out: {f.ruled_out}" if f.ruled_out else f"[{', '.join(f.evidence)}]"
        lines.append(f"  family {f.name}: {f.description} {state}")
    lines += [f"  note {n}" for n in r.notes]
    if r.status == RAN and r.tests:
        lines += [f"  test {label}: {'pass' if t.passed else 'FAIL'} — {t.why}" for label, t in r.tests.items()]
    return lines


def describe(d: Diagnosis) -> str:
    lines = [line for r in d.results for line in _level(r)]
    if d.outcome == "actionable":
        assert d.family is not None and d.hypothesis is not None
        lines.append(f"→ actionable at {d.level}: {d.hypothesis.bottleneck}; rewrite family {d.family.name}")
    elif d.outcome == "at-target":
        lines.append("→ at target: every case runs within target of speed of light")
    else:
        lines.append(f"→ inconclusive: no level up to {d.reached} could stop; no rewrite would be forced")
    for r in d.results:
        for h in r.hypotheses:
            if r.level == d.reached and h.finding is not None:
                lines.append(f"  {h.finding.hazard.symptom}: {h.finding.share:.0%} of the kernel's cost")
    return "\n".join(lines)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run_kernel(args: argparse.Namespace) -> int:
    """FILE.py:KERNEL with its specialization."""
    try:
        kernel_args, options = specialization(args)
        spec = KernelSpec.from_ref(args.op, kernel_args, options, args.target)
        spec.request()  # a bad specialization fails here, with the JIT binder's message
    except (KernelLoadError, SpecError, TargetError) as e:
        print(f"ladder: {e}", file=sys.stderr)
        return 2
    d = api.run(
        spec,
        through=args.through,
        index=args.index,
        workdir=args.out,
        say=_say,
        counterfactuals=args.counterfactuals,
    )
    if args.json:
        print(json.dumps(d.to_json(), indent=1))
    else:
        print(_text(f"{spec.name}: {spec.path} ({spec.describe()}, {spec.target})", d.diagnosis, d.deeper, args))
    return 0


def _text(head: str, d: Diagnosis, deeper: tuple[LevelResult, ...], args: argparse.Namespace) -> str:
    text = f"{head}\n{describe(d)}"
    if deeper:
        text += f"\n\ndeeper evidence (the ladder stops at {d.level or d.reached}; --through {args.through}):\n"
        text += "\n".join(line for r in deeper for line in _level(r))
    return text


def run(args: argparse.Namespace) -> int:
    if ":" in args.op or args.op.endswith(".py"):
        return run_kernel(args)
    try:
        op = get_operator(args.op)
    except KeyError as e:
        print(f"ladder: {e.args[0]}; or give FILE.py:KERNEL for a kernel of your own", file=sys.stderr)
        return 2
    kernel = args.kernel or op.kernel_path
    if not kernel.is_file():
        print(f"ladder: kernel {kernel} does not exist", file=sys.stderr)
        return 2
    try:  # every level imports it: a module that cannot be imported is an error here, not an inconclusive ladder
        load_module(kernel, "ladder_diagnose_kernel")
    except KernelLoadError as e:
        print(f"ladder: {e}", file=sys.stderr)
        return 2
    validation, ref = None, None
    if args.validation:
        try:
            validation = Validation.from_json(json.loads(args.validation.read_text()))
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"ladder: {args.validation} is not a validation JSON written by a ladder run: {e}", file=sys.stderr)
            return 2
        ref = SourceRef(ARTIFACT, str(args.validation))
    workdir = args.out or Path("out") / "diagnose" / op.name
    if workdir.exists() and not workdir.is_dir():
        print(f"ladder: --out {workdir} is a file: give a directory for the levels' artifacts", file=sys.stderr)
        return 2
    try:
        options = build_options(
            target=args.target,
            sol_target=args.sol_target,
            index=args.index,
            ncu=args.ncu,
            counterfactuals=args.counterfactuals,
        )
    except TargetError as e:
        print(f"ladder: {e}", file=sys.stderr)
        return 2
    workdir.mkdir(parents=True, exist_ok=True)
    d, deeper = api.ascend(
        operator_context(op, kernel, workdir, 0, validation, ref, options=options, say=_say), args.through
    )
    if args.json:
        print(json.dumps({**d.to_json(), "beyond": [r.to_json() for r in deeper]}, indent=1))
    else:
        print(_text(f"{op.name}: {kernel}", d, deeper, args))
    return 0


COMMAND = Command("diagnose", "one pass up the ladder (L1→L4) on a kernel, with the evidence", add_arguments, run)
