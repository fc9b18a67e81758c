"""The hazard detectors: one per symptom, each a general mechanism read from the signatures (docs/hazards.md).

A detector receives a KernelView and returns the hazards it sees, each on kernel lines, with the pass that
introduced it (or declined to remove it) and a cost from irscope/hazards/cost.py. Register one in `DETECTORS`,
at the end of this file: the order there is the order `find` runs them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from irscope.access import Access
from irscope.hazards import cost
from irscope.hazards.model import Hazard, PassRef
from irscope.hazards.view import LOOP_OPS, KernelView, Reached
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
MEMDESC_VIEWS = ("ttg.memdesc_trans", "ttg.memdesc_reshape", "ttg.memdesc_subslice", "ttg.convert_layout")
RELAYOUT_WARNING = "pipelined load for this operand will be disabled"
LAYOUT_ONLY = ("ttg.convert_layout", "tt.trans", "tt.reshape", "tt.expand_dims", "tt.broadcast")


@dataclass(frozen=True)
class SyncLoop:
    loop: Reached
    loads: list[Reached]  # global loads directly in its body that stayed synchronous
    has_dot: bool
    cause: str  # what kept the pipeliner away, in a word


def _sync_loops(ops: list[Reached], num_stages: int) -> list[SyncLoop]:
    """Loops whose body issues global loads that stayed synchronous (no cp.async, TMA or descriptor load), and
    why, by the pipeliner's rules: it walks scf.for loops only (assignLatencies: a `while` loop is never
    scheduled), innermost ones (preCondition), num_stages > 1 (assignLatencies), loads that feed a dot — or every
    load when the loop carries tl.range's num_stages (loadOpsToIndirectionLevel) — of at least 4 contiguous bytes
    per thread (canBeConvertedToAsyncLoad). Load by load: in a loop the pipeliner did take, a load it left
    synchronous although it feeds a dot is one too (lowerLoads: a copy of under 4 bytes per thread stays a load),
    unless the operand it feeds is re-laid out through shared memory, which is operand-relayout-in-loop's."""
    defs = _defs(ops)
    out = []
    for loop in (r for r in ops if r.op.name in LOOP_OPS):
        inside = [r for r in ops if _within(r.op, loop.op)]
        names = {r.op.name for r in inside}
        loads = [r for r in inside if r.op.name == "tt.load" and _loop_of(r.op) is loop.op]
        if not loads:
            continue
        has_dot = bool(names & set(DOTS))
        if loop.op.name == "scf.while":
            out.append(SyncLoop(loop, loads, has_dot, "while-loop"))
            continue
        if names & set(ASYNC_LOADS):
            relaid = {id(r.op) for r in _relaid_loads(defs, inside, loop.op)}
            dots = [r for r in inside if r.op.name in DOTS and _loop_of(r.op) is loop.op]
            feeding = {id(x.op) for d in dots for x in _backward(defs, _dot_operands(d), loop.op)}
            left = [r for r in loads if id(r.op) in feeding and id(r.op) not in relaid]
            if left:
                out.append(SyncLoop(loop, left, True, "partial"))
            continue
        explicit = "tt.num_stages" in (loop.op.tail or "") or "tt.num_stages" in loop.op.text
        if names & set(LOOP_OPS):
            cause = "outer-loop"
        elif (int(_stages(loop)) if explicit else num_stages) <= 1:
            cause = "num_stages"
        elif not has_dot and not explicit:
            cause = "no-dot"
        else:
            cause = "width"
        out.append(SyncLoop(loop, loads, has_dot, cause))
    return out


def _relaid_load(defs: dict[str, Reached], dot: Reached, loop) -> Reached | None:
    """The load whose tile, unchanged but for its layout, the dot's shared-memory operand is written from inside
    the loop: a loaded operand re-laid out through shared memory every iteration (not a tile the loop computes,
    dequantized or scaled)."""
    for operand in _dot_operands(dot):
        alloc = _stored_from_registers(defs, operand, loop)
        src = defs.get(_value(alloc.op.operands[0])) if alloc is not None else None
        while src is not None and src.op.name in LAYOUT_ONLY and src.op.operands:
            src = defs.get(_value(src.op.operands[0]))
        if src is not None and src.op.name == "tt.load" and _within(src.op, loop):
            return src
    return None


def _relaid_loads(defs: dict[str, Reached], inside: list[Reached], loop) -> list[Reached]:
    """The relaid loads of every dot directly in the loop."""
    dots = (r for r in inside if r.op.name in DOTS and _loop_of(r.op) is loop)
    return [load for d in dots if (load := _relaid_load(defs, d, loop))]


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


def _loop_of(op) -> object | None:
    """The innermost loop (scf.for or scf.while) whose region holds `op`."""
    parent = op.parent
    while parent is not None and parent.name not in LOOP_OPS:
        parent = parent.parent
    return parent


def _value(name: str) -> str:
    """`%acc_147#0` (one result of several) and `%acc_147:3` (their definition) as the value `%acc_147`."""
    return re.split(r"[#:]", name, maxsplit=1)[0]


def _defs(ops: list[Reached]) -> dict[str, Reached]:
    """The final TTGIR's values and the op that defines each (block arguments, loop-carried ones too, have none)."""
    return {_value(v): r for r in ops for v in r.op.results}


def _backward(defs: dict[str, Reached], values: Iterable[str], loop) -> list[Reached]:
    """The ops inside `loop` (anywhere when None) that the values are computed from, following operands back to
    where they come from outside it (or from the loop's own carried values)."""
    seen: set[str] = set()
    out: list[Reached] = []
    todo = [_value(v) for v in values]
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        r = defs.get(v)
        if r is None or (loop is not None and not _within(r.op, loop)):
            continue
        out.append(r)
        todo += [_value(o) for o in r.op.operands]
    return out


def _dot_operands(r: Reached) -> tuple[str, ...]:
    """A dot's A and B operands (the accumulator, its third, is not one)."""
    return r.op.operands[:2]


def _stored_from_registers(defs: dict[str, Reached], operand: str, loop) -> Reached | None:
    """The ttg.local_alloc that writes a register tensor into the shared-memory operand `operand` inside `loop`
    (through the views an MMA operand may pass: transpose, reshape, subslice), if one does: then the operand is
    not a multi-buffered copy the pipeliner made, and it is rewritten every iteration."""
    r = defs.get(_value(operand))
    while r is not None and r.op.name in MEMDESC_VIEWS and r.op.operands:
        r = defs.get(_value(r.op.operands[0]))
    if r is not None and r.op.name == "ttg.local_alloc" and r.op.operands and _within(r.op, loop):
        return r
    return None


WHY_SYNC = {
    "while-loop": "the pipeliner walks scf.for loops only: a `while` loop is never pipelined",
    "partial": "the pipeliner made the loop's other loads asynchronous but left these, which feed the dot, "
    "synchronous: under 4 contiguous bytes per thread reach shared memory (lowerLoads)",
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


def _first_with(view: KernelView, test: Callable[[list[Reached]], bool], stage: str = "ttgir") -> PassRef | None:
    """The pass whose output first shows what `test` looks for in the ops (its input did not)."""
    for snap in view.traj.passes():
        if snap.stage == stage and test(view.ops_in(snap)) and not test(view.ops_in(view.before(snap))):
            return PassRef(snap.index, snap.stage, snap.pass_arg)
    return None


def _waited_dots(ops: list[Reached]) -> list[tuple[Reached, Reached, object]]:
    """(wgmma, its wait, their loop) for every warp-group MMA in a loop that the same iteration waits for to
    finish (warp_group_dot_wait {pendings = 0} on its result)."""
    defs = _defs(ops)
    out = []
    for w in ops:
        if w.op.name != "ttng.warp_group_dot_wait" or not re.search(r"pendings = 0\b", w.op.text):
            continue
        loop = _loop_of(w.op)
        for v in w.op.operands:
            d = defs.get(_value(v))
            if loop is not None and d is not None and d.op.name == "ttng.warp_group_dot" and _loop_of(d.op) is loop:
                out.append((d, w, loop))
                break
    return out


FOLDABLE = ("tt.splat", "tt.broadcast")  # a factor of lower rank than the product: per row, per column or scalar
CARRIES = ("arith.addf", "arith.truncf", "arith.extf", "ttg.convert_layout")  # accumulate or convert, nothing else
SCALES = ("arith.mulf", "arith.divf")


def _result_of(wait: Reached, dot: Reached) -> str:
    """The wait's result that is the dot's product (a wait returns each operand it waits on, in order)."""
    name = wait.op.results[0].split(":")[0]
    index = [_value(v) for v in wait.op.operands].index(_value(dot.op.results[0]))
    return f"{name}#{index}" if ":" in wait.op.results[0] else name


def _a_factor(defs: dict[str, Reached], value: str, loop) -> bool:
    """Whether `value` is a factor that folds out of a sum over K: defined outside the loop, or of lower rank than
    the product (splat or broadcast from a row, a column or a scalar), or a product of such factors."""
    r = defs.get(_value(value))
    if r is None or not _within(r.op, loop) or r.op.name in FOLDABLE:
        return True
    if r.op.name in (*SCALES, "ttg.convert_layout"):
        return all(_a_factor(defs, o, loop) for o in r.op.operands)
    return False


def _scaled_product(ops: list[Reached], wait: Reached, dot: Reached, loop) -> bool:
    """Whether the dot's product reaches what the loop carries only through a per-row, per-column or scalar factor
    and the accumulation: the wait is then the scale's, which folds into an operand or after the loop (the kernel's
    math does not need the product inside the iteration, as a softmax on it would)."""
    defs = _defs(ops)
    users: dict[str, list[Reached]] = {}
    for r in ops:
        if _within(r.op, loop):
            for o in r.op.operands:
                users.setdefault(o, []).append(r)
    todo, scaled, seen = [_result_of(wait, dot)], False, set()
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        for u in users.get(v, []):
            if u.op.name == "scf.yield":
                continue
            if u.op.name in SCALES and all(_a_factor(defs, o, loop) for o in u.op.operands if o != v):
                scaled = True
            elif u.op.name not in CARRIES:
                return False
            todo += [x.split(":")[0] for x in u.op.results]
    return scaled


WHY_WAIT = {
    "operand": "an operand is a loaded tile re-laid out into shared memory in the loop, not a multi-buffered copy",
    "scaled-product": "its product is scaled in the loop before it is accumulated, by a factor that could scale an "
    "operand or the result after the loop",
}


def synchronous_wgmma(view: KernelView) -> list[Hazard]:
    """wgmma waits the kernel could avoid. A wait the math needs (the product feeds a softmax or a reduction; an
    operand is computed in the loop, as a dequantized weight is) has no remedy but another formulation of the
    kernel, so it is not a hazard."""
    ops = view.ttgir_ops
    defs = _defs(ops)
    found = []
    pipelined = {id(_loop_of(r.op)) for r in ops if r.op.name in ASYNC_LOADS}
    for dot, wait, loop in _waited_dots(ops):
        if _relaid_load(defs, dot, loop):
            if id(loop) not in pipelined:
                continue  # a loop the pipeliner left alone stores every operand itself: not-pipelined's, one cause once
            cause = "operand"
        elif _scaled_product(ops, wait, dot, loop):
            cause = "scaled-product"
        else:
            continue
        line = dot.line
        introduced = _first_with(view, lambda o: bool(_waited_dots(o)))
        found.append(
            Hazard(
                "synchronous-wgmma",
                view.kernel,
                (line,) if line else (),
                f"line {line}: the wgmma in the loop is waited on to completion in every iteration "
                f"(warp_group_dot_wait pendings = 0): {WHY_WAIT[cause]}",
                cost.WGMMA_WAIT_LATENCY * cost.loop_factor(dot.loop_depth),
                {"waits_in_loop": 1},
                introduced_by=introduced,
                remarks=_remarks(view, introduced),
                cause=cause,
            )
        )
    return found


def operand_relayout(view: KernelView) -> list[Hazard]:
    ops = view.ttgir_ops
    defs = _defs(ops)
    found = []
    for loop in (r for r in ops if r.op.name in LOOP_OPS):
        inside = [r for r in ops if _within(r.op, loop.op)]
        if not {r.op.name for r in inside} & set(ASYNC_LOADS):
            continue  # no loop of the pipeliner's: every operand goes through registers, and not-pipelined says so
        for load in _relaid_loads(defs, inside, loop.op):
            n = load.line
            counts = _machine(view, [n]) if n else {}
            warning = next(iter(view.remarks(RELAYOUT_WARNING)), None)
            warned = _remarks(view, None, RELAYOUT_WARNING)
            found.append(
                Hazard(
                    "operand-relayout-in-loop",
                    view.kernel,
                    (n,) if n else (),
                    f"line {n}: the tile loaded here is written into the MMA's shared-memory operand every iteration "
                    f"({counts.get('mem.shared_store', 0):g} shared stores, {counts.get('sync.barrier', 0):g} "
                    "barriers, weighted by its loop) instead of being copied there asynchronously",
                    cost.EXPOSED_LOAD_LATENCY * cost.loop_factor(load.loop_depth)
                    + cost.weighted(counts, ("sync.barrier", "mem.shared_store", "mem.shared_load")),
                    {k: counts.get(k, 0) for k in ("mem.shared_store", "sync.barrier")},
                    # the pass that chose the operand's shared-memory order says so (AccelerateMatmul's warning)
                    introduced_by=PassRef(warning.snapshot, warning.stage, warning.pass_arg) if warning else None,
                    remarks=warned,
                    cause="order",
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


def int64_division(view: KernelView) -> list[Hazard]:
    if not view.nvidia:
        return []
    lines = _lines_where(view, "ptx", lambda c: c.get("compute.int64_div", 0) > 0)
    if not lines:
        return []
    counts = _machine(view, lines, "ptx")
    n = view.on_lines("ptx", lines, "compute.int64_div")
    return [
        Hazard(
            "int64-index-division",
            view.kernel,
            tuple(lines),
            f"{_fmt(lines)}: {n} 64-bit divisions or remainders per thread (div/rem.s64, each a called routine)",
            cost.INT64_DIVISION * counts.get("compute.int64_div", 0),
            {"compute.int64_div": n},
            introduced_by=view.introducing("compute.int64_div", lines),
            cause="int64",
        )
    ]


def _data_masked_stores(view: KernelView) -> dict[int, Reached]:
    """Line → a tt.store whose mask is computed from loaded values (not only from indices and bounds): it differs
    from element to element, so the store cannot be issued as one vector."""
    ops = view.ttgir_ops
    defs = _defs(ops)
    out = {}
    for r in ops:
        if r.op.name != "tt.store" or len(r.op.operands) < 3 or not r.line:
            continue
        if any(x.op.name == "tt.load" for x in _backward(defs, [r.op.operands[2]], None)):
            out[r.line] = r
    return out


def data_dependent_store_mask(view: KernelView) -> list[Hazard]:
    masked = _data_masked_stores(view)
    found = []
    for n, accs in sorted(_accesses_by_line(view, "narrow").items()):
        stores = [a for a in accs if a.kind == "store"]
        if n not in masked or not stores:
            continue
        a = min(stores, key=lambda x: x.vector_bits or 0)
        width = a.vector_bits or a.element_bits
        found.append(
            Hazard(
                "data-dependent-store-mask",
                view.kernel,
                (n,),
                f"line {n}: the store's mask depends on loaded values, so its contiguous elements go out {width} bits "
                "at a time, one predicated store each (128 possible)",
                _access_cost(view, n, 1 - width / cost.MAX_VECTOR_BITS),
                {"vector_bits": width, "mask_alignment": a.mask_alignment or 0},
                introduced_by=view.introducing("mem.store", [n]),
                cause="mask",
            )
        )
    return found


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
    masked = _data_masked_stores(view)
    for n, accs in sorted(_accesses_by_line(view, "narrow").items()):
        if n in masked:  # data-dependent-store-mask's: the same store, for a reason no hint removes
            accs = [x for x in accs if x.kind != "store"]
            if not accs:
                continue
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
# mutmut can mutate; docs/mutation.md). A cause comes before the symptoms it implies: one_cause_once keeps the
# first name.
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
        "synchronous-wgmma",
        "a warp-group MMA (wgmma) in a loop that the same iteration waits for to complete (warp_group_dot_wait with "
        "pendings = 0): the tensor cores' latency is exposed every iteration instead of overlapping the next "
        "iteration's loads and math, because an operand is rewritten in the loop or the result is used in it",
        synchronous_wgmma,
    ),
    Detector(
        "operand-relayout-in-loop",
        "an MMA operand loaded into registers and written into shared memory (ttg.local_alloc) in every iteration "
        "of a loop whose other loads are asynchronous: its order in global memory is not one the asynchronous copy "
        "can hand to the MMA, so it takes a synchronous load and a shared-memory round trip per iteration",
        operand_relayout,
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
        "int64-index-division",
        "64-bit integer division or remainder per element (div.s64, rem.s64 in the PTX), usually index arithmetic "
        "in int64: no instruction does it, ptxas calls a routine of about forty instructions for each one",
        int64_division,
    ),
    Detector(
        "data-dependent-store-mask",
        "a store whose mask is computed from loaded data: the mask differs from element to element, so the store "
        "that would be one 128-bit vector per thread is issued as one predicated scalar store per element",
        data_dependent_store_mask,
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
