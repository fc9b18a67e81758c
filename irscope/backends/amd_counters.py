"""AMD counters: AMDGPU MLIR ops and AMDGCN instructions (docs/signatures.md)."""

from __future__ import annotations

import re
from collections.abc import Callable

from irscope.parse.asm import Instr
from irscope.signatures.rules import MAX, InstrRule, OpRule, rx

MLIR_RULES: list[OpRule] = [
    OpRule(
        "compute.mma_amd",
        ("tt.dot",),
        lambda op, a: int(bool(re.search(r"amd_(?:mfma|wmma)|#mma", op.text.split("->")[-1]))),
    ),
    OpRule("mem.load", ("amdgpu.buffer_load", "amdgpu.buffer_load_to_local")),
    OpRule("mem.store", ("amdgpu.buffer_store",)),
    OpRule("sync.barrier", ("rocdl.s.barrier", "rocdl.barrier")),
    OpRule("sync.shuffle", ("rocdl.ds_swizzle", "rocdl.ds_bpermute", "rocdl.update.dpp", "rocdl.mov.dpp")),
]


def _amd_vec(ins: Instr) -> int:
    m = re.search(r"dwordx(\d)|_b(\d+)$", ins.opcode)
    if not m:
        return 1
    if m.group(1):
        return int(m.group(1))
    # a true division is equivalent: widths are 8, 16 or multiples of 32 bits, max(0.5, 1) == 1 and 4.0 == 4
    dwords = int(m.group(2)) // 32  # pragma: no mutate
    return max(dwords, 1)


def _width_is(n: int) -> Callable[[Instr], int]:
    # pragma: no mutate block (runs while the module is imported, before mutmut turns a mutant on; docs/mutation.md)
    return lambda ins: int(_amd_vec(ins) == n)


def _vec(verb: str, pattern: str) -> list[InstrRule]:
    # pragma: no mutate block (runs while the module is imported, before mutmut turns a mutant on; docs/mutation.md)
    return [InstrRule(f"mem.{verb}_vec{n}", "amdgcn", rx(pattern), _width_is(n)) for n in (1, 2, 4)]


AMD_LOAD = r"^(?:global_load|buffer_load)"
AMD_STORE = r"^(?:global_store|buffer_store)"
AMDGCN_RULES: list[InstrRule] = [
    InstrRule("sync.barrier", "amdgcn", rx(r"^s_barrier")),
    InstrRule("sync.shuffle", "amdgcn", rx(r"^(?:ds_swizzle|ds_bpermute|ds_permute|v_\w+_dpp)"), text_pattern=None),
    # DPP modifiers on an instruction not named `_dpp` (those are counted once, above)
    InstrRule(
        "sync.shuffle", "amdgcn", rx(r"^v_(?!\w*_dpp$)"), text_pattern=rx(r"\b(?:row_shr|row_bcast|quad_perm|row_ror)")
    ),
    InstrRule("mem.load", "amdgcn", rx(AMD_LOAD)),
    InstrRule("mem.store", "amdgcn", rx(AMD_STORE)),
    *_vec("load", AMD_LOAD),
    *_vec("store", AMD_STORE),
    InstrRule("mem.load_bits_max", "amdgcn", rx(AMD_LOAD), lambda i: 32 * _amd_vec(i), aggregate=MAX),
    InstrRule("mem.shared_load", "amdgcn", rx(r"^ds_read")),
    InstrRule("mem.shared_store", "amdgcn", rx(r"^ds_write")),
    InstrRule("mem.local_load", "amdgcn", rx(r"^scratch_load")),
    InstrRule("mem.local_store", "amdgcn", rx(r"^scratch_store")),
    InstrRule("compute.mma_amd", "amdgcn", rx(r"^v_(?:mfma|wmma|smfmac)")),
    InstrRule("compute.atomic", "amdgcn", rx(r"^(?:global|buffer|flat|ds)_atomic")),
    InstrRule("compute.special", "amdgcn", rx(r"^v_(?:exp|log|rcp|rsq|sqrt|sin|cos)_")),
    InstrRule("res.instructions", "amdgcn", rx(r".")),
]
