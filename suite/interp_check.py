"""A kernel module's `forward` on the operator's small cases under Triton's interpreter (CPU, no GPU): the one
check every interpreter caller runs (this command, the ladder's interpreter validator, the pattern appliers'
checker), so correctness is decided the same way everywhere: `suite.compare.verify`, the operator's own rule.

    python -m suite.interp_check [OP ...] [--seeds 3] [--json FILE]     # every frozen initial kernel

`check_forward` needs a process in interpreter mode: TRITON_INTERPRET=1 set before triton is first imported
(triton.jit reads it when it decorates, and triton.language decorates its own helpers on import). The command
sets it first thing; importing this module sets nothing.
"""

from __future__ import annotations

import os

if __name__ == "__main__":
    os.environ["TRITON_INTERPRET"] = "1"

import argparse
import json
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from suite.compare import verify
from suite.operator import Case, Operator, all_operators


@dataclass(frozen=True)
class Run:
    """One call of `forward` on one small case, input kind and seed, and its verdict."""

    case: Case
    kind: str
    seed: int
    ok: bool
    detail: str  # the verdict's, "forward modified an input", or the exception's traceback
    seconds: float


def check_call(op: Operator, forward: Callable[..., object], case: Case, kind: str, seed: int) -> Run:
    """`forward` on fresh CPU inputs, judged by `verify` against pristine copies of them; modifying an input fails."""
    import torch

    inputs = op.make_inputs(case, seed, "cpu", kind)
    before = tuple(x.clone() if isinstance(x, torch.Tensor) else x for x in inputs)
    t0 = time.perf_counter()
    try:
        verdict = verify(op, before, forward(*inputs))
        ok, detail = verdict.ok, verdict.detail
        if any(isinstance(a, torch.Tensor) and not a.equal(b) for a, b in zip(inputs, before)):
            ok, detail = False, "forward modified an input"
    except Exception:
        ok, detail = False, traceback.format_exc(limit=4)
    return Run(case, kind, seed, ok, detail, round(time.perf_counter() - t0, 3))


def check_forward(
    op: Operator,
    forward: Callable[..., object],
    *,
    seeds: int = 3,
    kinds: Sequence[str] | None = None,
    cases: Sequence[Case] | None = None,
) -> Iterator[Run]:
    """Every (small case, input kind, seed), in that order, one Run each as it finishes: a caller that stops
    reading runs nothing further. kinds: default the operator's input kinds; cases: default its small cases."""
    for case in op.small_cases if cases is None else cases:
        for kind in op.input_kinds if kinds is None else kinds:
            for seed in range(seeds):
                yield check_call(op, forward, case, kind, seed)


def check_operator(op: Operator, seeds: int) -> dict:
    """The frozen initial kernel of `op`, every run reported."""
    from irscope.capture.loader import load_module

    forward = load_module(op.kernel_path, f"initial_{op.name}").forward
    runs = [
        {"case": r.case.label(), "kind": r.kind, "seed": r.seed, "ok": r.ok, "detail": r.detail, "seconds": r.seconds}
        for r in check_forward(op, forward, seeds=seeds)
    ]
    return {"op": op.name, "ok": all(r["ok"] for r in runs) and bool(runs), "runs": runs}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ops", nargs="*")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    ops = all_operators()
    names = a.ops or list(ops)
    unknown = [n for n in names if n not in ops]
    if unknown:
        print(f"unknown operator(s): {', '.join(unknown)}; known: {', '.join(ops)}", file=sys.stderr)
        return 2
    report = [check_operator(ops[n], a.seeds) for n in names]
    for r in report:
        bad = [x for x in r["runs"] if not x["ok"]]
        print(
            f"{'ok  ' if r['ok'] else 'FAIL'} {r['op']:<28} {len(r['runs'])} runs"
            + (
                f"  first failure: {bad[0]['case']} {bad[0]['kind']} seed {bad[0]['seed']}: {bad[0]['detail']}"
                if bad
                else ""
            )
        )
    if a.json:
        a.json.write_text(json.dumps(report, indent=1))
    return 0 if all(r["ok"] for r in report) else 1


if __name__ == "__main__":
    sys.exit(main())
