"""compiler_index performance: full build, no-change rebuild and query latency on Triton's sources.

    python tools/index_bench.py [--source third_party/triton] [--runs 3] [--jobs 2] [--json out/bench/index.json]

Targets (2 cores): index Triton's C++ and .td (lib, include, third_party/nvidia, third_party/amd without the
vendored HIP/HSA headers) in <= 15 s; rebuild with nothing changed in <= 1 s; query p95 <= 50 ms.

* build: `--runs` full builds into a fresh database, median; once for exactly the target directories and once for
  the default `compiler-index build --source` set (adds python/src and the installed Triton's pipelines).
* rebuild: `--runs` builds of the default set over its own database with nothing changed, median.
* queries: each query of QUERIES `--repeat` times through the public API, each call opening the database (as a
  CLI call or a ladder step does); p50/p95 over all calls and per query kind.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from compiler_index import queries as q
from compiler_index.build import build, resolve_roots
from compiler_index.sources import SOURCE, Root, is_triton_checkout, triton_excludes

TARGET_DIRS = ("lib", "include", "third_party/nvidia", "third_party/amd")
TARGETS = {"build_s": 15.0, "rebuild_s": 1.0, "query_p95_ms": 50.0}

QUERIES: list[tuple[str, Callable[..., object], tuple]] = [
    ("pass", q.pass_info, ("tritongpu-remove-layout-conversions",)),
    ("pass", q.pass_info, ("passes.ttgpuir.add_coalesce",)),
    ("pass", q.pass_info, ("tritongpu-accelerate-matmul",)),
    ("pass", q.pass_info, ("convert-triton-gpu-to-llvm",)),
    ("creators", q.creators, ("ttg.convert_layout",)),
    ("creators", q.creators, ("ttg.local_alloc",)),
    ("creators", q.creators, ("tt.load",)),
    ("creators", q.creators, ("llvm.inline_asm",)),
    ("erasers", q.erasers, ("ttg.convert_layout",)),
    ("erasers", q.erasers, ("tt.dot",)),
    ("conditions", q.conditions, ("BlockedToMMA",)),
    ("conditions", q.conditions, ("LoadOpConversion",)),
    ("conditions", q.conditions, ("isExpensiveToRemat",)),
    ("remarks", q.remarks, ("vectorization fails",)),
    ("remarks", q.remarks, ("remark: Warning: vectorization fails vec = 1 origin vec = 4 numElems = 4 mask is 0",)),
    ("callers", q.callers, ("convertDistributedOpEncoding",)),
    ("callees", q.callees, ("CoalescePass::runOnOperation",)),
    ("search", q.search, ("rematerialization cost",)),
    ("search", q.search, ("shuffleXor",)),
]


def percentile(values: list[float], pct: float) -> float:
    s = sorted(values)
    k = (len(s) - 1) * pct / 100
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def time_builds(roots: list[Root], runs: int, jobs: int, workdir: Path, name: str) -> tuple[list[float], dict]:
    times, last = [], {}
    for i in range(runs):
        db = workdir / f"{name}-{i}.db"
        t0 = time.perf_counter()
        report = build(db, roots, jobs=jobs)
        times.append(time.perf_counter() - t0)
        last = report.to_json()
    return times, last


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", default="third_party/triton")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", default="out/bench/index_bench.json")
    args = ap.parse_args()
    src = Path(args.source).resolve()
    if not is_triton_checkout(src):
        print(f"{src} is not a Triton checkout; see third_party/README.md", file=sys.stderr)
        return 2

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        target_roots = [Root(SOURCE, src, src, TARGET_DIRS, triton_excludes())]
        target_times, target_report = time_builds(target_roots, args.runs, args.jobs, work, "target")
        default_roots = resolve_roots([src], None)
        default_times, default_report = time_builds(default_roots, args.runs, args.jobs, work, "default")
        db = work / f"default-{args.runs - 1}.db"
        rebuild_times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            report = build(db, default_roots, jobs=args.jobs)
            rebuild_times.append(time.perf_counter() - t0)
            assert report.parsed == 0, "the no-change rebuild parsed files"
        per_kind: dict[str, list[float]] = {}
        for kind, fn, fn_args in QUERIES:
            fn(db, *fn_args)  # warm the page cache once
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                fn(db, *fn_args)
                per_kind.setdefault(kind, []).append((time.perf_counter() - t0) * 1000)
    all_ms = [v for vs in per_kind.values() for v in vs]

    result = {
        "command": " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
        "cpus": os.cpu_count(),
        "jobs": args.jobs,
        "source": str(src),
        "target_build": {
            "dirs": list(TARGET_DIRS),
            "runs_s": target_times,
            "median_s": statistics.median(target_times),
            "files": target_report["files"],
            "parse_error_files": target_report["parse_error_files"],
        },
        "default_build": {
            "runs_s": default_times,
            "median_s": statistics.median(default_times),
            "files": default_report["files"],
            "seconds": default_report["seconds"],
        },
        "rebuild": {"runs_s": rebuild_times, "median_s": statistics.median(rebuild_times)},
        "queries": {
            k: {"n": len(v), "p50_ms": percentile(v, 50), "p95_ms": percentile(v, 95), "max_ms": max(v)}
            for k, v in per_kind.items()
        },
        "query_all": {"n": len(all_ms), "p50_ms": percentile(all_ms, 50), "p95_ms": percentile(all_ms, 95)},
        "targets": TARGETS,
    }
    rows = [
        (
            "build: lib include nvidia amd (C++ + .td)",
            f"{result['target_build']['median_s']:.2f} s",
            f"{result['target_build']['files']} files",
            TARGETS["build_s"],
            result["target_build"]["median_s"],
        ),
        (
            "build: default set (+python/src, pipelines)",
            f"{result['default_build']['median_s']:.2f} s",
            f"{result['default_build']['files']} files",
            TARGETS["build_s"],
            result["default_build"]["median_s"],
        ),
        (
            "rebuild, nothing changed",
            f"{result['rebuild']['median_s']:.3f} s",
            "",
            TARGETS["rebuild_s"],
            result["rebuild"]["median_s"],
        ),
        (
            "query p95 (all kinds)",
            f"{result['query_all']['p95_ms']:.1f} ms",
            f"p50 {result['query_all']['p50_ms']:.1f} ms, n={len(all_ms)}",
            TARGETS["query_p95_ms"],
            result["query_all"]["p95_ms"],
        ),
    ]
    print(f"compiler_index benchmark: {src}, {args.jobs} jobs, {os.cpu_count()} cpus, medians of {args.runs} runs")
    print(f"{'measure':<46} {'value':>10}  {'target':>8}  {'ratio':>6}  note")
    for name, value, note, target, measured in rows:
        print(f"{name:<46} {value:>10}  {target:>8g}  {measured / target:>6.2f}  {note}")
    print(f"{'query kind':<14} {'n':>4} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for kind, s in result["queries"].items():
        print(f"{kind:<14} {s['n']:>4} {s['p50_ms']:>8.1f} {s['p95_ms']:>8.1f} {s['max_ms']:>8.1f}")
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")
    ok = (
        result["target_build"]["median_s"] <= TARGETS["build_s"]
        and result["rebuild"]["median_s"] <= TARGETS["rebuild_s"]
        and result["query_all"]["p95_ms"] <= TARGETS["query_p95_ms"]
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
