"""NVIDIA counters: ttng/nvvm ops, the LLVM-dialect inline PTX, PTX, SASS and LLVM IR (docs/signatures.md).

Triton's NVIDIA lowering (convert-triton-gpu-to-llvm) writes global loads and stores, cp.async, fences and some
math as inline PTX or NVVM intrinsics, so their count, vector width and predicate are final in the LLVM dialect.
Those counters are measured there and in LLVM IR with the same meaning as on PTX: the stage-diff graph then names
the pass that created the instructions, not the LLVM → PTX code generation that only prints them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from irscope.parse.asm import Instr
from irscope.parse.mlir import Op
from irscope.signatures.rules import MAX, SUM, InstrRule, OpRule, rx
from irscope.trajectory import LLVM_IR


def _asm(pattern: str):
    # pragma: no mutate block (runs while the module is imported, before mutmut turns a mutant on; docs/mutation.md)
    compiled = re.compile(pattern)

    def value(op: Op, aliases: dict[str, str]) -> int:
        return len(compiled.findall(op.text))

    return value


_PTX_VEC = re.compile(r"\.v(\d)\.")
_PTX_BITS = re.compile(r"\.[bfsu](8|16|32|64)$")


def _ptx_vec(ins: Instr) -> int:
    m = _PTX_VEC.search(ins.opcode)  # a vector's element type always follows it: `.v4.b32`
    return int(m.group(1)) if m else 1


def _ptx_bits(ins: Instr) -> int:
    m = _PTX_BITS.search(ins.opcode)
    width = int(m.group(1)) if m else 32  # pragma: no mutate (the ld/st Triton writes name a type: never taken)
    return _ptx_vec(ins) * width


def _ptx_lanes(ins: Instr) -> int:
    """32-bit lanes one access moves: a 128-bit access is 4."""
    # a floor of 33 bits or a true division counts the same: widths are whole bytes, and 4.0 == 4 (equivalent)
    return max(_ptx_bits(ins), 32) // 32  # pragma: no mutate


# `ld.global…`/`st.global…` inside inline asm, with the asm's own predicate operand (`@$5 ld.global.v4.b32 …`)
_ASM_ACCESS = {verb: re.compile(rf"(@!?\$\d+\s+)?\b({verb}\.global[\w.:]*)") for verb in ("ld", "st")}


@lru_cache(maxsize=8192)
def asm_accesses(text: str, verb: str) -> tuple[Instr, ...]:
    """The global loads (`ld`) or stores (`st`) written as PTX in one inline-asm op or call, as PTX instructions."""
    return tuple(Instr(m.group(2), bool(m.group(1)), 0, None, m.group(0)) for m in _ASM_ACCESS[verb].finditer(text))


Measure = Callable[[tuple[Instr, ...]], int]


def _lanes(n: int) -> Measure:
    # pragma: no mutate block (runs while the module is imported, before mutmut turns a mutant on; docs/mutation.md)
    def measure(accesses: tuple[Instr, ...]) -> int:
        return sum(_ptx_lanes(i) == n for i in accesses)

    return measure


def _predicated(accesses: tuple[Instr, ...]) -> int:
    return sum(i.predicated for i in accesses)


def _widest(accesses: tuple[Instr, ...]) -> int:
    # a default of None is equivalent: Signature.add drops a value of 0 or None alike
    return max((_ptx_bits(i) for i in accesses), default=0)  # pragma: no mutate


# (counter, verb, value over one asm's accesses, aggregate): the PTX access counters, read off inline asm
_ACCESS_MEASURES: list[tuple[str, str, Measure, str]] = [
    *[
        (f"mem.{name}_vec{n}", verb, _lanes(n), SUM)
        for verb, name in (("ld", "load"), ("st", "store"))
        for n in (1, 2, 4, 8)
    ],
    ("mem.load_masked", "ld", _predicated, SUM),
    ("mem.store_masked", "st", _predicated, SUM),
    ("mem.load_bits_max", "ld", _widest, MAX),
]


def _on_asm_op(verb: str, measure: Measure) -> Callable[[Op, dict[str, str]], int]:
    # pragma: no mutate block (runs while the module is imported, before mutmut turns a mutant on; docs/mutation.md)
    return lambda op, aliases: measure(asm_accesses(op.text, verb))


def _on_asm_call(verb: str, measure: Measure) -> Callable[[Instr], int]:
    # pragma: no mutate block (runs while the module is imported, before mutmut turns a mutant on; docs/mutation.md)
    return lambda ins: measure(asm_accesses(ins.text, verb))


ASM_ACCESS_OP_RULES = [
    OpRule(c, ("llvm.inline_asm",), _on_asm_op(v, m), aggregate=agg) for c, v, m, agg in _ACCESS_MEASURES
]
ASM_ACCESS_LLVM_IR_RULES = [
    InstrRule(c, LLVM_IR, rx(r"^call"), _on_asm_call(v, m), rx(r"\basm\b"), agg) for c, v, m, agg in _ACCESS_MEASURES
]


MLIR_RULES: list[OpRule] = [
    OpRule("sync.barrier", ("nvvm.barrier0", "nvvm.barrier", "nvvm.barrier.cta.sync")),
    OpRule("sync.barrier", ("llvm.inline_asm",), _asm(r'"(?:bar|barrier)\.sync')),
    OpRule("sync.shuffle", ("nvvm.shfl.sync",)),
    OpRule("sync.shuffle", ("llvm.inline_asm",), _asm(r'"shfl\.sync')),
    OpRule("sync.redux", ("nvvm.redux.sync",)),
    OpRule(
        "sync.mbarrier",
        ("ttng.init_barrier", "ttng.wait_barrier", "ttng.arrive_barrier", "ttng.barrier_expect", "ttng.inval_barrier"),
    ),
    OpRule("sync.fence", ("ttng.fence", "ttng.fence_async_shared")),
    OpRule(
        "mem.tma",
        (
            "ttng.async_tma_copy_global_to_local",
            "ttng.async_tma_copy_local_to_global",
            "ttng.async_tma_gather",
            "ttng.async_tma_scatter",
        ),
    ),
    OpRule("compute.mma_wgmma", ("ttng.warp_group_dot",)),
    OpRule("compute.mma_wgmma", ("nvvm.wgmma.mma_async",)),
    OpRule("compute.mma_wgmma", ("llvm.inline_asm",), _asm(r'"wgmma\.mma_async')),
    OpRule("compute.mma_sync", ("llvm.inline_asm",), _asm(r'"mma\.sync')),
    OpRule("mem.load", ("llvm.inline_asm",), _asm(r'"[^"]*\bld\.global')),
    OpRule("mem.store", ("llvm.inline_asm",), _asm(r'"[^"]*\bst\.global')),
    OpRule(
        "mem.cp_async",
        ("llvm.inline_asm", "nvvm.cp.async.shared.global"),
        lambda op, a: 1 if op.name != "llvm.inline_asm" else len(re.findall(r'"cp\.async\.c[ag]', op.text)),
    ),
    OpRule("sync.async_wait", ("nvvm.cp.async.wait.group", "nvvm.cp.async.bulk.wait_group")),
    OpRule("sync.fence", ("nvvm.fence.proxy", "nvvm.fence.mbarrier.init", "nvvm.fence.sc.cluster")),
    OpRule("sync.fence", ("llvm.inline_asm",), _asm(r'"fence\.')),
    OpRule(
        "compute.special",
        ("llvm.call_intrinsic",),
        _asm(r'"llvm\.nvvm\.(?:ex2|lg2|rcp|rsqrt|sqrt|sin|cos|tanh)\.approx'),
    ),
    OpRule("compute.special", ("llvm.inline_asm",), _asm(r'"(?:ex2|lg2|rcp|rsqrt|sqrt|sin|cos|tanh)\.approx')),
    *ASM_ACCESS_OP_RULES,
]

_SASS_WIDTH = re.compile(r"\.(128|64|U16|S16|U8|S8)\b")


def _sass_bits(ins: Instr) -> int:
    m = _SASS_WIDTH.search(ins.opcode)
    if not m:
        return 32
    return {"128": 128, "64": 64, "U16": 16, "S16": 16, "U8": 8, "S8": 8}[m.group(1)]


def _vec_rules(kind: str, verb: str, pattern: str, bits) -> list[InstrRule]:
    """mem.{verb}_vec{1,2,4,8}: by how many 32-bit lanes one instruction moves (a 128-bit access is vec4)."""
    # pragma: no mutate block (runs while the module is imported, before mutmut turns a mutant on; docs/mutation.md)
    out = []
    for n in (1, 2, 4, 8):

        def value(ins: Instr, n: int = n) -> int:
            return int(max(bits(ins), 32) // 32 == n)

        out.append(InstrRule(f"mem.{verb}_vec{n}", kind, rx(pattern), value))
    return out


PTX_LOAD = r"^ld\.global"
PTX_STORE = r"^st\.global"
_FP_TYPES = r"\.(?:f16|f32|f64|bf16|f16x2|bf16x2)(?:\.|$)"
_INT_TYPES = r"\.(?:s|u)(?:16|32|64)(?:\.|$)"
_ARITH = r"^(?:add|sub|mul|mad|fma|max|min|neg|abs|div|rem|shl|shr|and|or|xor|not|setp|selp|cvt)\b"

PTX_RULES: list[InstrRule] = [
    InstrRule("sync.barrier", "ptx", rx(r"^(?:bar|barrier)\.(?:sync|cta\.sync)")),
    InstrRule("sync.shuffle", "ptx", rx(r"^shfl\.sync")),
    InstrRule("sync.redux", "ptx", rx(r"^redux\.sync")),
    InstrRule("sync.async_wait", "ptx", rx(r"^cp\.async\.(?:wait_group|wait_all|bulk\.wait_group)")),
    InstrRule("sync.mbarrier", "ptx", rx(r"^mbarrier\.")),
    InstrRule("sync.fence", "ptx", rx(r"^fence\.")),
    InstrRule("mem.load", "ptx", rx(PTX_LOAD)),
    InstrRule("mem.store", "ptx", rx(PTX_STORE)),
    InstrRule("mem.load_masked", "ptx", rx(PTX_LOAD), lambda i: int(i.predicated)),
    InstrRule("mem.store_masked", "ptx", rx(PTX_STORE), lambda i: int(i.predicated)),
    *_vec_rules("ptx", "load", PTX_LOAD, _ptx_bits),
    *_vec_rules("ptx", "store", PTX_STORE, _ptx_bits),
    InstrRule("mem.load_bits_max", "ptx", rx(PTX_LOAD), _ptx_bits, aggregate=MAX),
    InstrRule("mem.cp_async", "ptx", rx(r"^cp\.async\.c[ag]\.")),
    InstrRule("mem.tma", "ptx", rx(r"^cp\.async\.bulk\.tensor")),
    InstrRule("mem.shared_load", "ptx", rx(r"^(?:ld\.shared|ldmatrix)")),
    InstrRule("mem.shared_store", "ptx", rx(r"^(?:st\.shared|stmatrix)")),
    InstrRule("mem.local_load", "ptx", rx(r"^ld\.local")),
    InstrRule("mem.local_store", "ptx", rx(r"^st\.local")),
    InstrRule("compute.mma_wgmma", "ptx", rx(r"^wgmma\.mma_async")),
    InstrRule("compute.mma_sync", "ptx", rx(r"^mma\.sync")),
    InstrRule("compute.atomic", "ptx", rx(r"^(?:atom|red)\.")),
    InstrRule("compute.int64_div", "ptx", rx(r"^(?:div|rem)\.[su]64\b")),  # no such instruction: a called routine
    InstrRule("compute.special", "ptx", rx(r"^(?:ex2|lg2|rcp|rsqrt|sqrt|sin|cos|tanh)\.approx")),
    InstrRule(
        "compute.fp_ops",
        "ptx",
        rx(_ARITH),
        text_pattern=None,
        value=lambda i: int(bool(re.search(_FP_TYPES, i.opcode))),
    ),
    InstrRule("compute.int_ops", "ptx", rx(_ARITH), value=lambda i: int(bool(re.search(_INT_TYPES, i.opcode)))),
    InstrRule(
        "compute.vector_fp_ops", "ptx", rx(_ARITH), value=lambda i: int(bool(re.search(r"x2(?:\.|$)", i.opcode)))
    ),
    InstrRule("control.branch", "ptx", rx(r"^bra"), lambda i: int(i.predicated)),
]

SASS_LOAD = r"^LDG\b"
SASS_STORE = r"^STG\b"
SASS_RULES: list[InstrRule] = [
    InstrRule("sync.barrier", "sass", rx(r"^BAR\.(?:SYNC|RED)")),
    InstrRule("sync.shuffle", "sass", rx(r"^SHFL\b")),
    InstrRule("sync.redux", "sass", rx(r"^REDUX\b")),
    InstrRule("sync.async_wait", "sass", rx(r"^(?:LDGDEPBAR|DEPBAR)\b")),
    InstrRule("sync.mbarrier", "sass", rx(r"^SYNCS\b")),
    InstrRule("sync.fence", "sass", rx(r"^(?:FENCE|MEMBAR)\b")),
    InstrRule("mem.load", "sass", rx(SASS_LOAD)),
    InstrRule("mem.store", "sass", rx(SASS_STORE)),
    *_vec_rules("sass", "load", SASS_LOAD, _sass_bits),
    *_vec_rules("sass", "store", SASS_STORE, _sass_bits),
    InstrRule("mem.load_bits_max", "sass", rx(SASS_LOAD), _sass_bits, aggregate=MAX),
    InstrRule("mem.cp_async", "sass", rx(r"^LDGSTS\b")),
    InstrRule("mem.tma", "sass", rx(r"^(?:UTMALDG|UTMASTG|UBLKCP|UTMAPF)\b")),
    InstrRule("mem.shared_load", "sass", rx(r"^(?:LDS|LDSM)\b")),
    InstrRule("mem.shared_store", "sass", rx(r"^(?:STS|STSM)\b")),
    InstrRule("mem.local_load", "sass", rx(r"^LDL\b")),
    InstrRule("mem.local_store", "sass", rx(r"^STL\b")),
    InstrRule("compute.mma_wgmma", "sass", rx(r"^HGMMA\b")),
    InstrRule("compute.mma_sync", "sass", rx(r"^(?:HMMA|IMMA)\b")),
    # REDG: sm_90 writes an atomic whose result is unused as a global reduction
    InstrRule("compute.atomic", "sass", rx(r"^(?:ATOM|ATOMG|ATOMS|RED|REDG)\b")),
    InstrRule("compute.special", "sass", rx(r"^MUFU\b")),
    InstrRule(
        "compute.fp_ops",
        "sass",
        rx(r"^(?:FADD|FMUL|FFMA|FMNMX|FSETP|FSEL|HADD2|HMUL2|HFMA2|HMNMX2|DADD|DMUL|DFMA|FCHK|FRND)\b"),
    ),
    InstrRule("compute.int_ops", "sass", rx(r"^(?:IADD3|IMAD|IMUL|LOP3|ISETP|SHF|LEA|IABS|IMNMX|SEL|PRMT|POPC|FLO)\b")),
    InstrRule("compute.vector_fp_ops", "sass", rx(r"^(?:HADD2|HMUL2|HFMA2|HMNMX2|HSET2|HSETP2)\b")),
    InstrRule("control.branch", "sass", rx(r"^BRA\b"), lambda i: int(i.predicated)),
    InstrRule("res.instructions", "sass", rx(r".")),
]


def _asm_count(pattern: str) -> Callable[[Instr], int]:
    # pragma: no mutate block (runs while the module is imported, before mutmut turns a mutant on; docs/mutation.md)
    compiled = re.compile(pattern)
    return lambda ins: len(compiled.findall(ins.text))


_LL_BARRIER = rx(r"@llvm\.nvvm\.barrier|bar\.sync|barrier\.sync")
_LL_LOAD = rx(r"ld\.global|load [^,]+, ptr addrspace\(1\)")
_LL_STORE = rx(r"st\.global|store .* ptr addrspace\(1\)")
LLVM_IR_RULES: list[InstrRule] = [
    InstrRule("sync.barrier", "llvm-ir", rx(r"^call"), text_pattern=_LL_BARRIER),
    InstrRule("sync.shuffle", "llvm-ir", rx(r"^call"), text_pattern=rx(r"shfl\.sync")),
    InstrRule("mem.load", "llvm-ir", rx(r"^(?:load|call)"), text_pattern=_LL_LOAD),
    InstrRule("mem.store", "llvm-ir", rx(r"^(?:store|call)"), text_pattern=_LL_STORE),
    InstrRule("compute.mma_wgmma", "llvm-ir", rx(r"^call"), text_pattern=rx(r"wgmma\.mma_async")),
    InstrRule("compute.mma_sync", "llvm-ir", rx(r"^call"), text_pattern=rx(r"mma\.sync")),
    InstrRule("sync.redux", LLVM_IR, rx(r"^call"), text_pattern=rx(r"@llvm\.nvvm\.redux\.sync")),
    InstrRule("sync.async_wait", LLVM_IR, rx(r"^call"), text_pattern=rx(r"@llvm\.nvvm\.cp\.async\.(?:bulk\.)?wait")),
    InstrRule("sync.fence", LLVM_IR, rx(r"^call"), text_pattern=rx(r'@llvm\.nvvm\.fence\.|asm[^"]*"fence\.')),
    InstrRule("mem.cp_async", LLVM_IR, rx(r"^call"), _asm_count(r"cp\.async\.c[ag]\.")),
    InstrRule(
        "compute.special", LLVM_IR, rx(r"^call"), _asm_count(r"\b(?:ex2|lg2|rcp|rsqrt|sqrt|sin|cos|tanh)\.approx")
    ),
    *ASM_ACCESS_LLVM_IR_RULES,
]

NVIDIA_INSTR_RULES = PTX_RULES + SASS_RULES + LLVM_IR_RULES
