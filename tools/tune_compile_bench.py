"""What the tuning search's compiles cost the machine: configs compiled one child each (as before the configs were
dealt to a few children) against one search over all of them (ladder.tune_compile.compile_configs), run in turn.

    python -m tools.tune_compile_bench [--runs 3] [--op matmul_transposed_b] [--kernel matmul_kernel]

Per run and way: wall seconds and the CPU seconds of the children (user + system), then the medians and their
ratios. The configs are eight GEMM tiles of the offline search's kind, compiled for cuda:90.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from ladder.tune_compile import compile_configs
from suite.operator import get_operator

TILES = [(32, 32, 4, 1), (64, 64, 4, 3), (64, 32, 4, 2), (32, 64, 4, 2), (128, 64, 4, 3), (64, 128, 8, 3)]
TILES += [(128, 128, 8, 3), (64, 64, 8, 4)]
CONFIGS = [
    {"kwargs": {"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": 32}, "num_warps": w, "num_stages": s} for m, n, w, s in TILES
]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _measure(search: Callable[[Path], int]) -> tuple[float, float, int]:
    wall, cpu = time.monotonic(), _children_cpu()
    with tempfile.TemporaryDirectory(prefix="tune-bench-") as tmp:
        compiled = search(Path(tmp))
    return time.monotonic() - wall, _children_cpu() - cpu, compiled


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--op", default="matmul_transposed_b")
    ap.add_argument("--kernel", default="matmul_kernel")
    args = ap.parse_args()
    op = get_operator(args.op)
    source = op.initial_source()

    def one_child_each(tmp: Path) -> int:
        return sum(
            r.ok for i, c in enumerate(CONFIGS) for r in compile_configs(source, args.kernel, [c], op, tmp / str(i))
        )

    def one_search(tmp: Path) -> int:
        return sum(r.ok for r in compile_configs(source, args.kernel, CONFIGS, op, tmp))

    ways = {"one child per config": one_child_each, "one search": one_search}
    seen: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
    for run in range(args.runs):
        for name, search in ways.items():
            wall, cpu, ok = _measure(search)
            seen[name].append((wall, cpu))
            print(f"run {run + 1} {name}: {ok}/{len(CONFIGS)} compiled, wall {wall:.1f} s, children's CPU {cpu:.1f} s")
    medians = {name: tuple(statistics.median(v[i] for v in runs) for i in (0, 1)) for name, runs in seen.items()}
    (old_wall, old_cpu), (new_wall, new_cpu) = medians["one child per config"], medians["one search"]
    print(f"medians: one child per config: wall {old_wall:.1f} s, CPU {old_cpu:.1f} s")
    print(f"         one search:           wall {new_wall:.1f} s, CPU {new_cpu:.1f} s")
    print(f"ratios (one child per config / one search): wall {old_wall / new_wall:.1f}x, CPU {old_cpu / new_cpu:.1f}x")


if __name__ == "__main__":
    main()
