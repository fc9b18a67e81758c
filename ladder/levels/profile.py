"""L2 profiling diagnosis: where each case sits against speed of light, and what class of bottleneck holds it.

Inputs: the kernel's latest timed validation (per-case medians and speed-of-light ceilings, measured by the
harness on a GPU: ladder/harness) and, where a GPU and `ncu` are present, hardware counters per case
(ladder/ncu.py). Without timings L2 cannot run and says so: it needs a GPU. With timings but no counters it
reports the roofline gap per case (evidence for the prompt and for L3) and no bottleneck class. Counters are
collected for the `ncu_cases` cases with most headroom (default 2: each profile is a process under ncu); a case
an earlier round already profiled on the same kernel reads that round's report back instead (ladder/ncu.py).

Classification of a profiled case (thresholds below; `traffic` = DRAM bytes over the operator's minimum bytes):
  traffic ≥ 1.5×                         → excess-memory-traffic (extra passes, intermediates, re-reads)
  dominant kernel < 1 wave, DRAM < 60 %  → under-parallelized (too few programs to fill the SMs)
  DRAM ≥ 60 %                            → memory-bound (near bandwidth with near-minimal traffic)
  SM ≥ 60 %                              → issue-bound (instruction-heavy: which ops is L3's question)
  otherwise                              → latency-bound (neither memory nor SMs busy)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ladder import ncu
from ladder.context import Context, KernelSubject, OperatorSubject, digest
from ladder.evidence import ARTIFACT, RAN, UNAVAILABLE, Evidence, Hypothesis, LevelResult, RewriteFamily, SourceRef
from ladder.levels.base import Level

EXCESS_TRAFFIC = 1.5
BUSY_PCT = 60.0
LOW_WAVES = 1.0

EXCESS, UNDER_PARALLEL, MEMORY, ISSUE, LATENCY = (
    "excess-memory-traffic",
    "under-parallelized",
    "memory-bound",
    "issue-bound",
    "latency-bound",
)

# The rewrite families a bottleneck class admits at L2. Issue-bound and memory-bound admit none here: which
# instructions dominate is L3's question, and a memory-bound case with minimal traffic has little left.
FAMILIES: dict[str, tuple[tuple[str, str], ...]] = {
    EXCESS: (
        (
            "fuse-passes",
            "read and write each byte once: fuse the kernels or loop passes into one pass (online "
            "algorithms), keep intermediates on chip",
        ),
    ),
    UNDER_PARALLEL: (
        (
            "split-work-across-programs",
            "launch enough programs to fill every SM: split long rows or reductions "
            "across programs and combine partials",
        ),
    ),
    LATENCY: (
        (
            "more-work-per-program",
            "give each program several rows/tokens/tiles so its fixed cost and latency are amortized",
        ),
        (
            "raise-memory-parallelism",
            "more bytes in flight per program: wider vectorized loads, more warps or pipelining stages",
        ),
    ),
    MEMORY: (),
    ISSUE: (),
}


@dataclass(frozen=True)
class Classified:
    case: str
    bottleneck: str
    why: str


def classify(counters: ncu.CaseCounters, min_bytes: int) -> Classified:
    d = counters.dominant
    traffic = counters.dram_bytes / min_bytes if min_bytes > 0 else 0.0
    facts = (
        f"{len(counters.kernels)} launch(es); dominant {d.name}: grid {d.grid}×{d.block} threads, "
        f"{d.waves:.2f} waves, DRAM {d.dram_pct:.0f}%, SM {d.sm_pct:.0f}%, occupancy {d.occupancy_pct:.0f}%; "
        f"traffic {traffic:.2f}× the minimum"
    )
    if traffic >= EXCESS_TRAFFIC:
        return Classified(counters.case, EXCESS, facts)
    if d.waves < LOW_WAVES and d.dram_pct < BUSY_PCT:
        return Classified(counters.case, UNDER_PARALLEL, facts)
    if d.dram_pct >= BUSY_PCT:
        return Classified(counters.case, MEMORY, facts)
    if d.sm_pct >= BUSY_PCT:
        return Classified(counters.case, ISSUE, facts)
    return Classified(counters.case, LATENCY, facts)


class ProfileLevel(Level):
    name = "L2"

    def gather(self, ctx: Context) -> LevelResult:
        v = ctx.validation
        if v is None or not v.timed or not isinstance(ctx.subject, OperatorSubject):  # timings need an operator
            return LevelResult(self.name, UNAVAILABLE, self._needs_gpu(ctx))
        op, opts = ctx.subject.op, ctx.options
        if ctx.validation_ref is None:
            raise ValueError("the timed validation has no artifact to cite; pass the validation JSON file")
        evidence = self._roofline(ctx)
        notes: list[str] = []
        reason = ncu.unavailable_reason(opts.ncu)
        if reason:
            notes.append(f"no hardware counters: {reason}")
            return LevelResult(self.name, RAN, evidence=tuple(evidence), notes=tuple(notes))
        classified: list[Classified] = []
        kernels: Counter[str] = Counter()
        weights = ctx.case_weights()
        for case in sorted(weights, key=lambda c: -weights[c])[: opts.ncu_cases]:
            earlier = _earlier_report(ctx, case)
            if earlier is not None:
                counters = ncu.counters(earlier, case, opts.ncu)
                notes.append(f"{case}: counters read back from {earlier} (an earlier round profiled this kernel)")
            else:
                counters = ncu.profile(ctx.kernel_path, op.ref, case, ctx.workdir / "ncu", opts.ncu, slot=opts.gpu_slot)
            c = classify(counters, op.bytes_moved(next(x for x in op.cases if x.name == case)))
            classified.append(c)
            kernels[counters.dominant.name] += 1
            evidence.append(
                Evidence(
                    f"L2.ncu.{case}",
                    self.name,
                    f"{case}: {c.bottleneck}: {c.why}",
                    SourceRef(ARTIFACT, str(counters.report)),
                    (case,),
                    {
                        "bottleneck": c.bottleneck,
                        "time_ns": counters.time_ns,
                        "dram_bytes": counters.dram_bytes,
                        "num_programs": counters.dominant.grid,
                        "waves": counters.dominant.waves,
                    },
                )
            )
        hypotheses, families = [], []
        for cls in dict.fromkeys(c.bottleneck for c in classified):
            cases = tuple(c.case for c in classified if c.bottleneck == cls)
            ids = tuple(f"L2.ncu.{c}" for c in cases)
            hotspot = f"kernel {kernels.most_common(1)[0][0]}"
            hypotheses.append(Hypothesis(cls, hotspot, cases, ids))
            families += [RewriteFamily(name, desc, ids) for name, desc in FAMILIES[cls]]
        return LevelResult(
            self.name,
            RAN,
            evidence=tuple(evidence),
            hypotheses=tuple(hypotheses),
            families=tuple(families),
            notes=tuple(notes),
        )

    def _roofline(self, ctx: Context) -> list[Evidence]:
        assert ctx.validation is not None and ctx.validation_ref is not None
        ms, sol = ctx.validation.times(), ctx.validation.times("sol_ms")
        out = []
        for case, t in ms.items():
            if case in sol:
                claim = f"{case}: {t:.4g} ms, speed of light {sol[case]:.4g} ms ({sol[case] / t:.0%} of SoL)"
                data = {"ms": t, "sol_ms": sol[case], "sol_fraction": sol[case] / t}
            else:
                claim, data = f"{case}: {t:.4g} ms (no speed-of-light figure)", {"ms": t}
            out.append(Evidence(f"L2.time.{case}", self.name, claim, ctx.validation_ref, (case,), data))
        return out

    @staticmethod
    def _needs_gpu(ctx: Context) -> str:
        import torch

        if isinstance(ctx.subject, KernelSubject):
            return (
                "L2 needs timings, and a kernel spec has no inputs, reference or speed of light to time against: "
                "wrap the kernel as an operator (`ladder optimize --op-file`) to profile it on a GPU"
            )
        seen = f"validated on {ctx.validation.device}, untimed" if ctx.validation else "never validated"
        if torch.cuda.is_available():
            return f"L2 needs timings: the kernel has none ({seen}); validate it with the GPU timing harness first"
        return (
            f"L2 needs a CUDA GPU: the kernel has no timings ({seen}) and this machine has no GPU; run the "
            f"ladder on the GPU machine, or give it a validation measured there"
        )


def _earlier_report(ctx: Context, case: str) -> Path | None:
    """The newest report an earlier round of this operator made for this kernel and case, if one is on disk."""
    for folder in ctx.earlier_rounds_of(digest(ctx.kernel_path.read_text())):
        report = ncu.report_path(folder / "ncu", case)
        if report.is_file():
            return report
    return None
