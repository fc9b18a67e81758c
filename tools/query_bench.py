"""compiler_index query latency, explain included, on an index that is already built.

    python tools/query_bench.py [--db out/compiler-index.db] [--repeat 10] [--json out/bench/query_bench.json]

The queries: index_bench's set (pass, creators, erasers, conditions, remarks, callers, callees, search) and
what a trajectory asks of the index: `explain` on every pass that changed the IR of the bundled matmul, softmax,
top2_argmax and attention captures (cuda:90, captured once at the start), `trace` (the diagnostics of every pass
that printed some, traced to the code that emits them). Each call opens the database, and each explain reads its
trajectory from the directory (schema check included), as a CLI call or a ladder step does. Prints p50/p95/max
per query kind, overall, and for `explain convert-triton-gpu-to-llvm` of the matmul (the largest edge: 75 ops
change); exit status 1 when the overall p95 is above 50 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from compiler_index.explain import explain, trace_diagnostics
from irscope import capture, load
from irscope.examples import EXAMPLES
from irscope.targets import DEFAULT_TARGET
from tools.index_bench import QUERIES, percentile

TRAJECTORIES = ("matmul", "softmax", "top2_argmax", "attention")
TARGET_P95_MS = 50.0
MARKED = ("explain", "matmul", "convert-triton-gpu-to-llvm")


def trajectory_queries(root: Path) -> list[tuple[str, str, Callable[[str], object]]]:
    """(kind, label, call taking the db) for explain and trace over freshly captured example trajectories."""
    out: list[tuple[str, str, Callable[[str], object]]] = []
    for name in TRAJECTORIES:
        ex = EXAMPLES[name]
        d = root / name
        capture(ex.kernel, target=DEFAULT_TARGET, out_dir=d, disassemble=False, kernel_kwargs=ex.args, **ex.options)
        traj = load(d)
        for snap in traj.changed_passes():
            out.append(("explain", f"{name} {snap.pass_arg}", _bound(explain, d, snap.index)))
            if snap.diagnostics:
                out.append(("trace", f"{name} {snap.pass_arg}", _bound(trace_diagnostics, snap.diagnostics)))
    return out


def _bound(fn: Callable[..., object], *args: object) -> Callable[[str], object]:
    """fn(db, *args) as a call taking the database only."""

    def call(db: str) -> object:
        return fn(db, *args)

    return call


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", default="out/compiler-index.db")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--json", default="out/bench/query_bench.json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        calls: list[tuple[str, str, Callable[[str], object]]] = [
            (kind, str(fn_args[0]), _bound(fn, *fn_args)) for kind, fn, fn_args in QUERIES
        ]
        calls += trajectory_queries(Path(tmp))
        per_kind: dict[str, list[float]] = {}
        marked: list[float] = []
        for kind, label, call in calls:
            call(args.db)  # warm: page cache, imports, the schema validator
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                call(args.db)
                ms = (time.perf_counter() - t0) * 1000
                per_kind.setdefault(kind, []).append(ms)
                if (kind, *label.split(" ", 1)) == MARKED:
                    marked.append(ms)
    all_ms = [v for vs in per_kind.values() for v in vs]
    rows = {
        k: {"n": len(v), "p50_ms": percentile(v, 50), "p95_ms": percentile(v, 95), "max_ms": max(v)}
        for k, v in per_kind.items()
    }
    rows["all"] = {
        "n": len(all_ms),
        "p50_ms": percentile(all_ms, 50),
        "p95_ms": percentile(all_ms, 95),
        "max_ms": max(all_ms),
    }
    rows[" ".join(MARKED)] = {
        "n": len(marked),
        "p50_ms": percentile(marked, 50),
        "p95_ms": percentile(marked, 95),
        "max_ms": max(marked),
    }
    print(
        f"compiler_index queries: {args.db}, {os.cpu_count()} cpus, {args.repeat} calls per query after one warm-up\n"
    )
    print("| query kind | n | p50 ms | p95 ms | max ms |")
    print("|---|---|---|---|---|")
    for kind, r in rows.items():
        print(f"| {kind} | {r['n']} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} | {r['max_ms']:.1f} |")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps({"command": " ".join(sys.argv), "rows": rows, "target_p95_ms": TARGET_P95_MS}, indent=1) + "\n"
    )
    return 0 if rows["all"]["p95_ms"] <= TARGET_P95_MS else 1


if __name__ == "__main__":
    sys.exit(main())
