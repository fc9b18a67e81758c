"""Ascend capture cost: per-pass capture over a plain triton-ascend compile, both through the worker.

    python tools/ascend_capture.py [--runs 5] [--json out.json]

Per bundled example, medians of --runs captures for the `ascend` target (each a fresh worker process, no
cache): `replay=False` records the stage outputs only (what a plain compile computes); `replay=True` also
replays the TTIR passes one pass manager each and reruns triton-adapter-opt with IR printing. `compile` is
the time inside the worker from the JIT call to the end of the last stage; `wall` adds the worker's start
(importing triton-ascend) and the transfer of the IR.
"""

from __future__ import annotations

import argparse
import json
import statistics

from irscope.backends.ascend.capture import capture_ascend
from irscope.examples import EXAMPLES

KERNELS = ["add", "softmax", "top2_argmax", "top2_value", "matmul", "attention"]


def measure(name: str, runs: int) -> dict:
    ex = EXAMPLES[name]
    row: dict = {"kernel": name}
    for label, replay in (("plain", False), ("capture", True)):
        trajs = [capture_ascend(ex.kernel, dict(ex.args), dict(ex.options), replay=replay) for _ in range(runs)]
        row[f"{label}_compile_ms"] = statistics.median(t.times["compile_s"] for t in trajs) * 1e3
        row[f"{label}_wall_ms"] = statistics.median(t.times["capture_s"] for t in trajs) * 1e3
        row[f"{label}_snapshots"] = len(trajs[0].snapshots)
    row["ir_kb"] = sum(len(s.text) for s in trajs[0].snapshots) / 1e3
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--json")
    a = p.parse_args()
    rows = [measure(k, a.runs) for k in KERNELS]
    print(
        f"{'kernel':<12} {'plain ms':>9} {'capture ms':>11} {'ratio':>6} {'wall plain':>11} {'wall capture':>13} "
        f"{'ratio':>6} {'snapshots':>9} {'IR kB':>6}"
    )
    for r in rows:
        print(
            f"{r['kernel']:<12} {r['plain_compile_ms']:>9.0f} {r['capture_compile_ms']:>11.0f} "
            f"{r['capture_compile_ms'] / r['plain_compile_ms']:>6.2f} {r['plain_wall_ms']:>11.0f} "
            f"{r['capture_wall_ms']:>13.0f} {r['capture_wall_ms'] / r['plain_wall_ms']:>6.2f} "
            f"{r['capture_snapshots']:>9} {r['ir_kb']:>6.0f}"
        )
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"runs": a.runs, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
