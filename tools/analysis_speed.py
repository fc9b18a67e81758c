"""Analysis time of a whole trajectory: load from disk, signatures of every distinct snapshot, the stage-diff
graph, per-line attribution, the report model. Target: ≤ 1 s for a 65-pass trajectory.

    python tools/analysis_speed.py [--runs 5] [--json out.json]

Each run starts from a freshly loaded trajectory (no caches), for the bundled examples captured for cuda:90.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time

import irscope
from irscope.examples import EXAMPLES
from irscope.report import build_model
from irscope.targets import DEFAULT_TARGET


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--json")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as root:
        for name, ex in EXAMPLES.items():
            out = f"{root}/{name}"
            irscope.capture(ex.kernel, target=DEFAULT_TARGET, out_dir=out, kernel_kwargs=ex.args, **ex.options)
            times = []
            for _ in range(a.runs):
                t0 = time.perf_counter()
                traj = irscope.load(out)
                model = build_model(traj)
                model.hot_lines()
                times.append(time.perf_counter() - t0)
            passes = len(list(traj.passes()))
            mb = sum(len(s.text) for s in traj.snapshots) / 1e6
            rows.append(
                {
                    "kernel": name,
                    "passes": passes,
                    "ir_mb": round(mb, 2),
                    "edges": len(model.graph.edges()),
                    "median_s": statistics.median(times),
                    "max_s": max(times),
                }
            )
    print(f"{'kernel':<12}{'passes':>8}{'IR MB':>8}{'edges':>7}{'median s':>10}{'max s':>8}")
    for r in rows:
        print(
            f"{r['kernel']:<12}{r['passes']:>8}{r['ir_mb']:>8}{r['edges']:>7}{r['median_s']:>10.3f}{r['max_s']:>8.3f}"
        )
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"runs": a.runs, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
