"""A candidate's autotuning in the runner: once per case, with the GPU held alone, on a bounded benchmark budget.

A kernel under `@triton.autotune` benchmarks every config the first time it is called with a new key. Left alone,
that first call was the case's first validation run: Triton's `do_bench` per config (25 ms of warm-up and 100 ms
of repetitions, an L2 flush before each call) for 8–20 configs, with the GPU held shared. The choice was timed
against the other jobs' kernels, and it was the GPU's largest consumer: in session 7's suite run, 461 of the 575
runner-seconds of validation were spent in the cases that autotuned (docs/results/engine-h200/README.md).

So the runner now does it apart:

* the compile-only call counts the autotuners that would benchmark (more than one config;
  ladder.harness.compile_only), and the runner says how many in its answer;
* where there are any, the parent sends `tune`, held alone like a timing: the forward once on an input set of the
  case (random kind, a seed of its own), every autotuner choosing then, on a GPU nobody else uses. The validation
  and timing calls that follow find the choice made (the key is the same: the case's shapes and dtypes);
* an autotuner given no benchmark of its own uses `bench` (installed as Triton's benchmarker before any candidate
  code exists in the runner): event-timed calls, an L2 flush before each, until `BUDGET_MS` of kernel time (at
  least `MIN_CALLS`), and the quantiles Triton asks for. That is Triton's statistic on a tenth of its budget, on an
  idle GPU. A candidate that passes its own `do_bench` keeps it, and its cost, within the command's bounds.

A runner's claims here can only cost the candidate: one that says it has no autotuner tunes in its validation, as
before, on a GPU shared with others.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence

BUDGET_MS = 10.0  # kernel time per config (Triton's default: 25 ms of warm-up and 100 ms of repetitions)
MIN_CALLS = 3
MAX_CALLS = 500


def install() -> None:
    """Triton's benchmarker, for every autotuner that names none, is `bench` in this process from now on."""
    from triton.runtime import driver

    driver.active.get_benchmarker = lambda: bench


def bench(kernel_call: Callable[[], object], quantiles: Sequence[float] | None = None, **_: object) -> object:
    """`kernel_call`'s time in ms as Triton's autotuner asks for it (the median, or the `quantiles`): one call to
    warm, then calls each after an L2 flush and between CUDA events until BUDGET_MS of their time is measured."""
    import torch
    from triton.runtime import driver

    from ladder.harness.timing import quantile

    kernel_call()
    torch.cuda.synchronize()
    flush = driver.active.get_empty_cache_for_benchmark()
    times = _timed(kernel_call, flush, MIN_CALLS)
    more = min(MAX_CALLS, int(BUDGET_MS / max(statistics.median(times), 1e-4))) - MIN_CALLS
    values = sorted(times + (_timed(kernel_call, flush, more) if more > 0 else []))
    if quantiles is None:
        return statistics.median(values)
    return [quantile(values, q) for q in quantiles]


def _timed(kernel_call: Callable[[], object], flush: object, n: int) -> list[float]:
    import torch
    from triton.runtime import driver

    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for start, end in zip(starts, ends):
        driver.active.clear_cache(flush)
        start.record()
        kernel_call()
        end.record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]
