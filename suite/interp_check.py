"""Run every initial kernel under Triton's interpreter on its small cases (CPU, no GPU).

    python -m suite.interp_check [OP ...] [--seeds 3] [--json FILE]

TRITON_INTERPRET must be set before triton.jit decorates the kernels, so this sets it before importing them.
"""

from __future__ import annotations

import os

os.environ["TRITON_INTERPRET"] = "1"

import argparse
import json
import sys
import time
import traceback
from pathlib import Path

from irscope.capture.loader import load_module
from suite.compare import verify
from suite.operator import Operator, all_operators


def check_operator(op: Operator, seeds: int) -> dict:
    results = []
    kernel = load_module(op.kernel_path, f"initial_{op.name}")
    for case in op.small_cases:
        for kind in op.input_kinds:
            for seed in range(seeds):
                inputs = op.make_inputs(case, seed, "cpu", kind)
                before = [x.clone() if hasattr(x, "clone") else x for x in inputs]
                t0 = time.perf_counter()
                try:
                    out = kernel.forward(*inputs)
                    verdict = verify(op, inputs, out)
                    ok, detail = verdict.ok, verdict.detail
                    for a, b in zip(inputs, before):
                        if hasattr(a, "equal") and not a.equal(b):
                            ok, detail = False, "an input was modified"
                except Exception:
                    ok, detail = False, traceback.format_exc(limit=4)
                results.append(
                    {
                        "case": case.label(),
                        "kind": kind,
                        "seed": seed,
                        "ok": ok,
                        "detail": detail,
                        "seconds": round(time.perf_counter() - t0, 3),
                    }
                )
    return {"op": op.name, "ok": all(r["ok"] for r in results) and bool(results), "runs": results}


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
