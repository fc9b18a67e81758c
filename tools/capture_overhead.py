"""Capture overhead: per-pass capture time over plain compile time, beside MLIR_ENABLE_DUMP=1 to a file.

    python tools/capture_overhead.py [--runs 7] [--json out.json]

Per kernel, medians of --runs compiles of the same specialization for cuda:90 (each compile forced, no
cache hit): plain `triton.compile`; `irscope.capture` of IR only (no SASS: what MLIR_ENABLE_DUMP gives);
`irscope.capture` with SASS; and a plain compile with MLIR_ENABLE_DUMP=1 and MLIR_DUMP_PATH set, timed in a
subprocess (the dump path latches per process). The dump prints IR *before* each pass only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

import triton
from triton import knobs

import irscope
from irscope.capture import build_request
from irscope.examples import EXAMPLES
from suite.stats import geomean

KERNELS = ["add", "softmax", "top2_argmax", "matmul", "attention"]

_DUMP_CHILD = """
import json, os, sys, time
import triton
from triton import knobs
from irscope.capture import build_request
from irscope.examples import EXAMPLES
knobs.compilation.always_compile = True
ex = EXAMPLES[sys.argv[1]]
req = build_request(ex.kernel, ex.args, dict(ex.options), "cuda:90")
times = []
for _ in range(int(sys.argv[2])):
    t0 = time.perf_counter()
    triton.compile(req.source, target=req.target.to_gpu_target(), options=req.options)
    times.append(time.perf_counter() - t0)
print(json.dumps(times))
"""


def time_plain(name: str) -> float:
    ex = EXAMPLES[name]
    req = build_request(ex.kernel, ex.args, dict(ex.options), "cuda:90")
    with knobs.compilation.scope():
        knobs.compilation.always_compile = True
        t0 = time.perf_counter()
        triton.compile(req.source, target=req.target.to_gpu_target(), options=req.options)
        return time.perf_counter() - t0


def time_capture(name: str, disassemble: bool) -> tuple[float, int, int]:
    ex = EXAMPLES[name]
    t0 = time.perf_counter()
    traj = irscope.capture(ex.kernel, target="cuda:90", disassemble=disassemble, kernel_kwargs=ex.args, **ex.options)
    elapsed = time.perf_counter() - t0
    return elapsed, len(traj.snapshots), sum(len(s.text) for s in traj.snapshots)


def time_dump(name: str, runs: int) -> tuple[list[float], int]:
    with tempfile.TemporaryDirectory() as d:
        dump = os.path.join(d, "dump.mlir")
        env = dict(os.environ, MLIR_ENABLE_DUMP="1", MLIR_DUMP_PATH=dump, TRITON_CACHE_DIR=d)
        proc = subprocess.run(
            [sys.executable, "-c", _DUMP_CHILD, name, str(runs)], env=env, capture_output=True, text=True, check=True
        )
        size = os.path.getsize(dump) // runs
    return json.loads(proc.stdout.strip().splitlines()[-1]), size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--json")
    a = ap.parse_args()
    rows: list[dict[str, Any]] = []  # one JSON row per kernel: its name, times, ratios and sizes
    for name in KERNELS:
        time_plain(name)  # warm: imports, first-compile initialization
        time_capture(name, disassemble=False)
        plain, ir_only, full = [], [], []
        snaps = nbytes = 0
        for _ in range(a.runs):  # interleaved, so load on the machine hits all three alike
            plain.append(time_plain(name))
            t, snaps, nbytes = time_capture(name, disassemble=False)
            ir_only.append(t)
            full.append(time_capture(name, disassemble=True)[0])
        dump, dump_bytes = time_dump(name, a.runs + 1)
        rows.append(
            {
                "kernel": name,
                "plain_ms": statistics.median(plain) * 1e3,
                "capture_ir_ms": statistics.median(ir_only) * 1e3,
                "capture_sass_ms": statistics.median(full) * 1e3,
                "dump_ms": statistics.median(dump[1:]) * 1e3,
                "snapshots": snaps,
                "ir_mb": nbytes / 1e6,
                "dump_mb": dump_bytes / 1e6,
            }
        )
    for r in rows:
        r["capture_ir_x"] = r["capture_ir_ms"] / r["plain_ms"]
        r["capture_sass_x"] = r["capture_sass_ms"] / r["plain_ms"]
        r["dump_x"] = r["dump_ms"] / r["plain_ms"]
    head = (
        f"{'kernel':<12}{'plain ms':>10}{'capture ms':>12}{'×':>7}{'+SASS ms':>10}{'×':>7}{'DUMP ms':>10}{'×':>7}"
        f"{'snaps':>7}{'IR MB':>8}{'dump MB':>9}"
    )
    print(f"triton {triton.__version__}, cuda:90, median of {a.runs} runs\n{head}")
    for r in rows:
        print(
            f"{r['kernel']:<12}{r['plain_ms']:>10.1f}{r['capture_ir_ms']:>12.1f}{r['capture_ir_x']:>7.2f}"
            f"{r['capture_sass_ms']:>10.1f}{r['capture_sass_x']:>7.2f}{r['dump_ms']:>10.1f}{r['dump_x']:>7.2f}"
            f"{r['snapshots']:>7}{r['ir_mb']:>8.2f}{r['dump_mb']:>9.2f}"
        )
    g = {k: geomean([r[k] for r in rows]) for k in ("capture_ir_x", "capture_sass_x", "dump_x")}
    print(
        f"{'geo-mean':<12}{'':>10}{'':>12}{g['capture_ir_x']:>7.2f}{'':>10}{g['capture_sass_x']:>7.2f}{'':>10}"
        f"{g['dump_x']:>7.2f}"
    )
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"runs": a.runs, "rows": rows, "geomean": g}, f, indent=1)


if __name__ == "__main__":
    main()
