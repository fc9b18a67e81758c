"""Device-side timing of several implementations of one case, interleaved, on identical inputs
(docs/suite-protocol.md#timing).

1. Warm-up outside the measurement: each implementation is called twice and the device synchronized, so JIT
   compilation, autotuning and torch.compile's compilation never land in a timed call.
2. `rounds` interleaved rounds (A B C, B C A, C A B, …): each round times every implementation with
   `triton.testing.do_bench(fn, warmup_ms, rep_ms, return_mode="all")`; the round's figure is the median of
   those per-call times (exactly what return_mode="median" returns; "all" also gives the quartiles).
   do_bench clears L2 before every call by writing a 256 MB buffer (the H200's L2 is 50–60 MB).
3. The reported time is the median of the round medians.
4. Cases where any implementation's median is below `cudagraph_below_ms` (launch overhead and ±2 µs event
   jitter dominate there) are timed again with `do_bench_cudagraph` (n calls captured in one graph, replayed
   10 times, median; the L2 is not flushed between graph calls), for every implementation of the case, so the
   ratio compares like with like; do_bench's figures stay in the record. An implementation that cannot be
   captured keeps its do_bench figure, with a note (the case is then flagged as mixing timers).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import torch
from triton.testing import do_bench, do_bench_cudagraph  # bound at import: before any candidate code runs


@dataclass
class Timing:
    ms: float | None = None  # the figure used: median of round medians (CUDA graph figure if timer says so)
    timer: str = "do_bench"  # do_bench | cudagraph
    rounds_ms: list[float] = field(default_factory=list)  # do_bench medians per round
    q25_ms: float | None = None  # quartiles of all do_bench calls, pooled over the rounds
    q75_ms: float | None = None
    calls: int = 0
    busy_ms: float = 0.0  # every do_bench call's time, summed: the parent bounds it by the wall clock it saw
    cudagraph_ms: float | None = None
    error: str | None = None  # no figure at all
    note: str | None = None

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class TimingSettings:
    warmup_ms: float = 10.0
    rep_ms: float = 40.0
    rounds: int = 3
    cudagraph_below_ms: float = 0.020
    cudagraph_rep_ms: float = 20.0


def _quantile(sorted_values: list[float], q: float) -> float:
    pos = q * (len(sorted_values) - 1)
    lo, hi = int(pos), min(int(pos) + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def time_interleaved(
    fns: dict[str, Callable[[], object]],
    settings: TimingSettings,
    on_block: Callable[[str, str], None] = lambda name, edge: None,
) -> dict[str, Timing]:
    """on_block(name, "start" | "end") around each do_bench call: the parent stamps these with its own clock."""
    results = {name: Timing() for name in fns}
    live = []
    for name, fn in fns.items():
        try:
            fn()
            fn()
            torch.cuda.synchronize()
            live.append(name)
        except Exception as e:
            results[name].error = f"warm-up failed: {type(e).__name__}: {str(e)[:300]}"
    pooled: dict[str, list[float]] = {name: [] for name in live}
    for r in range(settings.rounds):
        order = live[r % len(live) :] + live[: r % len(live)] if live else []
        for name in order:
            if results[name].error:
                continue
            on_block(name, "start")
            try:
                times = do_bench(fns[name], warmup=settings.warmup_ms, rep=settings.rep_ms, return_mode="all")
            except Exception as e:
                results[name].error = f"do_bench failed: {type(e).__name__}: {str(e)[:300]}"
                continue
            finally:
                on_block(name, "end")
            results[name].rounds_ms.append(statistics.median(times))
            pooled[name] += times
    for name in live:
        t = results[name]
        if t.error or not t.rounds_ms:
            continue
        values = sorted(pooled[name])
        t.ms, t.calls, t.busy_ms = statistics.median(t.rounds_ms), len(values), sum(values)
        t.q25_ms, t.q75_ms = _quantile(values, 0.25), _quantile(values, 0.75)
    timed_ms = [ms for n in live if (ms := results[n].ms) is not None]
    if timed_ms and min(timed_ms) < settings.cudagraph_below_ms:
        for name in live:
            t = results[name]
            if t.ms is None:
                continue
            try:
                graph_ms = [
                    do_bench_cudagraph(fns[name], rep=settings.cudagraph_rep_ms, return_mode="median")
                    for _ in range(settings.rounds)
                ]
                t.cudagraph_ms = statistics.median(graph_ms)
                t.ms, t.timer = t.cudagraph_ms, "cudagraph"
            except Exception as e:
                t.note = f"CUDA graph capture failed, do_bench figure kept: {type(e).__name__}: {str(e)[:200]}"
    return results
