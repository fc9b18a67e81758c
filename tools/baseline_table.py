"""Merge `ladder bench` JSON files into one Markdown table: per operator and case, the initial Triton kernel's
time, eager and torch.compile times, the initial kernel's fraction of speed of light, and speedups.

    python tools/baseline_table.py docs/results/baseline-h200/part1.json part2.json > table.md
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from suite.stats import geomean


def fmt(x: float | None, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}g}"


def main(paths: list[str]) -> None:
    docs = [json.loads(Path(p).read_text()) for p in paths]
    env = docs[0]["environment"]
    print(
        f"{env['gpu']}, driver {env['driver']}, torch {env['torch']}, Triton {env['triton']}, Python "
        f"{env['python']}; ceilings measured in each run: copy {env['ceilings']['copy_gbps']:.0f} GB/s, bf16 GEMM "
        f"{env['ceilings']['bf16_tflops']:.0f} TFLOP/s. Times in ms (median of 3 interleaved do_bench rounds); "
        f"SoL = fraction of speed of light of the initial kernel; × = eager time / initial-kernel time.\n"
    )
    print(
        "| # | operator | case | correct | initial ms | eager ms | compile ms | initial SoL | × vs eager "
        "| × vs compile |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    per_op: dict[str, float] = {}
    for doc in docs:
        for op in doc["operators"]:
            speedups = []
            for c in op["cases"]:
                m = c.get("metrics") or {}
                impl = m.get("impl", {})
                cand, eager, comp = (impl.get(k, {}).get("ms") for k in ("candidate", "eager", "compile"))
                sol = impl.get("candidate", {}).get("frac_sol")
                sp = m.get("speedup", {})
                if sp.get("eager"):
                    speedups.append(sp["eager"])
                print(
                    f"| {op['number']} | {op['op']} | {c['label']} | {'yes' if c.get('correct') else 'NO'} | "
                    f"{fmt(cand)} | {fmt(eager)} | {fmt(comp)} | {fmt(sol and 100 * sol, 2)}% | "
                    f"{fmt(sp.get('eager'))} | {fmt(sp.get('compile'))} |"
                )
            mean = geomean(speedups)
            if mean is not None:
                per_op[op["op"]] = mean
    values = list(per_op.values())
    no_moe = [v for k, v in per_op.items() if not k.startswith("moe_")]
    print(
        f"\nInitial kernels vs eager over {len(values)} operators (geo-mean of each operator's timed cases): "
        f"geo-mean {geomean(values):.2f}x, median {sorted(values)[len(values) // 2]:.2f}x, "
        f"without the two MoE operators {geomean(no_moe):.2f}x."
    )


if __name__ == "__main__":
    main(sys.argv[1:])
