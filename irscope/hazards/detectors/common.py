"""What several detectors read: kernel lines whose counters pass a test, machine-code counts on lines weighted by
the loops around them, the compiler's remarks at a pass, index-producing reductions, accesses by line."""

from __future__ import annotations

from collections.abc import Callable

from irscope.access import Access
from irscope.hazards import cost
from irscope.hazards.model import PassRef
from irscope.hazards.view import KernelView, Reached


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
    return tuple(
        " ".join((r.message, *r.notes)) for r in view.remarks(needle) if at is None or r.snapshot == at.snapshot
    )


def index_reductions(view: KernelView) -> tuple[list[int], list[int]]:
    """Lines of index-producing reductions, and lines of the reductions that consume their index (the
    argmax-then-mask idiom: the index selects what the next reduction excludes, so that reduction exists
    only because of the index)."""
    lines = lines_where(view, "ttgir", lambda c: c.get("compute.reduce_index", 0) > 0)
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
