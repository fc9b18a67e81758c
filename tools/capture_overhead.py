"""Capture overhead as users pay it: a fresh process per compile, its own cache, output written to disk.

    python tools/capture_overhead.py [--runs 5] [--kernels add,matmul,…] [--json out.json]
    python tools/capture_overhead.py --kernel FILE.py:NAME --args JSON [--options JSON] [--runs 3]

For every kernel (the bundled examples and the benchmark's own kernels in tools/bench_kernels.py, cuda:90; or one
kernel of yours, `--kernel`, bound like the bundled ones: `--args` maps parameters to a value or a pointer type
such as "*fp32", `--options` the constexprs and compile options),
each run starts four fresh Python processes (tools/capture_bench_child.py), each with its own empty
TRITON_CACHE_DIR and TRITON_ALWAYS_COMPILE=1:

* plain   `triton.compile` of the kernel's specialization (Triton only, irscope not imported);
* dump    the same with MLIR_ENABLE_DUMP=1 and MLIR_DUMP_PATH to a file (the anchor: Triton's own per-pass dump);
* ir      `irscope.capture(..., out_dir=DIR, disassemble=False)`;
* sass    `irscope.capture(..., out_dir=DIR)` (with SASS from nvdisasm).

Variants run interleaved (their order rotates per run), so load on the machine hits them alike. Reported per
kernel: medians of whole-process wall time and of the compile call in process, their ratios to plain, the
median peak RSS of the Python process, and the output sizes; then geo-means of the ratios over all kernels
and what SASS adds to the critical path (sass − ir, whole process).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import triton

from irscope.capture import build_request
from irscope.capture.specialize import unwrap_kernel
from irscope.examples import EXAMPLES
from irscope.targets import DEFAULT_TARGET
from suite.stats import geomean
from tools.bench_kernels import BENCH_KERNELS

VARIANTS = ("plain", "dump", "ir", "sass")
CHILD = Path(__file__).resolve().parent / "capture_bench_child.py"
TARGET = DEFAULT_TARGET


def kernels() -> dict[str, tuple[Any, dict, dict]]:
    out = {name: (ex.kernel, dict(ex.args), dict(ex.options)) for name, ex in EXAMPLES.items()}
    out.update({name: (k, dict(a), dict(o)) for name, (k, a, o) in BENCH_KERNELS.items()})
    return out


def _json_object(text: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise argparse.ArgumentTypeError(f"not JSON ({e.msg} at column {e.colno}): {text[:80]}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"a JSON object is needed, e.g. '{{\"n\": 1024}}', not {text[:80]}")
    return value


def _user_kernel(ref: str) -> Any:
    """FILE.py:NAME → the kernel object (the file imported as a module of its own)."""
    from irscope.capture.loader import load_module

    path, _, name = ref.rpartition(":")
    if not path or not name:
        raise SystemExit(f"--kernel {ref}: give FILE.py:NAME")
    return getattr(load_module(Path(path), "user_kernel"), name)


def child_spec(kernel: Any, args: dict, options: dict) -> tuple[str, str, str]:
    """(kernel file, function name, the JSON the child compiles from)."""
    req = build_request(kernel, args, options, TARGET)
    fn = unwrap_kernel(kernel)[0]
    gpu = req.target.to_gpu_target()
    spec = {
        "triton": req.specialization.triton,
        "target": [gpu.backend, gpu.arch, gpu.warp_size],
        "target_name": TARGET,
        "args": args,
        "options": options,
    }
    return fn.fn.__code__.co_filename, fn.fn.__name__, json.dumps(spec)


def _size_mb(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 1e6
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def run_once(variant: str, file: str, name: str, spec: str) -> dict[str, float]:
    work = Path(tempfile.mkdtemp(prefix="irscope-bench-"))
    try:
        env = dict(os.environ, TRITON_CACHE_DIR=str(work / "cache"), TRITON_ALWAYS_COMPILE="1")
        for var in ("MLIR_ENABLE_DUMP", "MLIR_DUMP_PATH"):
            env.pop(var, None)
        out = work / "out"
        if variant == "dump":
            env.update(MLIR_ENABLE_DUMP="1", MLIR_DUMP_PATH=str(work / "dump.mlir"))
            out = work / "dump.mlir"
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, str(CHILD), variant, file, name, spec, str(work / "out")],
            env=env,
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"{variant} {name} failed:\n{proc.stderr[-3000:]}")
        rec = json.loads(proc.stdout.strip().splitlines()[-1])
        return {"process_s": wall, "compile_s": rec["compile_s"], "peak_mb": rec["peak_mb"], "out_mb": _size_mb(out)}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--kernels", help="comma-separated subset (default: all)")
    ap.add_argument("--json")
    ap.add_argument("--kernel", help="FILE.py:NAME, a kernel of yours instead of the bundled ones")
    ap.add_argument("--args", type=_json_object, default={}, help="with --kernel: JSON {parameter: value or *type}")
    ap.add_argument("--options", type=_json_object, default={}, help="with --kernel: JSON constexprs and options")
    a = ap.parse_args()
    table = (
        kernels() if a.kernel is None else {a.kernel.rpartition(":")[2]: (_user_kernel(a.kernel), a.args, a.options)}
    )
    names = a.kernels.split(",") if a.kernels else list(table)
    unknown = [n for n in names if n not in table]
    if unknown:
        raise SystemExit(f"unknown kernel(s) {', '.join(unknown)}; known: {', '.join(table)}")
    specs = {n: child_spec(*table[n]) for n in names}
    for variant in VARIANTS:  # untimed: the first process of each kind pays for cold file caches
        run_once(variant, *specs[names[0]])
    samples: dict[str, dict[str, list[dict[str, float]]]] = {n: {v: [] for v in VARIANTS} for n in names}
    for run in range(a.runs):
        for n in names:
            order = VARIANTS[run % len(VARIANTS) :] + VARIANTS[: run % len(VARIANTS)]
            for v in order:
                samples[n][v].append(run_once(v, *specs[n]))
        print(f"run {run + 1}/{a.runs} done", file=sys.stderr)

    rows: list[dict[str, Any]] = []
    for n in names:
        med = {v: {k: statistics.median(s[k] for s in samples[n][v]) for k in samples[n][v][0]} for v in VARIANTS}
        row: dict[str, Any] = {"kernel": n, **{f"{v}_{k}": x for v in VARIANTS for k, x in med[v].items()}}
        for v in ("dump", "ir", "sass"):
            row[f"{v}_process_x"] = med[v]["process_s"] / med["plain"]["process_s"]
            row[f"{v}_compile_x"] = med[v]["compile_s"] / med["plain"]["compile_s"]
        row["sass_extra_s"] = med["sass"]["process_s"] - med["ir"]["process_s"]
        rows.append(row)

    print(f"triton {triton.__version__}, {TARGET}, medians of {a.runs} fresh processes per variant (× = over plain)\n")
    print(
        "| kernel | plain s | dump × | capture × | +SASS × | in process: plain s | dump × | capture × | +SASS × "
        "| SASS adds s | peak MB plain / capture | dump MB | out MB |"
    )
    print("|" + "---|" * 13)
    for row in rows:
        print(
            f"| {row['kernel']} | {row['plain_process_s']:.2f} | {row['dump_process_x']:.2f} | "
            f"{row['ir_process_x']:.2f} | {row['sass_process_x']:.2f} | {row['plain_compile_s']:.3f} | "
            f"{row['dump_compile_x']:.2f} | {row['ir_compile_x']:.2f} | {row['sass_compile_x']:.2f} | "
            f"{row['sass_extra_s']:.2f} | {row['plain_peak_mb']:.0f} / {row['ir_peak_mb']:.0f} | "
            f"{row['dump_out_mb']:.1f} | {row['ir_out_mb']:.1f} |"
        )
    g = {
        f"{v}_{k}_x": geomean(row[f"{v}_{k}_x"] for row in rows)
        for v in ("dump", "ir", "sass")
        for k in ("process", "compile")
    }
    extra = statistics.median(row["sass_extra_s"] for row in rows)
    print(
        f"| **geo-mean** | | **{g['dump_process_x']:.2f}** | **{g['ir_process_x']:.2f}** | "
        f"**{g['sass_process_x']:.2f}** | | {g['dump_compile_x']:.2f} | {g['ir_compile_x']:.2f} | "
        f"{g['sass_compile_x']:.2f} | {extra:.2f} (median) | | | |"
    )
    if a.json:
        Path(a.json).write_text(json.dumps({"runs": a.runs, "rows": rows, "geomean": g}, indent=1) + "\n")


if __name__ == "__main__":
    main()
