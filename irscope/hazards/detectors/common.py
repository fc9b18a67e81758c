"""What several detectors read: kernel lines whose counters pass a test, machine-code counts on lines weighted by
the loops around them, the compiler's remarks at a pass, index-producing reductions, accesses by line, and the
final TTGIR's values, loops and dot operands."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from irscope.access import Access
from irscope.hazards import cost
from irscope.hazards.model import PassRef
from irscope.hazards.view import LOOP_OPS, KernelView, Reached

ASYNC_LOADS = ("ttg.async_copy_global_to_local", "ttng.async_tma_copy_global_to_local", "tt.descriptor_load")


DOTS = ("tt.dot", "ttng.warp_group_dot")


MEMDESC_VIEWS = ("ttg.memdesc_trans", "ttg.memdesc_reshape", "ttg.memdesc_subslice", "ttg.convert_layout")


LAYOUT_ONLY = ("ttg.convert_layout", "tt.trans", "tt.reshape", "tt.expand_dims", "tt.broadcast")


def lines_where(view: KernelView, stage: str, test: Callable[[dict[str, int]], bool]) -> list[int]:
    return sorted(n for n, c in view.lines(stage).items() if test(c))


def machine_counts(view: KernelView, lines: list[int], stage: str | None = None) -> dict[str, float]:
    """Machine-code counters on `lines` (of `stage`, default the view's machine stage), each weighted by the
    loops around its line."""
    at = view.lines(stage or view.machine_stage)
    out: dict[str, float] = {}
    for n in lines:
        factor = cost.loop_factor(view.loop_depth(n))
        for k, v in at.get(n, {}).items():
            out[k] = out.get(k, 0.0) + v * factor
    return out


def fmt_lines(lines: list[int] | tuple[int, ...]) -> str:
    return ("line " if len(lines) == 1 else "lines ") + ", ".join(map(str, lines))


def remarks_at(view: KernelView, at: PassRef | None, needle: str = "") -> tuple[str, ...]:
    """The compiler's remarks about it: those printed by pass `at` (any pass when None) holding `needle`."""
    return tuple(r.text for r in view.remarks(needle) if at is None or r.snapshot == at.snapshot)


def index_reductions(view: KernelView) -> tuple[list[int], list[int]]:
    """Lines of index-producing reductions, and lines of the reductions that consume their index (the
    argmax-then-mask idiom: the index selects what the next reduction excludes, so that reduction exists
    only because of the index)."""
    lines = lines_where(view, "ttgir", lambda c: c.get("compute.reduce_index", 0) > 0)
    users = users_of(view.ttgir_ops)
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


def accesses_by_line(view: KernelView, verdict: str) -> dict[int, list[Access]]:
    out: dict[int, list[Access]] = {}
    for a in view.accesses:
        if a.line and a.shape and (a.verdict == verdict or (verdict == "uncoalesced" and nowhere_contiguous(a))):
            out.setdefault(a.line, []).append(a)
    return out


def nowhere_contiguous(a: Access) -> bool:
    """A gather (offsets loaded along the thread-fast axis) with no contiguous dimension at all: Coalesce, which
    lays threads along the most contiguous dimension, has none to choose, so it is scattered like a strided one."""
    return a.verdict == "gather" and len(a.contiguities) > 1 and max(a.contiguities) == 1


def access_cost(view: KernelView, line: int, factor: float) -> float:
    counts = machine_counts(view, [line])
    issued = (
        counts.get("mem.load", 0) * cost.WEIGHTS["mem.load"] + counts.get("mem.store", 0) * cost.WEIGHTS["mem.store"]
    )
    return issued * factor


def within(op, ancestor) -> bool:
    parent = op.parent
    while parent is not None:
        if parent is ancestor:
            return True
        parent = parent.parent
    return False


def loop_of(op) -> object | None:
    """The innermost loop (scf.for or scf.while) whose region holds `op`."""
    parent = op.parent
    while parent is not None and parent.name not in LOOP_OPS:
        parent = parent.parent
    return parent


def value_of(name: str) -> str:
    """`%acc_147#0` (one result of several) and `%acc_147:3` (their definition) as the value `%acc_147`."""
    return re.split(r"[#:]", name, maxsplit=1)[0]


def defs_of(ops: list[Reached]) -> dict[str, Reached]:
    """The final TTGIR's values and the op that defines each (block arguments, loop-carried ones too, have none)."""
    return {value_of(v): r for r in ops for v in r.op.results}


def users_of(ops: list[Reached]) -> dict[str, list[Reached]]:
    """Each value's users among `ops` (an op once per operand that names the value)."""
    users: dict[str, list[Reached]] = {}
    for r in ops:
        for v in r.op.operands:
            users.setdefault(v, []).append(r)
    return users


def backward(defs: dict[str, Reached], values: Iterable[str], loop) -> list[Reached]:
    """The ops inside `loop` (anywhere when None) that the values are computed from, following operands back to
    where they come from outside it (or from the loop's own carried values)."""
    seen: set[str] = set()
    out: list[Reached] = []
    todo = [value_of(v) for v in values]
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        r = defs.get(v)
        if r is None or (loop is not None and not within(r.op, loop)):
            continue
        out.append(r)
        todo += [value_of(o) for o in r.op.operands]
    return out


def dot_operands(r: Reached) -> tuple[str, ...]:
    """A dot's A and B operands (the accumulator, its third, is not one)."""
    return r.op.operands[:2]


def stored_from_registers(defs: dict[str, Reached], operand: str, loop) -> Reached | None:
    """The ttg.local_alloc that writes a register tensor into the shared-memory operand `operand` inside `loop`
    (through the views an MMA operand may pass: transpose, reshape, subslice), if one does: then the operand is
    not a multi-buffered copy the pipeliner made, and it is rewritten every iteration."""
    r = defs.get(value_of(operand))
    while r is not None and r.op.name in MEMDESC_VIEWS and r.op.operands:
        r = defs.get(value_of(r.op.operands[0]))
    if r is not None and r.op.name == "ttg.local_alloc" and r.op.operands and within(r.op, loop):
        return r
    return None


def relaid_load(defs: dict[str, Reached], dot: Reached, loop) -> Reached | None:
    """The load whose tile, unchanged but for its layout, the dot's shared-memory operand is written from inside
    the loop: a loaded operand re-laid out through shared memory every iteration (not a tile the loop computes,
    dequantized or scaled)."""
    for operand in dot_operands(dot):
        alloc = stored_from_registers(defs, operand, loop)
        src = defs.get(value_of(alloc.op.operands[0])) if alloc is not None else None
        while src is not None and src.op.name in LAYOUT_ONLY and src.op.operands:
            src = defs.get(value_of(src.op.operands[0]))
        if src is not None and src.op.name == "tt.load" and within(src.op, loop):
            return src
    return None


def relaid_loads(defs: dict[str, Reached], inside: list[Reached], loop) -> list[Reached]:
    """The relaid loads of every dot directly in the loop."""
    dots = (r for r in inside if r.op.name in DOTS and loop_of(r.op) is loop)
    return [load for d in dots if (load := relaid_load(defs, d, loop))]


def first_with(view: KernelView, test: Callable[[list[Reached]], bool], stage: str = "ttgir") -> PassRef | None:
    """The pass whose output first shows what `test` looks for in the ops (its input did not)."""
    for snap in view.traj.passes():
        if snap.stage == stage and test(view.ops_in(snap)) and not test(view.ops_in(view.before(snap))):
            return PassRef(snap.index, snap.stage, snap.pass_arg)
    return None


def data_masked_stores(view: KernelView) -> dict[int, Reached]:
    """Line → a tt.store whose mask is computed from loaded values (not only from indices and bounds): it differs
    from element to element, so the store cannot be issued as one vector."""
    ops = view.ttgir_ops
    defs = defs_of(ops)
    out = {}
    for r in ops:
        if r.op.name != "tt.store" or len(r.op.operands) < 3 or not r.line:
            continue
        if any(x.op.name == "tt.load" for x in backward(defs, [r.op.operands[2]], None)):
            out[r.line] = r
    return out
