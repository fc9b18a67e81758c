"""The hazard detectors: one per symptom, each a general mechanism read from the signatures (docs/hazards.md).

A detector receives a KernelView and returns the hazards it sees, each on kernel lines, with the pass that
introduced it (or declined to remove it) and a cost from irscope/hazards/cost.py. Register one in `DETECTORS`,
at the end of this file: the order there is the order `find` runs them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from irscope.access import Access
from irscope.hazards import cost
from irscope.hazards.model import Hazard, PassRef
from irscope.hazards.view import KernelView, Reached
from irscope.parse.layouts import blocked, tensor_encodings

Detect = Callable[[KernelView], list[Hazard]]


@dataclass(frozen=True)
class Detector:
    name: str
    description: str
    detect: Detect


def _registry(*detectors: Detector) -> dict[str, Detector]:
    out: dict[str, Detector] = {}
    for d in detectors:
        if d.name in out:
            raise ValueError(f"two detectors for symptom {d.name!r}")
        out[d.name] = d
    return out


def _lines_where(view: KernelView, stage: str, test: Callable[[dict[str, int]], bool]) -> list[int]:
    return sorted(n for n, c in view.lines(stage).items() if test(c))


def _machine(view: KernelView, lines: list[int], stage: str | None = None) -> dict[str, float]:
    """Machine-code counters on `lines` (of `stage`, default the view's machine stage), each weighted by the
    loops around its line."""
    at = view.lines(stage or view.machine_stage)
    out: dict[str, float] = {}
    for n in lines:
        factor = cost.loop_factor(view.loop_depth(n))
        for k, v in at.get(n, {}).items():
            out[k] = out.get(k, 0.0) + v * factor
    return out


def _fmt(lines: list[int] | tuple[int, ...]) -> str:
    return ("line " if len(lines) == 1 else "lines ") + ", ".join(map(str, lines))


def _remarks(view: KernelView, at: PassRef | None, needle: str = "") -> tuple[str, ...]:
    """The compiler's remarks about it: those printed by pass `at` (any pass when None) holding `needle`."""
    return tuple(
        " ".join((r.message, *r.notes)) for r in view.remarks(needle) if at is None or r.snapshot == at.snapshot
    )


def cross_warp_reduction(view: KernelView) -> list[Hazard]:
    own, dependent = _index_reductions(view)
    index_lines = {*own, *dependent}
    found = []
    stage = view.machine_stage
    for n in _lines_where(view, "ttgir", lambda c: c.get("compute.reduce", 0) > 0):
        if n in index_lines:
            continue
        spans = _spans_warps(view, n)
        at = view.lines(stage).get(n, {})
        shows = at.get("sync.barrier") and (at.get("mem.shared_store") or at.get("mem.shared_load"))
        if spans is False or not shows:
            continue  # warp-local by layout (barriers on the line belong to something else), or none to see
        counts = _machine(view, [n])
        why = f" (the reduced axis has {spans} warps)" if isinstance(spans, int) and spans > 1 else ""
        found.append(
            Hazard(
                "cross-warp-reduction",
                view.kernel,
                (n,),
                f"line {n}: the reduction crosses warps{why}; in {stage}: "
                + ", ".join(
                    f"{k} {at.get(k, 0)}"
                    for k in ("sync.barrier", "mem.shared_store", "mem.shared_load", "sync.shuffle")
                ),
                cost.weighted(counts, ("sync.barrier", "mem.shared_load", "mem.shared_store")),
                {k: at.get(k, 0) for k in ("sync.barrier", "mem.shared_store", "mem.shared_load", "sync.shuffle")},
                introduced_by=view.introducing("sync.barrier", [n]),
                cause="warps",
            )
        )
    return found


def _spans_warps(view: KernelView, line: int) -> int | bool | None:
    """How many warps the reduced axis of the line's reductions spans (False: one, so warp-synchronous), from
    the operand's blocked layout (warpsPerCTA along `axis`, what ReduceOpHelper::isWarpSynchronous reads);
    None when no reduction on the line has a blocked operand layout to read."""
    most: int | None = None
    for r in view.ttgir_ops:
        if r.op.name != "tt.reduce" or r.line != line:
            continue
        axis = re.search(r"axis = (\d+)", r.op.text)
        operands = tensor_encodings(r.op.tail.split("->")[0])  # tail: "" for an op without regions
        fields = blocked(operands[0][1], view.ttgir_aliases) if operands and operands[0][1] else None
        if axis is None or fields is None or "warpsPerCTA" not in fields:
            continue
        warps = fields["warpsPerCTA"][int(axis.group(1))]
        most = warps if most is None else max(most, warps)
    if most is None:
        return None
    return most if most > 1 else False


def _index_reductions(view: KernelView) -> tuple[list[int], list[int]]:
    """Lines of index-producing reductions, and lines of the reductions that consume their index (the
    argmax-then-mask idiom: the index selects what the next reduction excludes, so that reduction exists
    only because of the index)."""
    lines = _lines_where(view, "ttgir", lambda c: c.get("compute.reduce_index", 0) > 0)
    users: dict[str, list[Reached]] = {}
    for r in view.ttgir_ops:
        for v in r.op.operands:
            users.setdefault(v, []).append(r)
    pending = [
        f"{r.op.results[0].split(':')[0]}#1"
        for r in view.ttgir_ops
        if r.op.name == "tt.reduce" and r.line in lines and r.op.results and ":" in r.op.results[0]
    ]
    seen: set[str] = set()
    dependent: set[int] = set()
    while pending:
        value = pending.pop()
        if value in seen:
            continue
        seen.add(value)
        for r in users.get(value, []):
            if r.op.name == "tt.reduce":
                dependent.add(r.line)
            pending += [res.split(":")[0] for res in r.op.results]
    return lines, sorted(n for n in dependent if n and n not in lines)


def index_reduction(view: KernelView) -> list[Hazard]:
    own, dependent = _index_reductions(view)
    if not own:
        return []
    lines = sorted(own + dependent)
    stage = view.machine_stage
    counts = _machine(view, lines)
    raw = {k: view.on_lines(stage, lines, k) for k in ("sync.shuffle", "sync.barrier", "mem.shared_store")}
    also = (
        f" (with the reductions on {_fmt(dependent)} that consume its index)"
        if len(dependent) > 1
        else f" (with the reduction on {_fmt(dependent)} that consumes its index)"
    )
    return [
        Hazard(
            "index-reduction-sync",
            view.kernel,
            tuple(lines),
            f"{_fmt(own)}: index-producing reduction{also if dependent else ''}; in {stage}: "
            + ", ".join(f"{k} {v}" for k, v in raw.items()),
            cost.weighted(counts, ("sync.shuffle", "sync.barrier", "mem.shared_load", "mem.shared_store")),
            raw,
            introduced_by=view.introducing("sync.shuffle", own),
            cause="index",
        )
    ]


def register_spills(view: KernelView) -> list[Hazard]:
    spilled = view.resources.get("res.spill_bytes", 0)
    sass = view.lines("sass")
    lines = sorted(n for n, c in sass.items() if c.get("mem.local_load") or c.get("mem.local_store"))
    if not spilled and not lines:
        return []
    counts = _machine(view, lines, "sass") if lines else {}
    if lines:
        value = cost.weighted(counts, ("mem.local_load", "mem.local_store"))
    else:  # no SASS: the ptxas report's bytes, one 4-byte access each
        value = cost.WEIGHTS["mem.local_store"] * spilled / 4
    local = {k: view.total("sass", k) for k in ("mem.local_load", "mem.local_store")}
    return [
        Hazard(
            "register-spills",
            view.kernel,
            tuple(lines),
            f"ptxas spills {spilled:g} bytes with {view.resources.get('res.registers', 0):g} registers per thread "
            f"({view.num_warps} warps); SASS has {local['mem.local_load']} local loads and "
            f"{local['mem.local_store']} local stores" + (f" on {_fmt(lines)}" if lines else ""),
            value,
            {"res.spill_bytes": spilled, "res.registers": view.resources.get("res.registers", 0), **local},
            cause="registers",
        )
    ]


ASYNC_LOADS = ("ttg.async_copy_global_to_local", "ttng.async_tma_copy_global_to_local", "tt.descriptor_load")
DOTS = ("tt.dot", "ttng.warp_group_dot")


@dataclass(frozen=True)
class SyncLoop:
    loop: Reached
    loads: list[Reached]  # global loads directly in its body that stayed synchronous
    has_dot: bool
    cause: str  # what kept the pipeliner away, in a word


def _sync_loops(ops: list[Reached], num_stages: int) -> list[SyncLoop]:
    """Loops whose body issues global loads that stayed synchronous (no cp.async, TMA or descriptor load), and
    why, by the pipeliner's rules: it takes innermost loops (preCondition), num_stages > 1 (assignLatencies),
    loads that feed a dot — or every load when the loop carries tl.range's num_stages (loadOpsToIndirectionLevel)
    — of at least 4 contiguous bytes per thread (canBeConvertedToAsyncLoad)."""
    out = []
    for loop in (r for r in ops if r.op.name == "scf.for"):
        inside = [r for r in ops if _within(r.op, loop.op)]
        names = {r.op.name for r in inside}
        loads = [r for r in inside if r.op.name == "tt.load" and r.op.parent is loop.op]
        if not loads or names & set(ASYNC_LOADS):
            continue
        has_dot = bool(names & set(DOTS))
        explicit = "tt.num_stages" in (loop.op.tail or "") or "tt.num_stages" in loop.op.text
        if "scf.for" in {r.op.name for r in inside}:
            cause = "outer-loop"
        elif (int(_stages(loop)) if explicit else num_stages) <= 1:
            cause = "num_stages"
        elif not has_dot and not explicit:
            cause = "no-dot"
        else:
            cause = "width"
        out.append(SyncLoop(loop, loads, has_dot, cause))
    return out


def _stages(loop: Reached) -> int:
    m = re.search(r"tt\.num_stages = (\d+)", f"{loop.op.text} {loop.op.tail or ''}")
    return int(m.group(1)) if m else 0


def _within(op, ancestor) -> bool:
    parent = op.parent
    while parent is not None:
        if parent is ancestor:
            return True
        parent = parent.parent
    return False


WHY_SYNC = {
    "num_stages": "num_stages ≤ 1 turns the pipeliner off",
    "no-dot": "the pipeliner takes loops without a dot only under tl.range(…, num_stages=N)",
    "outer-loop": "the pipeliner takes innermost loops only",
    "width": "the loads are too narrow for cp.async (under 4 contiguous bytes per thread) or feed no dot",
}


def not_pipelined(view: KernelView) -> list[Hazard]:
    found = []
    stages = int(view.traj.specialization.options.get("num_stages", 3) or 3)
    for s in _sync_loops(view.ttgir_ops, stages):
        lines = sorted({r.line for r in s.loads if r.line})
        declined = None
        for pass_arg in ("tritongpu-assign-latencies", "tritongpu-pipeline"):
            declined = view.declined(pass_arg, test=lambda ops: bool(_sync_loops(ops, stages)))
            if declined:
                break
        what = "dot loop" if s.has_dot else "loop"
        found.append(
            Hazard(
                "not-pipelined",
                view.kernel,
                tuple(lines),
                f"{_fmt(lines)}: {len(s.loads)} global load(s) in the {what} at line {s.loop.line} stay synchronous "
                f"(no cp.async/TMA): {WHY_SYNC[s.cause]}",
                len(s.loads) * cost.EXPOSED_LOAD_LATENCY * cost.loop_factor(s.loop.loop_depth + 1),
                {"loads_in_loop": len(s.loads), "num_stages": stages},
                declined_by=declined,
                remarks=_remarks(view, declined, "ipelin"),
                cause=s.cause,
            )
        )
    return found


def dot_on_fma(view: KernelView) -> list[Hazard]:
    lines = _lines_where(view, "ttgir", lambda c: c.get("compute.dot_fma", 0) > 0)
    if not lines:
        return []
    counts = _machine(view, lines)
    declined = view.declined("tritongpu-accelerate-matmul", counter="compute.dot_fma")
    return [
        Hazard(
            "dot-on-fma",
            view.kernel,
            tuple(lines),
            f"{_fmt(lines)}: tl.dot stays on the FMA path "
            f"({view.on_lines(view.machine_stage, lines, 'compute.fp_ops')} FP instructions in {view.machine_stage})",
            # MMA does the same work in about 1/16 of the issue slots
            cost.weighted(counts, ("compute.fp_ops",)) * 15 / 16,
            {"compute.dot_fma": view.on_lines("ttgir", lines, "compute.dot_fma")},
            declined_by=declined,
            remarks=_remarks(view, declined),
            cause="precision" if _fp32_dot(view, lines) else "shape",
        )
    ]


def _fp32_dot(view: KernelView, lines: list[int]) -> bool:
    """A dot on these lines takes fp32 operands (MMA needs input_precision tf32 for those)."""
    return any(
        r.op.name == "tt.dot" and r.line in lines and "xf32" in r.op.text.split(":")[-1].split("->")[0]
        for r in view.ttgir_ops
    )


def mma_downgrade(view: KernelView) -> list[Hazard]:
    if not view.nvidia or view.capability < 90:
        return []
    lines = _lines_where(view, "ttgir", lambda c: c.get("compute.mma_sync", 0) > 0)
    if not lines:
        return []
    counts = _machine(view, lines)
    at = view.introducing("compute.mma_sync", lines)
    return [
        Hazard(
            "mma-downgrade",
            view.kernel,
            tuple(lines),
            f"{_fmt(lines)}: tl.dot uses mma.sync (v2) on sm_{view.capability}, "
            f"{view.on_lines(view.machine_stage, lines, 'compute.mma_sync')} mma.sync in {view.machine_stage}",
            cost.weighted(counts, ("compute.mma_sync",)),
            {"compute.mma_sync": view.on_lines("ttgir", lines, "compute.mma_sync")},
            introduced_by=at,
            remarks=_remarks(view, at),
            cause="num_warps" if view.num_warps % 4 else "rank" if _rank3_dot(view, lines) else "shape",
        )
    ]


def _rank3_dot(view: KernelView, lines: list[int]) -> bool:
    return any(
        r.op.name == "tt.dot" and r.line in lines and any(len(shape) == 3 for shape, _ in tensor_encodings(r.op.text))
        for r in view.ttgir_ops
    )


def layout_conversion(view: KernelView) -> list[Hazard]:
    stage = view.machine_stage
    found = []
    for n in _lines_where(view, "ttgir", lambda c: c.get("layout.convert_layout", 0) > 0):
        at = view.lines(stage).get(n, {})
        if not (at.get("mem.shared_store") and at.get("mem.shared_load")):
            continue  # a conversion within registers (or a no-op): cheap
        if all(_epilogue(r) for r in view.ttgir_ops if r.op.name == "ttg.convert_layout" and r.line == n):
            continue
        counts = _machine(view, [n])
        declined = view.declined("tritongpu-remove-layout-conversions", test=_converts_on(n))
        found.append(
            Hazard(
                "layout-conversion",
                view.kernel,
                (n,),
                f"line {n}: {view.on_lines('ttgir', [n], 'layout.convert_layout')} layout conversion(s) through "
                f"shared memory ({at.get('mem.shared_store', 0)} shared stores, {at.get('mem.shared_load', 0)} "
                f"shared loads, {at.get('sync.barrier', 0)} barriers in {stage})",
                cost.weighted(counts, ("sync.barrier", "mem.shared_load", "mem.shared_store")),
                {"layout.convert_layout": view.on_lines("ttgir", [n], "layout.convert_layout")},
                introduced_by=view.introducing("layout.convert_layout", [n]),
                declined_by=declined,
                cause="anchors",
            )
        )
    return found


def _converts_on(line: int) -> Callable[[list[Reached]], bool]:
    def test(ops: list[Reached]) -> bool:
        return any(r.op.name == "ttg.convert_layout" and r.line == line for r in ops)

    return test


def _epilogue(r: Reached) -> bool:
    """A conversion of an MMA accumulator outside any loop: the one per-tile shuffle an MMA result needs to be
    stored coalesced, which the compiler inserts on purpose and no source layout avoids."""
    source_type = r.op.text.split(":", 1)[-1].split("->")[0]
    return r.loop_depth == 0 and re.search(r"#mma\d*\b", source_type) is not None


def global_atomics(view: KernelView) -> list[Hazard]:
    per_element = sorted(
        {
            r.line
            for r in view.ttgir_ops
            if r.op.name in ("tt.atomic_rmw", "tt.atomic_cas") and "tensor<" in r.op.text and r.line
        }
    )
    if not per_element:
        return []
    counts = _machine(view, per_element)
    n_atomics = view.on_lines(view.machine_stage, per_element, "compute.atomic")
    return [
        Hazard(
            "global-atomics",
            view.kernel,
            tuple(per_element),
            f"{_fmt(per_element)}: per-element atomics on a tensor, {n_atomics} atomic instructions per thread in "
            f"{view.machine_stage}",
            cost.weighted(counts, ("compute.atomic",)),
            {"compute.atomic": n_atomics},
            introduced_by=view.introducing("compute.atomic", per_element),
            cause="per-element",
        )
    ]


def occupancy_limit(view: KernelView) -> list[Hazard]:
    if not view.nvidia:
        return []
    regs = int(view.resources.get("res.registers", 0))
    shared = int(view.resources.get("res.shared_bytes", 0))
    warps, limiter = cost.resident_warps(regs, shared, view.num_warps)
    if limiter not in ("registers", "shared memory") or warps > view.num_warps:
        return []
    return [
        Hazard(
            "occupancy-limit",
            view.kernel,
            (),
            f"one CTA per SM ({warps} warps), limited by {limiter}: {regs} registers per thread, {shared} bytes of "
            f"shared memory per CTA, {view.num_warps} warps per CTA",
            0.0,  # set from the kernel's total cost by find(): occupancy scales everything
            {"resident_warps": warps, "res.registers": regs, "res.shared_bytes": shared},
            introduced_by=view.introducing("layout.shared_bytes") if limiter == "shared memory" else None,
            cause=limiter,
        )
    ]


def _accesses_by_line(view: KernelView, verdict: str) -> dict[int, list[Access]]:
    out: dict[int, list[Access]] = {}
    for a in view.accesses:
        if a.line and a.shape and (a.verdict == verdict or (verdict == "uncoalesced" and _nowhere_contiguous(a))):
            out.setdefault(a.line, []).append(a)
    return out


def _nowhere_contiguous(a: Access) -> bool:
    """A gather (offsets loaded along the thread-fast axis) with no contiguous dimension at all: Coalesce, which
    lays threads along the most contiguous dimension, has none to choose, so it is scattered like a strided one."""
    return a.verdict == "gather" and len(a.contiguities) > 1 and max(a.contiguities) == 1


def _access_cost(view: KernelView, line: int, factor: float) -> float:
    counts = _machine(view, [line])
    issued = (
        counts.get("mem.load", 0) * cost.WEIGHTS["mem.load"] + counts.get("mem.store", 0) * cost.WEIGHTS["mem.store"]
    )
    return issued * factor


def uncoalesced_access(view: KernelView) -> list[Hazard]:
    found = []
    for n, accs in sorted(_accesses_by_line(view, "uncoalesced").items()):
        a = accs[0]
        found.append(
            Hazard(
                "uncoalesced-access",
                view.kernel,
                (n,),
                f"line {n}: {a.kind} of {'x'.join(map(str, a.shape))} elements with contiguity {a.contiguity} along "
                f"the thread-fast axis: {a.why}",
                _access_cost(view, n, cost.UNCOALESCED_FACTOR),
                {
                    "contiguity": a.contiguity,
                    "elements_per_thread": a.elements_per_thread,
                    "vector_bits": a.vector_bits or 0,
                },
                introduced_by=view.introducing(f"mem.{a.kind}", [n]) if a.kind in ("load", "store") else None,
                cause="stride",
            )
        )
    return found


def narrow_access(view: KernelView) -> list[Hazard]:
    found = []
    for n, accs in sorted(_accesses_by_line(view, "narrow").items()):
        a = min(accs, key=lambda x: x.vector_bits or 0)
        width = a.vector_bits or a.element_bits
        found.append(
            Hazard(
                "narrow-memory-access",
                view.kernel,
                (n,),
                f"line {n}: {a.kind} of contiguous elements issued {width} bits wide (128 possible): {a.why}",
                _access_cost(view, n, 1 - width / cost.MAX_VECTOR_BITS),
                {
                    "vector_bits": width,
                    "contiguity": a.contiguity,
                    "divisibility": a.divisibility,
                    "mask_alignment": a.mask_alignment or 0,
                },
                introduced_by=view.introducing(f"mem.{a.kind}", [n]) if a.kind in ("load", "store") else None,
                cause=_narrowed_by(a),
            )
        )
    return found


def _narrowed_by(a: Access) -> str:
    """Which of AxisInfo's numbers caps the vector (LoadStoreOpToLLVM: vec = min(128 / bits, contiguity,
    alignment, mask alignment)): the mask's constancy, the address's divisibility, or the contiguity."""
    limits = {"divisibility": a.divisibility, "mask": a.mask_alignment or 1 << 30, "contiguity": a.contiguity}
    return min(limits, key=lambda k: limits[k])


# Every detector, in the order `find` runs them (a table, not a decorator: the functions stay plain ones, which
# mutmut can mutate; docs/mutation.md).
DETECTORS: dict[str, Detector] = _registry(
    Detector(
        "cross-warp-reduction",
        "a reduction whose reduced axis spans several warps: partial results go through shared memory with a "
        "barrier before and after (ReduceOpConversion), instead of staying in one warp's registers and shuffles",
        cross_warp_reduction,
    ),
    Detector(
        "index-reduction-sync",
        "an index-producing reduction (argmax/argmin): value and index travel together through every shuffle "
        "step, and across warps through shared memory; reductions that consume the index (masking the winner "
        "out) are part of it",
        index_reduction,
    ),
    Detector(
        "register-spills",
        "ptxas ran out of registers under the per-thread cap that num_warps implies and spilled to local memory "
        "(SASS local loads/stores; PTX has none)",
        register_spills,
    ),
    Detector(
        "not-pipelined",
        "a loop whose global loads the software pipeliner left synchronous: every iteration waits for its loads "
        "instead of overlapping them with the previous iteration's work (cp.async / TMA)",
        not_pipelined,
    ),
    Detector(
        "dot-on-fma",
        "tl.dot left on the FMA path: AccelerateMatmul found no MMA instruction for the operand types, input "
        "precision or tile shape, so the product runs as scalar fused multiply-adds",
        dot_on_fma,
    ),
    Detector(
        "mma-downgrade",
        "on Hopper, tl.dot lowered to mma.sync (MMA v2) although the target has wgmma (MMA v3): the shape, warp "
        "count or operand layout did not meet wgmma's conditions",
        mma_downgrade,
    ),
    Detector(
        "layout-conversion",
        "a ttg.convert_layout that survived tritongpu-remove-layout-conversions and lowers through shared memory "
        "(stores, a barrier, loads) because producer and consumer want different layouts",
        layout_conversion,
    ),
    Detector(
        "global-atomics",
        "an atomic read-modify-write per element to global memory: every thread's update serializes at L2 "
        "instead of being combined in registers first",
        global_atomics,
    ),
    Detector(
        "occupancy-limit",
        "registers or shared memory per CTA leave room for a single CTA per SM: nothing overlaps its prologue, "
        "epilogue and barriers with another CTA's work",
        occupancy_limit,
    ),
    Detector(
        "uncoalesced-access",
        "neighbouring threads access addresses a stride apart (the index of the thread-fast axis is multiplied by a "
        "stride), so every thread issues its own scalar transaction instead of a warp sharing 128-byte lines",
        uncoalesced_access,
    ),
    Detector(
        "narrow-memory-access",
        "global accesses whose addresses are contiguous but issued narrower than 128 bits: the compiler could not "
        "prove the alignment (divisibility) or the mask's constancy that wider vectors need",
        narrow_access,
    ),
)
