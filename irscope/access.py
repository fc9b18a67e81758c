"""Why a global access is narrow: every load, store and atomic of a kernel, classified from the compile.

A narrow access has one of a few causes, and each asks for a different fix. Triton decides the width in
two places from the same AxisInfo numbers (irscope.axisinfo): Coalesce gives each thread
perThread = min(alignment, contiguity, 128 / bits) contiguous elements along the most contiguous
dimension, and the load/store lowering emits vectors of vec = min(128 / bits, contiguity, alignment,
mask alignment) elements, where alignment = min(divisibility, contiguity). So:

* uncoalesced: contiguity 1 along the thread-fast axis, because a stride multiplies the range there
  (`offs * n_cols`): neighbours are far apart and no layout or hint makes them vectors;
* gather: the offsets along that axis come from loaded values, so contiguity cannot be known;
* narrow: the addresses are contiguous but divisibility (an argument not specialized as a multiple of
  16, an odd offset), the mask's constancy, or the layout caps the vector below 128 bits;
* scalar: one element per program through a scalar pointer (or one address for the whole tensor);
* wide: 128-bit vectors, or as wide as the thread's element count allows.

`accesses` analyses the final TTGIR (TTIR when the compile stopped earlier), takes the vector width the
compile actually emitted from the LLVM-dialect module (the inline `ld.global.v4.b32`, `cp.async … 0x10`,
`llvm.load … -> vector<4xf32>`, matched to the access by its full source location), and says why.
Tensor-descriptor (TMA) accesses are not pointer tensors and are not listed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from irscope.axisinfo import (
    Analysis,
    AxisInfo,
    Fact,
    OpView,
    analyze,
    element_bits,
    name_of,
    pointee_bits,
    tensor_types,
)
from irscope.parse.layouts import blocked
from irscope.parse.locations import Frame
from irscope.parse.mlir import scan_ops
from irscope.trajectory import MLIR, Trajectory

VERDICTS = ("uncoalesced", "gather", "narrow", "runs", "scalar", "wide")  # worst first
MAX_VECTOR_BITS = 128  # the widest global access of one thread (ld.global.v4.b32, global_load_dwordx4)


@dataclass(frozen=True)
class Access:
    kind: str  # load | store | atomic
    op: str  # tt.load, tt.store, tt.atomic_rmw, ttg.async_copy_global_to_local, amdg.buffer_load, …
    line: int  # kernel source line (0: no location in the kernel's file)
    shape: tuple[int, ...]  # () for a scalar pointer
    element_bits: int
    elements_per_thread: int
    contiguity: int  # contiguous elements along the fastest dimension
    divisibility: int  # of the address along the fastest dimension, in elements
    vector_bits: int | None  # bits per instruction the compile emitted; None when no lowered IR was captured
    verdict: str  # one of VERDICTS
    why: str
    dim: int | None  # the fastest dimension whose addresses vary (None: scalar)
    mask_alignment: int | None  # elements the mask is constant over along `dim` (None: no mask)
    contiguities: tuple[int, ...] = ()  # contiguous elements along each dimension (1 everywhere: no coalescing order)


class AccessError(ValueError):
    """The trajectory has no Triton IR to analyse."""


# ---------------------------------------------------------------------------------------------- memory ops


@dataclass(frozen=True)
class MemoryOp:
    """Where a memory op keeps its address and mask among its operands."""

    kind: str
    address: Callable[[OpView], str | None]  # the tensor of pointers, or a buffer op's offsets
    mask: Callable[[OpView], str | None]
    base: Callable[[OpView], str | None] | None = None  # a buffer op's scalar base pointer


def _nth(i: int) -> Callable[[OpView], str | None]:
    return lambda v: v.operands[i] if len(v.operands) > i else None


def _keyword(word: str) -> Callable[[OpView], str | None]:
    pattern = re.compile(rf"\b{word} (%[\w$.#-]+)")
    return lambda v: v.key(m.group(1)) if (m := pattern.search(v.body)) else None


_BUFFER = re.compile(r"(%[\w$.#-]+)\[(%[\w$.#-]+)\](?:,\s*(%[\w$.#-]+))?")  # base[offsets], mask


def _buffer(group: int) -> Callable[[OpView], str | None]:
    return lambda v: v.key(m.group(group)) if (m := _BUFFER.search(v.body)) and m.group(group) else None


_AMD_BUFFER = dict(address=_buffer(2), mask=_buffer(3), base=_buffer(1))
MEMORY_OPS: dict[str, MemoryOp] = {
    "tt.load": MemoryOp("load", _nth(0), _nth(1)),
    "tt.store": MemoryOp("store", _nth(0), _nth(2)),
    "tt.atomic_rmw": MemoryOp("atomic", _nth(0), _nth(2)),
    "tt.atomic_cas": MemoryOp("atomic", _nth(0), lambda v: None),
    "ttg.async_copy_global_to_local": MemoryOp("load", _nth(0), _keyword("mask")),
    "amdg.buffer_load": MemoryOp("load", **_AMD_BUFFER),
    "amdg.buffer_store": MemoryOp("store", **_AMD_BUFFER),
    "amdg.buffer_atomic_rmw": MemoryOp("atomic", **_AMD_BUFFER),
}


def _address_fact(a: Analysis, view: OpView, spec: MemoryOp, address: str, elem_bytes: int) -> Fact | None:
    """The AxisInfo of the accessed addresses; for a buffer op, of base + offsets (as tt.addptr would give)."""
    if spec.base is None:
        return a.fact(address)
    base_key = spec.base(view)
    if base_key is None:
        return None
    base, offs = a.fact(base_key).info, a.fact(address)
    o = offs.info
    div = tuple(math.gcd(base.divisibility[0], o.divisibility[d] * elem_bytes) for d in range(o.rank))
    return Fact(AxisInfo(o.contiguity, div, o.constancy), offs.shape, pointer=True)


# ---------------------------------------------------------------------------------------------- layouts


@dataclass(frozen=True)
class Layout:
    order: tuple[int, ...] | None  # fastest dimension first (None: not a blocked layout)
    size_per_thread: tuple[int, ...] | None
    elements_per_thread: int


_MODULE_INT = re.compile(r'"ttg\.(num-warps|threads-per-warp)" = (\d+)')


def layout_of(encoding: str | None, shape: tuple[int, ...], aliases: dict[str, str], threads: int) -> Layout:
    """A blocked layout's order and per-thread elements (sizePerThread × repetitions per dimension);
    other layouts: the element count spread over the threads."""
    fields = (blocked(encoding, aliases) if encoding else None) or {}
    spt, tpw, wpc = (fields.get(k, []) for k in ("sizePerThread", "threadsPerWarp", "warpsPerCTA"))
    if not len(spt) == len(tpw) == len(wpc) == len(shape) or not shape:
        return Layout(None, None, max(1, -(-math.prod(shape) // threads)))
    per = [s * -(-n // (s * t * w)) for n, s, t, w in zip(shape, spt, tpw, wpc)]
    return Layout(tuple(fields.get("order", range(len(shape)))), tuple(spt), math.prod(per))


# ---------------------------------------------------------------------------------------------- emitted widths

_ASM = re.compile(r'"((?:[^"\\]|\\.)*)"')
_ESCAPE = re.compile(r"\\([0-9A-Fa-f]{2})")  # MLIR string escapes: \0A\09 between instructions
_PTX_ACCESS = re.compile(r"\b(ld|st|atom|red)\.global((?:\.[\w:]+)*)")
_CP_ASYNC = re.compile(r"\bcp\.async\.c[ag]\.shared\.global[\w.:]*\s*\[[^\]]*\],\s*\[[^\]]*\],\s*(0x[0-9a-fA-F]+|\d+)")
_PTX_VEC = re.compile(r"\.v(\d+)\b")
_PTX_TYPE = re.compile(r"\.(?:b|f|s|u|bf)(\d+)(x2)?\b")
_VECTOR_TYPE = re.compile(r"vector<(\d+)x[a-z]+(\d+)>")
_SCALAR_TYPE = re.compile(r"\b(?:i|f|bf)(\d+)\b")
_LLVM_KIND = {
    "llvm.load": "load",
    "llvm.store": "store",
    "llvm.atomicrmw": "atomic",
    "llvm.cmpxchg": "atomic",
    "rocdl.raw.ptr.buffer.load": "load",
    "rocdl.raw.ptr.buffer.store": "store",
    **{
        f"rocdl.raw.ptr.buffer.atomic.{k}": "atomic"
        for k in ("fadd", "fmax", "smax", "smin", "umax", "umin", "cmpswap")
    },
}
_PTX_KIND = {"ld": "load", "st": "store", "atom": "atomic", "red": "atomic"}


def _type_bits(text: str) -> int | None:
    if m := _VECTOR_TYPE.search(text):
        return int(m.group(1)) * int(m.group(2))
    m = _SCALAR_TYPE.search(text)
    return int(m.group(1)) if m else None


def _asm_accesses(asm: str) -> list[tuple[str, int]]:
    out = []
    for m in _PTX_ACCESS.finditer(asm):
        vec = _PTX_VEC.search(m.group(2))
        width = _PTX_TYPE.findall(m.group(2))
        bits = int(width[-1][0]) * (2 if width[-1][1] else 1) if width else 32
        out.append((_PTX_KIND[m.group(1)], bits * (int(vec.group(1)) if vec else 1)))
    out.extend(("load", int(m.group(1), 0) * 8) for m in _CP_ASYNC.finditer(asm))
    return out


def emitted_widths(text: str) -> dict[tuple[Frame, ...], list[tuple[str, int]]]:
    """Global memory instructions of an LLVM-dialect module: source frames → [(kind, bits), …]."""
    out: dict[tuple[Frame, ...], list[tuple[str, int]]] = {}
    for op in scan_ops(text, {"llvm.inline_asm", *_LLVM_KIND}):
        if op.name == "llvm.inline_asm":
            m = _ASM.search(op.text)
            found = _asm_accesses(_ESCAPE.sub(lambda e: chr(int(e.group(1), 16)), m.group(1))) if m else []
        else:
            types = op.text.split(" : ", 1)[-1] if " : " in op.text else ""
            if op.name.startswith("llvm.") and "!llvm.ptr<1>" not in types:
                continue  # shared or local memory
            bits = _type_bits(re.sub(r"!llvm\.ptr<\d+>", "", types.split("->")[-1]))
            found = [(_LLVM_KIND[op.name], bits)] if bits else []
        if found and op.location.frames:
            out.setdefault(op.location.frames, []).extend(found)
    return out


def _lowered_module(traj: Trajectory) -> str | None:
    """The last LLVM-dialect snapshot: where every instruction still carries its op's full location."""
    mlir = [s for s in traj.stage_snapshots("llir") if s.kind == MLIR] if "llir" in traj.stages else []
    return mlir[-1].text if mlir else None


# ---------------------------------------------------------------------------------------------- explanations

# Ops through which an address's terms pass unchanged in meaning: what varies in the result varies in them.
_PASS_THROUGH = {
    "arith.extsi",
    "arith.extui",
    "arith.trunci",
    "ttg.convert_layout",
    "tt.bitcast",
    "tt.broadcast",
    "tt.splat",
    "tt.expand_dims",
    "tt.addptr",
    "arith.addi",
    "arith.subi",
}
_LOADS = ("tt.load", "amdg.buffer_load")


@dataclass
class _Context:
    a: Analysis
    widths: dict[tuple[Frame, ...], list[tuple[str, int]]] | None
    threads: int
    kernel_file: str | None

    def line(self, view: OpView) -> int:
        frame = view.op.location.user_frame(self.kernel_file)
        return frame.line if frame is not None and frame.file == self.kernel_file else 0

    def describe(self, value: str) -> str:
        """A leaf of an address's def chain, as the kernel's author would name it."""
        a = self.a
        if value in a.args:
            return name_of(value)
        view = a.defs.get(value)
        if view is None:
            return "a block argument"
        if view.name == "arith.constant":
            c = a.fact(value).info.constant
            return f"the constant {c}" if c is not None else "a constant"
        if view.name in _LOADS:
            line = self.line(view)
            return "values loaded" + (f" on line {line}" if line else "")
        if view.name == "tt.get_program_id":
            return _PROGRAM_ID
        if view.name == "tt.make_range":
            return _RANGE
        return view.name

    def emitted(self, view: OpView, kind: str) -> int | None:
        """The narrowest global instruction lowered from this op (None: no lowered IR, or none found)."""
        if self.widths is None or not view.op.location.frames:
            return None
        found = self.widths.get(view.op.location.frames, [])
        same = [b for k, b in found if k == kind] or [b for _, b in found]
        return min(same) if same else None


# Arithmetic whose result's contiguity AxisInfo derives from its operands: where an address stops being
# contiguous, the cause is at or below one of these (the value operands only, for select).
_DERIVED = _PASS_THROUGH | {
    "arith.muli",
    "arith.divsi",
    "arith.divui",
    "arith.remsi",
    "arith.remui",
    "arith.shli",
    "arith.shrsi",
    "arith.shrui",
    "arith.maxsi",
    "arith.maxui",
    "arith.minsi",
    "arith.minui",
    "arith.select",
}


def _operand_dim(view: OpView, d: int, rank: int) -> int | None:
    """The operand dimension behind result dimension d (None: the operand does not vary along d)."""
    if view.name == "tt.splat" or rank == 0:
        return None
    if view.name == "tt.expand_dims":
        axis = view.int_attr("axis") or 0
        return None if d == axis else d - (d > axis)
    return d if d < rank else None


def _same_dim(d: int, rank: int) -> int | None:
    """A value flowing into a block argument or result: the same dimension, where it has one."""
    return d if d < rank else None


def _varies_along(f: Fact, d: int) -> bool:
    """Not constant along d."""
    return f.info.constancy[d] < f.shape[d]


def _scattered_along(f: Fact, d: int) -> bool:
    """Varies along d (not constant there) without being contiguous."""
    return f.info.contiguity[d] == 1 and _varies_along(f, d)


def _breakers(a: Analysis, value: str, d: int, seen: set[str] | None = None) -> list[OpView | None]:
    """Where the address stops being contiguous along d: descending into every operand that varies there
    without being contiguous (through loops and branches, into the values that flow in), down to the ops whose
    varying operands are all contiguous (the `offs * stride`, the `offs // n`, the `n - 1 - offs`) or that
    AxisInfo does not model (a load of indices, a scan). None stands for a block argument nothing flows into."""
    seen = seen if seen is not None else set()
    seen.add(value)
    view = a.defs.get(value)
    flow = value in a.flows
    if flow:
        operands = a.flows[value]
    elif view is not None and view.name in _DERIVED:
        operands = view.operands[1:] if view.name == "arith.select" else view.operands
    else:
        return [view]
    found: list[OpView | None] = []
    for operand in operands:
        f = a.fact(operand)
        od = _operand_dim(view, d, len(f.shape)) if view is not None and not flow else _same_dim(d, len(f.shape))
        if operand not in seen and od is not None and _scattered_along(f, od):
            found += [b for b in _breakers(a, operand, od, seen) if b not in found]
    return found or [view]


def _stride(ctx: _Context, view: OpView, d: int) -> str:
    """The factor of `offs * stride` that is uniform along d, as the reader wrote it: an argument, a constant."""
    a = ctx.a
    for operand in view.operands:
        f = a.fact(operand)
        od = _operand_dim(view, d, len(f.shape))
        if od is not None and _varies_along(f, od):
            continue  # the varying factor
        return _uniform(ctx, operand)
    return "a runtime value"


def _uniform(ctx: _Context, value: str) -> str:
    """A value uniform along a dimension, named by what it was splat, broadcast or widened from."""
    while (v := ctx.a.defs.get(value)) is not None and v.name in ("tt.splat", "tt.broadcast", "arith.extsi"):
        value = v.operands[0]
    return ctx.describe(value)


_RANGE, _PROGRAM_ID = "a range", "the program id"
_INCIDENTAL = (_RANGE, _PROGRAM_ID)


def _weak(ctx: _Context, value: str, d: int, need: int, elem_bytes: int, seen: set[str] | None = None) -> list[str]:
    """The leaves that cost an address its divisibility along d: descending through sums, products, loops and
    branches into the terms divisible by fewer than `need` elements, down to arguments, loads and constants."""
    seen = seen if seen is not None else set()
    seen.add(value)
    f = ctx.a.fact(value)
    if f.info.divisibility[d if f.shape else 0] >= need * (elem_bytes if f.pointer else 1):
        return []
    view = ctx.a.defs.get(value)
    if value in ctx.a.flows:
        operands = ctx.a.flows[value]
    elif view is not None and view.name in _PASS_THROUGH | {"arith.muli"}:
        operands = view.operands
    else:
        return [ctx.describe(value)]
    out: list[str] = []
    cycle = False
    for operand in operands:
        if operand in seen:
            cycle = True  # a loop's own previous value: what it adds is found where the loop started
            continue
        g = ctx.a.fact(operand)
        od: int | None = 0
        if g.shape:
            od = _operand_dim(view, d, len(g.shape)) if view is not None and value not in ctx.a.flows else d
        if od is None and max(g.info.contiguity) > 1:  # expand_dims of a range: its starts count as odd
            found = [_RANGE]
        elif od is None:  # expand_dims: the new axis is as divisible as the least divisible source dimension
            found = _weak(ctx, operand, g.info.divisibility.index(min(g.info.divisibility)), need, elem_bytes, seen)
        else:
            found = _weak(ctx, operand, od, need, elem_bytes, seen)
        out += [s for s in found if s not in out]
    # a range or a program id is weak only until multiplied by something divisible: name that instead
    named = [s for s in out if s not in _INCIDENTAL]
    return named or out or ([] if cycle else [ctx.describe(value)])


def _mask_weak(ctx: _Context, value: str, d: int, need: int, seen: set[str] | None = None) -> list[str]:
    """What makes a mask change within runs shorter than `need` along d: through and/or and broadcasts to
    the comparisons that do, then to the terms of their operands divisible by less (`offs < n`: n)."""
    seen = seen if seen is not None else set()
    seen.add(value)
    f = ctx.a.fact(value)
    if f.shape and f.info.constancy[d] >= need:
        return []
    view = ctx.a.defs.get(value)
    if view is None or view.name not in _PASS_THROUGH | {"arith.andi", "arith.ori", "arith.xori", "arith.cmpi"}:
        return [ctx.describe(value)]
    out: list[str] = []
    for operand in view.operands:
        g = ctx.a.fact(operand)
        od = _operand_dim(view, d, len(g.shape)) if g.shape else 0
        if operand in seen or od is None:
            continue
        if view.name == "arith.cmpi":
            found = _weak(ctx, operand, od, need, 1) if g.info.divisibility[od] < need else []
        else:
            found = _mask_weak(ctx, operand, od, need, seen)
        out += [s for s in found if s not in out]
    return [s for s in out if s not in _INCIDENTAL] or out


# ---------------------------------------------------------------------------------------------- classification


def _fastest_dim(fact: Fact, layout: Layout) -> int | None:
    """The layout's fastest dimension along which addresses vary. Without a layout (TTIR), the most
    contiguous one, as Coalesce orders them (argSort of contiguity, stable)."""
    rank = len(fact.shape)
    order = layout.order or tuple(sorted(range(rank), key=lambda d: -fact.info.contiguity[d]))
    for d in order:
        if d < rank and fact.shape[d] > 1 and fact.info.constancy[d] < fact.shape[d]:
            return d
    return None


@dataclass(frozen=True)
class _Width:
    """The numbers the lowering takes its vector width from, along the fastest dimension, in elements."""

    bits: int
    contiguity: int
    divisibility: int
    mask_alignment: int | None
    per_thread: int | None  # the layout's contiguous elements per thread (sizePerThread)
    elements_per_thread: int
    size: int  # the tensor's extent along the dimension

    @property
    def max_vec(self) -> int:
        return max(MAX_VECTOR_BITS // self.bits, 1)

    @property
    def predicted(self) -> int:
        """vec = min(128 / bits, contigPerThread, alignment = min(divisibility, contiguity), mask alignment)."""
        caps = [self.max_vec, self.divisibility, self.contiguity, self.per_thread, self.mask_alignment]
        return min(c for c in caps if c is not None)

    @property
    def ceiling(self) -> int:
        """Elements one instruction could move at best: 128 bits' worth, unless the thread holds fewer."""
        return min(self.max_vec, self.elements_per_thread, self.size)


def _classify(ctx: _Context, view: OpView, spec: MemoryOp) -> Access | None:
    a = ctx.a
    if spec.base is not None:  # the value's type names the elements; the base pointer's type is not printed
        t = next(iter(tensor_types(view.types)), None)
        bits = element_bits(t.element) if t else 32
    else:
        t = next((t for t in tensor_types(view.types) if t.element.startswith("!tt.ptr")), None)
        bits = pointee_bits(view.types) or 32
    elem_bytes = max(bits // 8, 1)
    encoding, shape = (t.encoding, t.shape) if t else (None, ())
    address, mask_name = spec.address(view), spec.mask(view)
    fact = _address_fact(a, view, spec, address, elem_bytes) if address is not None else None
    if address is None or fact is None:
        return None
    if len(fact.shape) != len(shape):  # an address the analysis could not follow (a while loop's argument)
        fact = Fact(AxisInfo.pessimistic(max(len(shape), 1)), shape, pointer=True)
    layout = layout_of(encoding, shape, a.module.aliases, ctx.threads)
    emitted = ctx.emitted(view, spec.kind)
    d = _fastest_dim(fact, layout) if shape else None
    scalar = Access(  # the scalar case; the others replace its numbers and verdict
        kind=spec.kind,
        op=view.name,
        line=ctx.line(view),
        shape=shape,
        element_bits=bits,
        elements_per_thread=layout.elements_per_thread if shape else 1,
        contiguity=1,
        divisibility=max(fact.info.divisibility[0] // elem_bytes, 1),
        vector_bits=emitted,
        verdict="scalar",
        why="a scalar pointer: one element per program" if not shape else "every element reads one address",
        dim=None,
        mask_alignment=None,
    )
    if d is None:
        return scalar
    mask = a.fact(mask_name) if mask_name else None
    w = _Width(
        bits,
        min(fact.info.contiguity[d], shape[d]),
        min(max(fact.info.divisibility[d] // elem_bytes, 1), MAX_VECTOR_BITS),
        min(mask.info.constancy[d], shape[d]) if mask is not None and mask.info.rank == fact.info.rank else None,
        layout.size_per_thread[d] if layout.size_per_thread else None,
        scalar.elements_per_thread,
        shape[d],
    )
    access = replace(
        scalar,
        contiguity=w.contiguity,
        divisibility=w.divisibility,
        dim=d,
        mask_alignment=w.mask_alignment,
        contiguities=tuple(min(c, n) for c, n in zip(fact.info.contiguity, shape)),
    )
    if w.contiguity == 1:
        verdict, why = _scattered(ctx, address, d)
        return replace(access, verdict=verdict, why=why)
    got = emitted if emitted is not None else w.predicted * bits
    source = "" if emitted is not None else " (predicted: no lowered IR captured)"
    if got >= w.ceiling * bits:
        if got >= MAX_VECTOR_BITS:
            why = f"{got}-bit vectors{source}: contiguity {w.contiguity}, divisibility {w.divisibility} along dim {d}"
        else:
            why = f"{got}-bit accesses{source}: each thread holds only {w.ceiling} element(s) of this access"
        return replace(access, verdict="wide", why=why)
    base = spec.base(view) if spec.base else None
    why = f"{got}-bit accesses{source}: " + "; ".join(_caps(ctx, w, got, address, base, mask_name, d, elem_bytes))
    return replace(access, verdict="narrow", why=why)


# Ops through which offsets that move by at most one element between neighbours still do, given that their other
# operands are uniform along the dimension: a shift by a uniform amount, a widening, a remainder (which wraps to 0
# once per period), the pointer they are added to.
_STEP_KEEPING = ("arith.addi", "arith.subi", "arith.extsi", "arith.extui", "arith.remsi", "arith.remui", "tt.addptr")
_DIVISIONS = ("arith.divsi", "arith.divui")


def _divided_range(a: Analysis, value: str, d: int) -> OpView | None:
    """The division that makes `value` a run-length index along d: a contiguous index divided by a value uniform
    along d (`offs // HW`, `pos // PAGE`), reached only through ops that keep its step at most one element
    (`(offs // HW) % C`, `base + offs // HW`). Neighbours then read the same or the next element: a broadcast within
    each run, fewer addresses than a contiguous access, not a stride apart. AxisInfo gives it contiguity 1 (and,
    for a runtime divisor, constancy 1), so without this it reads as uncoalesced."""
    view = a.defs.get(value)
    while view is not None:
        varying = []
        for operand in view.operands:
            f = a.fact(operand)
            od = _operand_dim(view, d, len(f.shape))
            if od is not None and _varies_along(f, od):
                varying.append((operand, f, od))
        if len(varying) != 1:
            return None
        operand, f, od = varying[0]
        if view.name in _DIVISIONS:
            return view if operand == view.operands[0] and f.info.contiguity[od] == f.shape[od] else None
        if view.name not in _STEP_KEEPING or (
            view.name in ("arith.remsi", "arith.remui", "arith.subi") and operand != view.operands[0]
        ):
            return None
        view, d = a.defs.get(operand), od
    return None


def _scattered(ctx: _Context, address: str, d: int) -> tuple[str, str]:
    """Contiguity 1 along the fastest dimension: a gather when loaded values vary there, runs when the offsets are
    a contiguous index divided by a uniform value, else uncoalesced."""
    if (division := _divided_range(ctx.a, address, d)) is not None:
        line = ctx.line(division)
        return "runs", (
            f"dim {d} offsets are a contiguous index divided by {_uniform(ctx, division.operands[1])}"
            f"{f' (line {line})' if line else ''}: neighbours read the same or the next element"
        )
    breakers = _breakers(ctx.a, address, d)
    loads = [b for b in breakers if b is not None and b.name in _LOADS and b.result_shape]
    if loads:
        lines = sorted({ctx.line(b) for b in loads} - {0})
        where = f" on line {', '.join(map(str, lines))}" if lines else ""
        return "gather", f"dim {d} offsets are values loaded{where}: their contiguity cannot be known"
    causes, opaque = [], []
    for b in breakers:
        if b is not None and b.name in ("arith.muli", "arith.shli"):
            by = "shifted left" if b.name == "arith.shli" else "multiplied"
            causes.append(f"the contiguous offsets are {by} by {_stride(ctx, b, d)}, a stride apart")
        elif b is not None:
            line = ctx.line(b)
            opaque.append(f"{b.name}{f' (line {line})' if line else ''}")
        else:
            opaque.append("a block argument")
    if opaque:
        causes.append(f"offsets through {', '.join(dict.fromkeys(opaque))} are not provably contiguous")
    return "uncoalesced", f"contiguity 1 along dim {d}: " + "; ".join(dict.fromkeys(causes))


def _caps(
    ctx: _Context, w: _Width, got: int, address: str, base: str | None, mask: str | None, d: int, elem_bytes: int
) -> list[str]:
    """What holds the width below its ceiling, each with what set it."""
    need = w.ceiling
    caps = []
    if w.divisibility < need:
        found = _weak(ctx, address, d, need, elem_bytes) + (_weak(ctx, base, 0, need, elem_bytes) if base else [])
        weak = ", ".join(list(dict.fromkeys(found))[:4] or ["the address"])
        caps.append(f"address divisible by only {w.divisibility} element(s) along dim {d} (from {weak})")
    if w.mask_alignment is not None and w.mask_alignment < need and mask is not None:
        weak = ", ".join(_mask_weak(ctx, mask, d, need)[:4]) or "its comparison"
        caps.append(f"mask constant over runs of only {w.mask_alignment} element(s) (from {weak})")
    if w.contiguity < need:
        caps.append(f"runs of only {w.contiguity} contiguous element(s) along dim {d}")
    # Coalesce derives sizePerThread from the same alignment: name the layout only where it is the tighter cap
    if w.per_thread is not None and w.per_thread < min(need, w.divisibility, w.contiguity, w.mask_alignment or need):
        caps.append(f"the layout gives each thread {w.per_thread} contiguous element(s) along dim {d}")
    if not caps:
        caps.append(f"contiguity, divisibility, mask and layout allow {w.predicted * w.bits} bits, {got} emitted")
    return caps


# ---------------------------------------------------------------------------------------------- entry point


def _threads(traj: Trajectory, text: str) -> int:
    found = dict(_MODULE_INT.findall(text))
    warps = int(found.get("num-warps", traj.specialization.options.get("num_warps", 4)))
    lanes = int(found.get("threads-per-warp", traj.target.warp_size or 32))  # an NPU has no warps
    return warps * lanes


def accesses(traj: Trajectory) -> list[Access]:
    """Every global load, store and atomic of the kernel, once per source location, in IR order. Copies of
    one access (the pipeliner's prologue and loop copies of a load) merge; the least favourable is kept.

    From the final TTGIR and the LLVM-dialect module after it; a compile that stopped before them is read
    from its TTIR, with the width predicted (`vector_bits` None) and the layout Coalesce would pick.
    Raises AccessError for a trajectory without either, or of a backend without GPU threads (Ascend)."""
    if traj.target.backend not in ("cuda", "hip"):
        raise AccessError(
            f"{traj.kernel.name}: the access analysis models GPU threads (cuda, hip), not {traj.target.backend}"
        )
    stage = next((s for s in ("ttgir", "ttir") if s in traj.stages), None)
    if stage is None:
        stages = ", ".join(traj.stages) or "none"
        raise AccessError(f"{traj.kernel.name}: no TTIR or TTGIR was captured (stages: {stages})")
    text = traj.stage_output(stage).text
    lowered = _lowered_module(traj) if stage == "ttgir" else None
    widths = emitted_widths(lowered) if lowered else None
    return _classify_module(_Context(analyze(text), widths, _threads(traj, text), traj.kernel.source_file))


def _classify_module(ctx: _Context) -> list[Access]:
    merged: dict[tuple, Access] = {}
    for view in ctx.a.views:
        op = view.op
        spec = MEMORY_OPS.get(op.name)
        if spec is None:
            continue
        access = _classify(ctx, view, spec)
        if access is None:
            continue
        key = (op.name, op.location.frames or op.line_no)
        kept = merged.get(key)
        if kept is None or _rank(access) < _rank(kept):
            merged[key] = access
    return list(merged.values())


def _rank(x: Access) -> tuple[int, int]:
    return VERDICTS.index(x.verdict), x.vector_bits or 0
