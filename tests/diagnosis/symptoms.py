"""Structural signatures of the L3 symptoms, read from one captured compile: where each symptom is present.

Each signature is a plain predicate over irscope's counters (docs/signatures.md), per kernel source line, plus
two structural reads of the final TTGIR where a counter alone cannot say it (a load's enclosing loop, a layout
conversion's source encoding). They are written from the mechanisms, independently of the ladder's rules:
they check the evaluation set, not the diagnosis. A signature returns the kernel lines where the symptom is
present; whole-kernel symptoms (spills, occupancy) return {KERNEL}.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from irscope import signatures
from irscope.parse.mlir import Op, ParsedModule, parse_mlir
from irscope.signatures.types import TensorType, encoding_kind, tensor_types
from irscope.trajectory import MLIR, Trajectory

KERNEL = -1  # the "line" of a symptom of the whole kernel

# sm_90 (H100/H200) limits per SM, from the CUDA occupancy rules: 64K 32-bit registers allocated to warps in
# units of 256, 228 KB of shared memory with 1 KB reserved per resident CTA, at most 64 warps and 32 CTAs.
SM_REGISTERS = 65536
REGISTER_UNIT = 256
SM_SHARED_BYTES = 228 * 1024
CTA_RESERVED_SHARED = 1024
SM_MAX_WARPS = 64
SM_MAX_CTAS = 32


@dataclass
class Compiled:
    """One captured compile, with the counters the signatures read."""

    traj: Trajectory

    @cached_property
    def analyzer(self) -> signatures.Analyzer:
        return signatures.Analyzer(self.traj)

    @cached_property
    def lines(self) -> dict[str, dict[int, dict[str, int]]]:
        return signatures.by_line(self.traj, self.analyzer)

    @cached_property
    def summary(self) -> dict[str, float]:
        return signatures.summary(self.traj, self.analyzer)

    @cached_property
    def ttgir(self) -> ParsedModule:
        final = [s for s in self.traj.stage_snapshots("ttgir") if s.kind == MLIR][-1]
        return parse_mlir(final.text)

    @cached_property
    def defs(self) -> dict[str, Op]:
        """Each value of the final TTGIR and the op that defines it (block arguments have none)."""
        return {r.split(":")[0]: op for op in self.ttgir.ops for r in op.results}

    def defined_by(self, value: str) -> Op | None:
        return self.defs.get(value.split("#")[0])

    def computed_from(self, value: str, names: tuple[str, ...]) -> bool:
        """Whether `value` is computed, through any chain of ops, from an op named in `names`."""
        todo, seen = [value], set()
        while todo:
            v = todo.pop().split("#")[0]
            if v in seen or (op := self.defs.get(v)) is None:
                continue
            seen.add(v)
            if op.name in names:
                return True
            todo += op.operands
        return False

    def at(self, stage: str, line: int) -> dict[str, int]:
        return self.lines.get(stage, {}).get(line, {})

    def stage_lines(self, stage: str) -> list[int]:
        return sorted(line for line in self.lines.get(stage, {}) if line)

    def line_of(self, op: Op) -> int:
        frame = op.location.user_frame(self.traj.kernel.source_file)
        return frame.line if frame is not None and frame.file == self.traj.kernel.source_file else 0

    def fully_aligned(self) -> bool:
        """Every pointer argument 16-byte aligned and every integer argument divisible by 16 (JIT attributes)."""
        spec = self.traj.specialization
        for name, ty in spec.signature.items():
            if ty.startswith("*") or ty.startswith("i") or ty.startswith("u"):
                attrs = {a[0]: a[1] for a in spec.attrs.get(name, [])}
                if attrs.get("tt.divisibility", 1) < 16:
                    return False
        return True

    def ctas_per_sm(self) -> dict[str, int]:
        """Resident CTAs per SM as each resource allows it."""
        res = self.summary
        warps = int(res["res.num_warps"])
        regs = int(res.get("res.registers", 0))
        per_warp = -(-regs * 32 // REGISTER_UNIT) * REGISTER_UNIT
        shared = int(res.get("res.shared_bytes", 0))
        return {
            "registers": (SM_REGISTERS // per_warp) // warps if per_warp else SM_MAX_CTAS,
            "shared": SM_SHARED_BYTES // (shared + CTA_RESERVED_SHARED),
            "warps": min(SM_MAX_WARPS // warps, SM_MAX_CTAS),
        }


def _ancestors(op: Op) -> list[str]:
    out, p = [], op.parent
    while p is not None:
        out.append(p.name)
        p = p.parent
    return out


def _tensor_op(op: Op) -> list[TensorType]:
    """The tensor types on the op's line (first the pointer or source tensor); empty for scalar ops."""
    return tensor_types(op.text.split(" loc(", 1)[0])


def _through_shared(c: dict[str, int]) -> bool:
    return c.get("mem.shared_store", 0) > 0 and c.get("sync.barrier", 0) > 0


def cross_warp_reduction(k: Compiled) -> set[int]:
    """A value reduction (not argmax/argmin) whose line stores partials to shared memory behind barriers."""
    return {
        n
        for n in k.stage_lines("ttgir")
        if k.at("ttgir", n).get("compute.reduce", 0) > k.at("ttgir", n).get("compute.reduce_index", 0)
        and _through_shared(k.at("ptx", n))
    }


def index_reduction_sync(k: Compiled) -> set[int]:
    """An index-producing reduction (value and index operands) lowered to warp shuffles."""
    return {
        n
        for n in k.stage_lines("ttgir")
        if k.at("ttgir", n).get("compute.reduce_index", 0) > 0 and k.at("ptx", n).get("sync.shuffle", 0) > 0
    }


def register_spills(k: Compiled) -> set[int]:
    """ptxas reports spill bytes and the SASS has local-memory loads or stores."""
    s = k.summary
    local = s.get("sass.mem.local_load", 0) + s.get("sass.mem.local_store", 0)
    return {KERNEL} if s.get("res.spill_bytes", 0) > 0 and local > 0 else set()


LOOPS = ("scf.for", "scf.while")


def not_pipelined(k: Compiled) -> set[int]:
    """A tensor tt.load left inside a loop (scf.for or scf.while) after the pipeliner (neither cp.async nor TMA),
    still a synchronous global load in the PTX of its line."""
    return {
        n
        for op in k.ttgir.ops
        if op.name == "tt.load" and set(LOOPS) & set(_ancestors(op)) and _tensor_op(op)
        if (n := k.line_of(op)) and k.at("ptx", n).get("mem.load", 0) > 0
    }


def _innermost_loop(op: Op) -> Op | None:
    p = op.parent
    while p is not None and p.name not in LOOPS:
        p = p.parent
    return p


def _users(k: Compiled, value: str, loop: Op) -> list[Op]:
    return [op for op in k.ttgir.ops if value in op.operands and loop in _parents(op)]


def _parents(op: Op) -> list[Op]:
    out, p = [], op.parent
    while p is not None:
        out.append(p)
        p = p.parent
    return out


def _from_load_by_layout(k: Compiled, value: str) -> bool:
    """Whether `value` is a tt.load's tile with only its layout changed."""
    op = k.defined_by(value)
    while op is not None and op.name in ("ttg.convert_layout", "tt.trans", "tt.reshape") and op.operands:
        op = k.defined_by(op.operands[0])
    return op is not None and op.name == "tt.load"


def synchronous_wgmma(k: Compiled) -> set[int]:
    """A warp_group_dot_wait with pendings = 0 inside a loop that the kernel could avoid: the dot's product is only
    scaled and accumulated in the loop, or one of its operands is a loaded tile stored into shared memory there
    (in a loop that copies others asynchronously). A wait the math needs (a softmax on the product, an operand
    computed in the loop) is not one."""
    out = set()
    for wait in k.ttgir.ops:
        loop = _innermost_loop(wait)
        if wait.name != "ttng.warp_group_dot_wait" or "pendings = 0" not in wait.text or loop is None:
            continue
        dot = k.defined_by(wait.operands[0])
        if dot is None or dot.name != "ttng.warp_group_dot" or not (n := k.line_of(dot)):
            continue
        allocs = [a for o in dot.operands[:2] if (a := k.defined_by(o)) and a.name == "ttg.local_alloc"]
        relaid = any(a.operands and loop in _parents(a) and _from_load_by_layout(k, a.operands[0]) for a in allocs)
        asynchronous = any(op.name == "ttg.async_copy_global_to_local" and loop in _parents(op) for op in k.ttgir.ops)
        product = wait.results[0].split(":")[0] + ("#0" if ":" in wait.results[0] else "")
        todo, ops = [product], []
        while todo:
            for u in _users(k, todo.pop(), loop):
                ops.append(u.name)
                todo += [r.split(":")[0] for r in u.results]
        scaled = "arith.mulf" in ops and set(ops) <= {"arith.mulf", "arith.divf", "arith.addf", "scf.yield"}
        if (relaid and asynchronous) or scaled:
            out.add(n)
    return out


def operand_relayout_in_loop(k: Compiled) -> set[int]:
    """A ttg.local_alloc of a register tensor inside a loop that also issues asynchronous copies (the pipeliner
    took the loop, but this operand goes through registers into shared memory), with shared stores on its line."""
    async_loops = {
        id(loop) for op in k.ttgir.ops if op.name == "ttg.async_copy_global_to_local" if (loop := _innermost_loop(op))
    }
    return {
        n
        for op in k.ttgir.ops
        if op.name == "ttg.local_alloc" and "(tensor<" in op.text and id(_innermost_loop(op)) in async_loops
        if op.operands and _from_load_by_layout(k, op.operands[0])
        if (n := k.line_of(op)) and k.at("ptx", n).get("mem.shared_store", 0) > 0
    }


def int64_index_division(k: Compiled) -> set[int]:
    """64-bit integer divisions or remainders in the PTX of a line."""
    return {n for n in k.stage_lines("ptx") if k.at("ptx", n).get("compute.int64_div", 0) > 0}


def data_dependent_store_mask(k: Compiled) -> set[int]:
    """A masked tt.store whose mask comes from loaded values, issued as several scalar stores and no vector."""
    out = set()
    for op in k.ttgir.ops:
        if op.name != "tt.store" or len(op.operands) < 3 or not (n := k.line_of(op)):
            continue
        c, from_data = k.at("ptx", n), k.computed_from(op.operands[2], ("tt.load",))
        if c.get("mem.store_vec1", 0) >= 2 and not c.get("mem.store_vec4", 0) and from_data:
            out.add(n)
    return out


def dot_on_fma(k: Compiled) -> set[int]:
    """A dot left with a blocked (FMA) result, and no MMA instruction on its line."""
    return {
        n
        for n in k.stage_lines("ttgir")
        if k.at("ttgir", n).get("compute.dot_fma", 0) > 0
        and not k.at("ptx", n).get("compute.mma_sync", 0) + k.at("ptx", n).get("compute.mma_wgmma", 0)
    }


def mma_downgrade(k: Compiled) -> set[int]:
    """A dot with an MMA v2 encoding, lowered to mma.sync and no wgmma, on sm_90."""
    if k.traj.target.arch != 90:
        return set()
    return {
        n
        for n in k.stage_lines("ttgir")
        if k.at("ttgir", n).get("compute.mma_sync", 0) > 0
        and k.at("ptx", n).get("compute.mma_sync", 0) > 0
        and not k.at("ptx", n).get("compute.mma_wgmma", 0)
    }


def layout_conversion(k: Compiled) -> set[int]:
    """A ttg.convert_layout that is lowered through shared memory with barriers on its line, except a
    conversion out of an MMA accumulator layout or a slice of one (a row statistic of the accumulator, as flash
    attention stores): Triton's intended epilogue, which gives the store a coalesced layout in every matmul that
    stores through pointers."""
    out = set()
    for op in k.ttgir.ops:
        if op.name != "ttg.convert_layout":
            continue
        types = _tensor_op(op)
        src = types[0].encoding if types else None
        if encoding_kind(src) == "mma" or (encoding_kind(src) == "slice" and "parent = #mma" in (src or "")):
            continue
        if (n := k.line_of(op)) and _through_shared(k.at("ptx", n)):
            out.add(n)
    return out


def global_atomics(k: Compiled) -> set[int]:
    """A tensor-valued atomic (one per element) lowered to global atom/red instructions."""
    return {
        n
        for op in k.ttgir.ops
        if op.name in ("tt.atomic_rmw", "tt.atomic_cas") and _tensor_op(op)
        if (n := k.line_of(op)) and k.at("ptx", n).get("compute.atomic", 0) > 0
    }


def _narrow_lines(k: Compiled) -> set[int]:
    """Lines where a thread issues several global loads (or stores) narrower than 128 bits and none wider,
    for a tensor with at least one element per thread (smaller ones are broadcast reads Triton itself treats
    as cheap: isExpensiveLoadOrStore)."""
    threads = int(k.summary["res.num_warps"]) * 32
    sized = {
        n
        for op in k.ttgir.ops
        if op.name in ("tt.load", "tt.store")
        and (types := _tensor_op(op))
        and types[0].numel >= threads
        and (n := k.line_of(op))
    }
    out = set()
    for n in sized:
        c = k.at("ptx", n)
        for kind in ("load", "store"):
            narrow = c.get(f"mem.{kind}_vec1", 0) + c.get(f"mem.{kind}_vec2", 0)
            wide = c.get(f"mem.{kind}_vec4", 0) + c.get(f"mem.{kind}_vec8", 0)
            if narrow >= 2 and not wide:
                out.add(n)
    return out


INDEXING = ("tt.load", "arith.divsi", "arith.remsi", "arith.divui", "arith.remui")


def _indexed_lines(k: Compiled) -> set[int]:
    """Lines of accesses whose addresses are computed from loaded values or a division: gathers and scatters,
    whose neighbours are not contiguous whatever the alignment."""
    return {
        n
        for op in k.ttgir.ops
        if op.name in ("tt.load", "tt.store") and op.operands and k.computed_from(op.operands[0], INDEXING)
        if (n := k.line_of(op))
    }


def narrow_memory_access(k: Compiled) -> set[int]:
    """Narrow accesses where the specialization leaves some alignment unproven (an argument not divisible by
    16, a pointer aligned below 16 bytes): the width is capped by what the compiler cannot prove. A case
    confirms it with `fixed_by` arguments that restore the alignment. Not gathers (uncoalesced) nor stores a
    data-dependent mask narrows (their own symptom)."""
    if k.fully_aligned():
        return set()
    return _narrow_lines(k) - _indexed_lines(k) - data_dependent_store_mask(k)


def uncoalesced_access(k: Compiled) -> set[int]:
    """Narrow accesses although every pointer is 16-byte aligned and every integer argument divisible by 16:
    then only missing contiguity (a stride along the thread-fast axis) can cap the width; and narrow gathers,
    whatever the alignment. Not stores a data-dependent mask narrows (their own symptom)."""
    narrow = _narrow_lines(k)
    aligned = narrow if k.fully_aligned() else narrow & _indexed_lines(k)
    return aligned - data_dependent_store_mask(k)


def occupancy_limit(k: Compiled) -> set[int]:
    """Registers or shared memory per CTA leave room for a single resident CTA per SM, fewer than the warp
    limit would allow."""
    ctas = k.ctas_per_sm()
    resource = min(ctas["registers"], ctas["shared"])
    return {KERNEL} if resource <= 1 and resource < ctas["warps"] else set()


SIGNATURES: dict[str, Callable[[Compiled], set[int]]] = {
    "cross-warp-reduction": cross_warp_reduction,
    "index-reduction-sync": index_reduction_sync,
    "register-spills": register_spills,
    "not-pipelined": not_pipelined,
    "synchronous-wgmma": synchronous_wgmma,
    "operand-relayout-in-loop": operand_relayout_in_loop,
    "dot-on-fma": dot_on_fma,
    "mma-downgrade": mma_downgrade,
    "layout-conversion": layout_conversion,
    "global-atomics": global_atomics,
    "narrow-memory-access": narrow_memory_access,
    "uncoalesced-access": uncoalesced_access,
    "int64-index-division": int64_index_division,
    "data-dependent-store-mask": data_dependent_store_mask,
    "occupancy-limit": occupancy_limit,
}


# The rewrite family that fixes each symptom (the pattern cards' `family:` names).
FAMILIES = {
    "cross-warp-reduction": "reduction-layout",
    "index-reduction-sync": "index-reduction",
    "register-spills": "resources",
    "not-pipelined": "pipelining",
    "synchronous-wgmma": "async-mma",
    "operand-relayout-in-loop": "operand-layout",
    "dot-on-fma": "tensor-core",
    "mma-downgrade": "tensor-core",
    "layout-conversion": "layout",
    "global-atomics": "global-reduction",
    "narrow-memory-access": "vectorization",
    "uncoalesced-access": "memory-access",
    "int64-index-division": "index-arithmetic",
    "data-dependent-store-mask": "masked-store",
    "occupancy-limit": "resources",
}


def present(k: Compiled) -> dict[str, set[int]]:
    """Every symptom whose signature holds somewhere, with its lines."""
    return {name: lines for name, sig in SIGNATURES.items() if (lines := sig(k))}
