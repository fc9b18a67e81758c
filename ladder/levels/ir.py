"""L3 IR attribution: which lowering step produced the symptom, from which source line (irscope).

The kernel's `forward` is compiled per pass for the target (ladder/ir_capture.py, CPU, real Triton) on the
case that matters most among those cheap to build inputs for. Structural symptoms are read from the
signatures (docs/signatures.md) per source line, and the stage-diff graph names the pass that introduced the
instructions behind each. A symptom's cost is the PTX instructions attributed to its lines; the costliest is a
hypothesis, and so is any rival within RIVAL_SHARE of it (then the policy sees competing classes and
escalates); smaller ones are kept as notes.

Symptoms (bottleneck class → rewrite family; families are the pattern cards' families, as L1 and L4 name them):
  index-producing reduction (ttgir compute.reduce_index)  → index-reduction-sync → index-reduction
  global accesses narrower than 128 bits on a line (PTX)  → narrow-memory-access → vectorization
  layout conversions left after optimization (ttgir)      → layout-conversion    → layout
  dot left on the FMA path (ttgir compute.dot_fma)        → dot-on-fma           → tensor-core
  register spills (res.spill_bytes)                       → register-spills      → resources
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import irscope
from irscope import graph, signatures
from irscope.trajectory import Trajectory
from ladder.context import Context
from ladder.evidence import (
    ARTIFACT,
    RAN,
    SNAPSHOT,
    SOURCE_LINE,
    Evidence,
    Hypothesis,
    LevelResult,
    RewriteFamily,
    SourceRef,
)
from ladder.ir_capture import capture
from ladder.levels.base import Level
from ladder.policy import RIVAL_SHARE

CAPTURE_BYTES = 256 << 20  # largest case (minimum bytes moved) whose inputs L3 builds on the CPU
COST_COUNTERS = (
    "compute.fp_ops",
    "compute.int_ops",
    "compute.special",
    "mem.load",
    "mem.store",
    "sync.shuffle",
    "sync.barrier",
    "sync.redux",
    "mem.shared_load",
    "mem.shared_store",
    "mem.local_load",
    "mem.local_store",
)


@dataclass(frozen=True)
class Symptom:
    bottleneck: str
    family: str
    family_description: str
    stage: str  # where its lines are found
    lines: Callable[[dict[str, int]], bool]  # does a line's counters at `stage` show it
    counters: tuple[str, ...]  # the first of these with an introducing pass is cited
    what: str  # how a line with it is described


SYMPTOMS = (
    Symptom(
        "index-reduction-sync",
        "index-reduction",
        "replace index-producing reductions (argmax/argmin, then masking the winner) by value reductions: the "
        "max, then a second max that counts occurrences of the first so ties stay correct",
        "ttgir",
        lambda c: c.get("compute.reduce_index", 0) > 0,
        ("sync.shuffle", "sync.barrier"),
        "an index-producing reduction (value and index travel together through every shuffle step)",
    ),
    Symptom(
        "narrow-memory-access",
        "vectorization",
        "give each thread 16 contiguous, aligned bytes per access: more elements per thread (block size vs "
        "warps), contiguous inner dimension, tl.multiple_of/tl.max_contiguous where the compiler cannot prove it",
        "ptx",
        lambda c: (
            c.get("mem.load_vec1", 0)
            + c.get("mem.load_vec2", 0)
            + c.get("mem.store_vec1", 0)
            + c.get("mem.store_vec2", 0)
            > 0
            and not any(c.get(f"mem.{k}_vec{w}", 0) for k in ("load", "store") for w in (4, 8))
        ),
        ("mem.load_vec1", "mem.load_vec2", "mem.store_vec1", "mem.store_vec2"),
        "global accesses narrower than 128 bits",
    ),
    Symptom(
        "layout-conversion",
        "layout",
        "make producers and consumers agree on a layout (reduction axis, dot operands) so no ttg.convert_layout "
        "round trip through shared memory remains",
        "ttgir",
        lambda c: c.get("layout.convert_layout", 0) > 0,
        ("layout.convert_layout",),
        "layout conversions that survived tritongpu-remove-layout-conversions",
    ),
    Symptom(
        "dot-on-fma",
        "tensor-core",
        "feed tl.dot bf16/fp16 operands with tiles of K ≥ 16 so it lowers to wgmma/mma rather than FMAs",
        "ttgir",
        lambda c: c.get("compute.dot_fma", 0) > 0,
        ("compute.dot_fma",),
        "a dot left on the FMA path",
    ),
)
SUMMARY_SHOWN = (
    "ttgir.compute.reduce_index",
    "ttgir.layout.convert_layout",
    "ptx.sync.shuffle",
    "ptx.sync.barrier",
    "ptx.mem.load_bits_max",
    "res.registers",
    "res.spill_bytes",
    "res.instructions",
)
SPILLS = (
    "register-spills",
    "resources",
    "fewer live values per thread (smaller tiles, more warps, fewer stages) so nothing spills",
)


@dataclass
class _Found:
    bottleneck: str
    family: tuple[str, str]
    cost: int
    hotspot: str
    evidence: list[Evidence]


def _line_cost(ptx_lines: dict[int, dict[str, int]], lines: list[int]) -> int:
    return sum(ptx_lines.get(line, {}).get(k, 0) for line in lines for k in COST_COUNTERS)


def _introducing_pass(g: graph.StageDiffGraph, counter: str) -> graph.Edge | None:
    """The last edge that increased `counter` (earlier increases may have been undone since)."""
    ups = [c for c in g.changes(counter) if c.delta > 0]
    return ups[-1].edge if ups else None


def analyze(traj: Trajectory, tag: str) -> tuple[Evidence, list[_Found]]:
    """One captured kernel: its counter summary, and its symptoms with source-line and pass evidence."""
    assert traj.root is not None
    analyzer = signatures.Analyzer(traj)
    summary = {k: v for k, v in signatures.summary(traj, analyzer).items() if v}
    shown = ", ".join(f"{k} {summary[k]:g}" for k in SUMMARY_SHOWN if k in summary)
    overview = Evidence(
        f"L3.{tag}.summary",
        "L3",
        f"{traj.kernel.name}: {len(traj.snapshots)} snapshots for {traj.target}" + (f"; {shown}" if shown else ""),
        SourceRef(ARTIFACT, str(traj.root)),
        data=summary,
    )
    by_line = signatures.by_line(traj, analyzer)
    ptx = by_line.get("ptx", {})
    g = graph.build(traj, analyzer)
    name, src = traj.kernel.name, traj.kernel.source_file
    found: list[_Found] = []
    for s in SYMPTOMS:
        lines = sorted(line for line, c in by_line.get(s.stage, {}).items() if line and s.lines(c))
        if not lines:
            continue
        ev = []
        for line in lines:
            at = ptx.get(line, {})
            # shuffles and barriers are always stated, zero included: "no barrier" is evidence too
            cost = ", ".join(
                [f"{k} {at.get(k, 0)}" for k in ("sync.shuffle", "sync.barrier")]
                + [f"{k} {v}" for k in ("mem.load", "mem.store") if (v := at.get(k))]
            )
            ev.append(
                Evidence(
                    f"L3.{tag}.{s.bottleneck}.line{line}",
                    "L3",
                    f"{name} line {line}: {s.what}" + (f"; in PTX: {cost}" if cost else ""),
                    SourceRef(SOURCE_LINE, src, line=line),
                    data=dict(at),
                )
            )
        cited = next(((c, e) for c in s.counters if (e := _introducing_pass(g, c)) is not None), None)
        if cited is not None:
            counter, edge = cited
            ev.append(
                Evidence(
                    f"L3.{tag}.{s.bottleneck}.pass",
                    "L3",
                    f"{name}: pass {edge.pass_arg} ({edge.stage}, snapshot #{edge.target}) introduced "
                    f"{edge.counter_deltas.get(counter, 0)} {counter}",
                    SourceRef(SNAPSHOT, str(traj.root), snapshot=edge.target, pass_arg=edge.pass_arg),
                    data={counter: edge.counter_deltas.get(counter, 0)},
                )
            )
        hotspot = f"{name} line{'s' if len(lines) > 1 else ''} {', '.join(map(str, lines))}"
        found.append(_Found(s.bottleneck, (s.family, s.family_description), _line_cost(ptx, lines), hotspot, ev))
    spill = signatures.resources(traj).get("res.spill_bytes", 0)
    if spill:
        log = traj.artifacts.get("ptxas-log")
        where = str(traj.root / log.file) if log else str(traj.root)
        total = sum(c.get(k, 0) for c in ptx.values() for k in ("mem.local_load", "mem.local_store"))
        ev = [
            Evidence(
                f"L3.{tag}.register-spills",
                "L3",
                f"{name}: ptxas spills {spill:g} bytes",
                SourceRef(ARTIFACT, where),
                data={"spill_bytes": spill},
            )
        ]
        found.append(_Found(SPILLS[0], SPILLS[1:], total, name, ev))
    return overview, found


class IRLevel(Level):
    name = "L3"

    def gather(self, ctx: Context) -> LevelResult:
        case = self._case(ctx)
        target = ctx.option("target", "cuda:90")
        dirs = capture(ctx.kernel_path, ctx.op.make_inputs.__module__, case, ctx.workdir / "ir", target)
        analyzed = [analyze(irscope.load(d), str(i)) for i, d in enumerate(dirs)]
        overviews = tuple(o for o, _ in analyzed)
        found = [f for _, fs in analyzed for f in fs]
        notes = [f"captured {len(dirs)} kernel(s) for {target} as specialized for case {case}"]
        if not found:
            return LevelResult(self.name, RAN, evidence=overviews, notes=tuple(notes))
        found.sort(key=lambda f: -f.cost)
        top = found[0].cost
        kept = [f for f in found if f.cost >= RIVAL_SHARE * top]
        notes += [f"minor: {f.bottleneck} at {f.hotspot} (cost {f.cost} vs {top})" for f in found if f not in kept]
        evidence = overviews + tuple(e for f in kept for e in f.evidence)
        hypotheses = tuple(Hypothesis(f.bottleneck, f.hotspot, (), tuple(e.id for e in f.evidence)) for f in kept)
        families: dict[str, RewriteFamily] = {}
        for f in kept:
            ids = tuple(e.id for e in f.evidence)
            prior = families.get(f.family[0])
            families[f.family[0]] = RewriteFamily(f.family[0], f.family[1], (prior.evidence if prior else ()) + ids)
        return LevelResult(
            self.name,
            RAN,
            evidence=evidence,
            hypotheses=hypotheses,
            families=tuple(families.values()),
            notes=tuple(notes),
        )

    @staticmethod
    def _case(ctx: Context) -> str:
        """The heaviest case that still matters and is cheap to build on the CPU; else the cheapest case."""
        cases = {c.name: c for c in ctx.op.cases}
        weights = ctx.case_weights()
        for name in sorted(weights, key=lambda c: -weights[c]):
            if name in cases and ctx.op.bytes_moved(cases[name]) <= CAPTURE_BYTES:
                return name
        return min(ctx.op.cases, key=ctx.op.bytes_moved).name


LEVEL = IRLevel()
