"""Device-side timing of several implementations of one case, interleaved, on rotating input sets
(docs/suite-protocol.md#timing).

1. Warm-up outside the measurement: each implementation is called on every input set and the device synchronized,
   so JIT compilation, autotuning and torch.compile's compilation never land in a timed call; a few more calls
   estimate the per-call time.
2. `rounds` interleaved rounds (A B C, B C A, …); in each, an implementation is called as many times as fit its
   time budget (`rep_ms`, at least `min_calls`). Each call is timed with CUDA events around the call alone;
   before it, outside the events, the L2 cache is flushed (a 256 MB write: the H200's L2 is 50–60 MB) and the
   next input set is taken. The sets hold different values (their seeds are the parent's), and each is marked
   modified before every call (its version counter moves, its contents do not), so a result cached on the input's
   identity, pointer or version is stale or missed on the next call.
3. The reported time is the median of all timed calls; the quartiles and every round's median are kept.
4. Cases where any implementation's median is below `cudagraph_below_ms` (launch overhead and ±2 µs event jitter
   dominate there) are timed again as CUDA graph replays (`calls` calls rotating over the sets captured in one
   graph, replayed, the median per call; the L2 is not flushed), for every implementation of the case, so the
   ratio compares like with like. An implementation that cannot be captured keeps its event figure, with a note.

The implementation named `checked` (the candidate) is watched while it is timed: the Triton launches of every
call (the parent rejects a timed call with none), a weighted checksum of every call's outputs (the parent rejects
calls whose checksum differs from the judged call's on the same set: a result computed only sometimes), and the
outputs of one call per input set, drawn at random, which the parent judges against its oracle like any run.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
import triton  # bound at import, before any candidate code runs

FLUSH_BYTES = 256 << 20


@dataclass
class Timing:
    ms: float | None = None  # the figure used: median of all timed calls (the CUDA graph figure if timer says so)
    timer: str = "events"  # events | cudagraph
    rounds_ms: list[float] = field(default_factory=list)  # medians per round
    q25_ms: float | None = None  # quartiles of all timed calls
    q75_ms: float | None = None
    calls: int = 0
    busy_ms: float = 0.0  # every timed call's time, summed: the parent bounds it by the wall clock it saw
    cudagraph_ms: float | None = None
    error: str | None = None  # no figure at all
    note: str | None = None

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class TimingSettings:
    warmup_ms: float = 5.0
    rep_ms: float = 20.0  # GPU time budget per implementation per round (its calls and the flushes before them)
    rounds: int = 2
    cudagraph_below_ms: float = 0.020
    cudagraph_rep_ms: float = 10.0
    min_calls: int = 5
    max_calls: int = 2000


@dataclass
class Watch:
    """What the parent needs to judge the checked implementation's timed calls, per input set."""

    launches: list[int] = field(default_factory=list)  # Triton launches of each timed call, in order
    # per set, per call: (weighted sum, absolute sum, non-finite count) of the outputs (_Checksum)
    checksums: list[list[list[float]]] = field(default_factory=list)
    judged: list[Any] = field(default_factory=list)  # per set: the outputs of the drawn call
    judged_index: list[int | None] = field(default_factory=list)  # per set: its position in `checksums`
    graph: list[int] | None = None  # [launches captured, calls captured] when the figure is a CUDA graph's

    def to_json(self) -> dict:
        return {
            "launches": self.launches,
            "checksums": self.checksums,
            "judged_index": self.judged_index,
            "graph": self.graph,
        }


def quantile(sorted_values: list[float], q: float) -> float:
    pos = q * (len(sorted_values) - 1)
    lo, hi = int(pos), min(int(pos) + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def _touch(inputs: tuple) -> None:
    """Mark every input tensor modified without changing a value: its version counter moves (a write to an empty
    slice launches nothing)."""
    for t in inputs:
        if isinstance(t, torch.Tensor) and t.dim() > 0:
            t[:0].zero_()


def _tensors(out: Any) -> list[torch.Tensor]:
    outs = out if isinstance(out, tuple | list) else (out,)
    return [t for t in outs if isinstance(t, torch.Tensor)]


class _Checksum:
    """A weighted sum (weights ±1 drawn once per shape) and an absolute sum of a call's outputs, on the device.
    Two calls that computed the same thing agree to rounding; a call that left its output uncomputed, or computed
    another input's result, does not, even where a plain sum would (random data sums alike)."""

    def __init__(self, seed: int):
        self.seed = seed
        self.weights: dict[tuple, torch.Tensor] = {}

    def __call__(self, out: Any) -> torch.Tensor:
        sums = []
        for t in _tensors(out):
            flat = t.detach().reshape(-1).float()
            key = (flat.numel(), str(flat.device))
            if key not in self.weights:
                g = torch.Generator(device=flat.device).manual_seed(self.seed)
                bits = torch.randint(0, 2, (flat.numel(),), generator=g, device=flat.device, dtype=torch.int8)
                self.weights[key] = bits.float() * 2 - 1
            w = self.weights[key]
            finite = torch.nan_to_num(flat, nan=0.0, posinf=0.0, neginf=0.0)
            sums.append(torch.stack([torch.dot(finite, w), finite.abs().sum(), (flat != flat).sum().float()]))
        return torch.stack(sums).sum(0) if sums else torch.zeros(3, device=torch.cuda.current_device())


def _count_launches() -> tuple[Callable[[], int], Callable[[], None]]:
    """A counter of Triton launches (on the launch hook, which costs a Python call per launch) and its removal."""
    count = [0]

    def hook(metadata: Any) -> None:
        count[0] += 1

    triton.knobs.runtime.launch_enter_hook.add(hook)
    return (lambda: count[0]), (lambda: triton.knobs.runtime.launch_enter_hook.remove(hook))


def time_interleaved(
    fns: dict[str, Callable[[tuple], object]],
    sets: Sequence[tuple],
    settings: TimingSettings,
    on_block: Callable[[str, str], None] = lambda name, edge: None,
    checked: str | None = None,
    draw_seed: int = 0,
) -> tuple[dict[str, Timing], Watch]:
    """Time each of `fns` (called with one input set) on `sets`; `checked` names the implementation to watch.
    on_block(name, "start" | "end") around each block of timed calls: the parent stamps these with its own clock.
    draw_seed picks which call's outputs per set are kept for judging."""
    results = {name: Timing() for name in fns}
    watch = Watch(checksums=[[] for _ in sets], judged=[None] * len(sets), judged_index=[None] * len(sets))
    checksum = _Checksum(draw_seed ^ 0x5EED)
    flush = torch.empty(FLUSH_BYTES, dtype=torch.int8, device="cuda")
    live, estimate = _warm(fns, sets, results)
    flush_ms = _flush_ms(flush)
    launches, unhook = _count_launches()
    try:
        # the budget is the GPU's time per call, the flush before it included: a fast kernel's round takes
        # rep_ms, not many times that in flushes (timing holds the GPU alone)
        calls = {name: _calls(estimate[name] + flush_ms, settings) for name in live}
        judged: dict[int, int] = {}  # call number of the checked implementation → the set whose outputs it keeps
        if checked in live:
            draws, total = random.Random(draw_seed), calls[checked] * settings.rounds
            for which in range(len(sets)):
                judged[draws.randrange(which, total, len(sets))] = which
        watched = _Watched(launches, checksum, watch, judged)
        pooled: dict[str, list[float]] = {name: [] for name in live}
        counter = dict.fromkeys(live, 0)
        for r in range(settings.rounds):
            order = live[r % len(live) :] + live[: r % len(live)] if live else []
            for name in order:
                if results[name].error:
                    continue
                on_block(name, "start")
                try:
                    times = _block(
                        fns[name], sets, calls[name], counter, name, flush, watched if name == checked else None
                    )
                except Exception as e:
                    results[name].error = f"timing failed: {type(e).__name__}: {str(e)[:300]}"
                    continue
                finally:
                    on_block(name, "end")
                results[name].rounds_ms.append(statistics.median(times))
                pooled[name] += times
        live = [n for n in live if not results[n].error]
        for name in live:
            t, values = results[name], sorted(pooled[name])
            t.ms, t.calls, t.busy_ms = statistics.median(values), len(values), sum(values)
            t.q25_ms, t.q75_ms = quantile(values, 0.25), quantile(values, 0.75)
        timed_ms = [ms for n in live if (ms := results[n].ms) is not None]
        if timed_ms and min(timed_ms) < settings.cudagraph_below_ms:
            _graph_times(fns, sets, live, results, settings, checked, launches, watch)
    finally:
        unhook()
        del flush
    return results, watch


@dataclass
class _Watched:
    launches: Callable[[], int]
    checksum: _Checksum
    watch: Watch
    judged: dict[int, int]


def _warm(
    fns: dict[str, Callable[[tuple], object]], sets: Sequence[tuple], results: dict[str, Timing]
) -> tuple[list[str], dict[str, float]]:
    """Each implementation on every set (compiles, autotuning), then five timed calls for the estimate."""
    live, estimate = [], {}
    for name, fn in fns.items():
        try:
            for inputs in sets:
                fn(inputs)
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for i in range(5):
                fn(sets[i % len(sets)])
            end.record()
            torch.cuda.synchronize()
            estimate[name] = start.elapsed_time(end) / 5
            live.append(name)
        except Exception as e:
            results[name].error = f"warm-up failed: {type(e).__name__}: {str(e)[:300]}"
    return live, estimate


def _flush_ms(flush: torch.Tensor) -> float:
    """What one L2 flush costs on this GPU (median of five)."""
    flush.zero_()
    spent = []
    for _ in range(5):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        flush.zero_()
        end.record()
        end.synchronize()
        spent.append(start.elapsed_time(end))
    return statistics.median(spent)


def _calls(estimate_ms: float, s: TimingSettings) -> int:
    return max(s.min_calls, min(s.max_calls, int(s.rep_ms / max(estimate_ms, 1e-4))))


def _block(
    fn: Callable[[tuple], object],
    sets: Sequence[tuple],
    n: int,
    counter: dict[str, int],
    name: str,
    flush: torch.Tensor,
    watched: _Watched | None,
) -> list[float]:
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    sums: list[tuple[int, torch.Tensor]] = []
    picked: dict[int, tuple[int, Any]] = {}  # set → (its position among this block's calls on the set, outputs)
    for i in range(n):
        k = counter[name]
        counter[name] += 1
        which = k % len(sets)
        inputs = sets[which]
        _touch(inputs)
        flush.zero_()
        before = watched.launches() if watched else 0
        starts[i].record()
        out = fn(inputs)
        ends[i].record()
        if watched is not None:
            watched.watch.launches.append(watched.launches() - before)
            sums.append((which, watched.checksum(out)))
            if watched.judged.get(k) == which:
                picked[which] = (sum(1 for w, _ in sums[:-1] if w == which), out)
        del out
    torch.cuda.synchronize()
    if watched is not None:
        # kept only with the block's checksums: a call that raises mid-block leaves no index into sums never kept
        for which, (position, out) in picked.items():
            watched.watch.judged[which] = out
            watched.watch.judged_index[which] = len(watched.watch.checksums[which]) + position
        for which, value in sums:
            watched.watch.checksums[which].append([float(v) for v in value.tolist()])
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]


def _graph_times(
    fns: dict[str, Callable[[tuple], object]],
    sets: Sequence[tuple],
    live: list[str],
    results: dict[str, Timing],
    settings: TimingSettings,
    checked: str | None,
    launches: Callable[[], int],
    watch: Watch,
) -> None:
    """CUDA graph replays for launch-bound cases: `calls` calls captured once (Python never runs on replay, so a
    forward cannot behave differently between them), replayed; the outputs of the last captured call per set hold
    the last replay's results and replace the judged ones."""
    for name in live:
        t = results[name]
        if t.ms is None:
            continue
        calls = max(len(sets), int(settings.cudagraph_rep_ms / max(t.ms, 1e-4)) // len(sets) * len(sets))
        try:
            stream = torch.cuda.Stream()
            graph = torch.cuda.CUDAGraph()
            last: list[Any] = [None] * len(sets)
            with torch.cuda.stream(stream):
                before = launches()
                with torch.cuda.graph(graph, stream=stream):
                    for i in range(calls):
                        last[i % len(sets)] = fns[name](sets[i % len(sets)])
                captured = launches() - before
            graph.replay()
            torch.cuda.synchronize()
            per_call = []
            for _ in range(max(3, settings.rounds)):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                graph.replay()
                end.record()
                torch.cuda.synchronize()
                per_call.append(start.elapsed_time(end) / calls)
            t.cudagraph_ms = statistics.median(per_call)
            t.ms, t.timer = t.cudagraph_ms, "cudagraph"
            if name == checked:  # the replayed kernels are the captured ones: no per-call checksums to compare
                watch.graph = [captured, calls]
                watch.judged = last
                watch.judged_index = [None] * len(sets)
        except Exception as e:
            t.note = f"CUDA graph capture failed, the event figure is kept: {type(e).__name__}: {str(e)[:200]}"
