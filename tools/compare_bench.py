"""The float comparison's two passes on a GPU: suite.compare's torch passes against the fused Triton kernels of
suite.compare_kernels, on the same tensors, in one run.

    python -m tools.compare_bench [--runs 5] [--sizes 16777216,268435456]

Per size (fp32 output against an fp32 oracle that differs in every element by rounding): the median milliseconds
of each way over --runs (both passes, synchronized), and their ratio.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from suite import compare, compare_kernels


def _ms(fn, o: torch.Tensor, r: torch.Tensor, atol: float, rtol: float) -> float:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn[0](o, r)
    fn[1](o, r, atol, rtol)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sizes", default="16777216,268435456")
    args = ap.parse_args()
    ways = {
        "torch": (compare._finite_stats, compare._tolerance_stats),
        "fused": (compare_kernels.finite_stats, compare_kernels.tolerance_stats),
    }
    for n in (int(s) for s in args.sizes.split(",")):
        r = torch.randn(n, device="cuda")
        o = (r.double() * (1 + 1e-7)).float()
        seen: dict[str, list[float]] = {name: [] for name in ways}
        for _ in range(args.runs + 1):  # the first run of each compiles and warms up
            for name, fn in ways.items():
                seen[name].append(_ms(fn, o, r, 1e-5, 1e-4))
        med = {name: statistics.median(v[1:]) for name, v in seen.items()}
        print(
            f"n={n:>11d}  torch {med['torch']:8.2f} ms  fused {med['fused']:7.2f} ms  "
            f"ratio {med['torch'] / med['fused']:5.1f}x",
            flush=True,
        )
        del r, o
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
