"""Ascend counters over triton-ascend's adapter IR (linalg, HIVM, memref, bufferization, tensor): docs/ascend.md.

The `ttadapter` stage is what `bishengir-compile` receives. Tensor-level ops there become vector-unit
instructions, scalar `arith` outside structured-op bodies runs on the scalar unit, `memref.copy` moves blocks
between global memory and the on-chip unified buffer, and HIVM ops are explicit pipe and core synchronization.
Ops inside the bodies of `linalg.generic`/`linalg.reduce`/… are per-element payloads, not scalar code.
"""

from __future__ import annotations

import re

from irscope.parse.mlir import Op
from irscope.signatures.rules import OpRule
from irscope.signatures.types import tensor_types

STAGE = ("ttadapter",)
PAYLOAD_OWNERS = ("linalg.", "hfusion.", "hivm.hir.", "tt.reduce", "tt.scan")
VECTOR_DIALECTS = ("arith.", "math.")
NOT_VECTOR_COMPUTE = {
    "linalg.yield",
    "linalg.index",
    "linalg.reduce",
    "linalg.matmul",
    "linalg.batch_matmul",
    "linalg.matmul_transpose_a",
    "linalg.matmul_transpose_b",
    "linalg.copy",
}
MATMULS = (
    "linalg.matmul",
    "linalg.batch_matmul",
    "linalg.matmul_transpose_a",
    "linalg.matmul_transpose_b",
    "hivm.hir.matmul",
    "hivm.hir.mix_matmul",
    "hivm.hir.mix_group_matmul",
)
HIVM_VECTOR = (
    "hivm.hir.vabs",
    "hivm.hir.vadd",
    "hivm.hir.vand",
    "hivm.hir.varange",
    "hivm.hir.vbrc",
    "hivm.hir.vcast",
    "hivm.hir.vcmp",
    "hivm.hir.vconcat",
    "hivm.hir.vcos",
    "hivm.hir.vdeinterleave",
    "hivm.hir.vdiv",
    "hivm.hir.verf",
    "hivm.hir.vexp",
    "hivm.hir.vflip",
    "hivm.hir.vgather",
    "hivm.hir.vinterleave",
    "hivm.hir.vln",
    "hivm.hir.vmax",
    "hivm.hir.vmin",
    "hivm.hir.vmod",
    "hivm.hir.vmul",
    "hivm.hir.vmulext",
    "hivm.hir.vmulextended",
    "hivm.hir.vnot",
    "hivm.hir.vor",
    "hivm.hir.vpad",
    "hivm.hir.vpow",
    "hivm.hir.vrec",
    "hivm.hir.vrelu",
    "hivm.hir.vrsqrt",
    "hivm.hir.vsel",
    "hivm.hir.vshl",
    "hivm.hir.vshr",
    "hivm.hir.vsin",
    "hivm.hir.vsort",
    "hivm.hir.vsqrt",
    "hivm.hir.vsub",
    "hivm.hir.vtanh",
    "hivm.hir.vtranspose",
    "hivm.hir.vxor",
)
_INDEX_MODE = re.compile(r'reduce_mode = "\w+_with_index"')
_INS = re.compile(r"\bins\(([^)]*)\)")
_STATIC_MEMREF = re.compile(r"memref<((?:\d+x)*)(f16|bf16|f32|f64|i1|i8|i16|i32|i64)\b")


def in_payload(op: Op) -> bool:
    """Inside the body of a structured op (a per-element computation), at any depth."""
    parent = op.parent
    while parent is not None:
        if parent.name.startswith(PAYLOAD_OWNERS):
            return True
        parent = parent.parent
    return False


def _result_text(op: Op) -> str:
    # equivalent mutants on the adapter's output: it prints an op's location as an alias (`loc(#loc3)`: no `:`, no
    # type), and an arith/math op's types after its one ` : ` (before it, SSA names and keywords only), with no
    # space inside a type; `[-1]` of a split in two at a colon it holds is `[1]`
    body = op.text.split(" loc(", 1)[0]  # pragma: no mutate (equivalent, see above)
    return body.rsplit(":", 1)[-1] if ":" in body else ""  # pragma: no mutate (equivalent, see above)


def vector_op(op: Op, aliases: dict[str, str]) -> int:
    """A tensor-level compute op outside payloads: a linalg/hfusion structured op, or arith/math on tensors."""
    if in_payload(op) or op.name in NOT_VECTOR_COMPUTE:
        return 0
    if op.name.startswith(("linalg.", "hfusion.")) or op.name in HIVM_VECTOR:
        return 1
    # equivalent mutants: the adapter builds a tensor constant as a `linalg.fill` of a scalar `arith.constant`
    if op.name == "arith.constant":  # pragma: no mutate (equivalent, see above)
        return 0
    return int(op.name.startswith(VECTOR_DIALECTS) and "tensor<" in _result_text(op))


def scalar_op(op: Op, aliases: dict[str, str]) -> int:
    """arith/math on scalars outside payloads: address, bounds and mask arithmetic, values pulled out of tensors."""
    if in_payload(op) or op.name == "arith.constant" or not op.name.startswith(VECTOR_DIALECTS):
        return 0
    result = _result_text(op)
    # equivalent mutants: no arith/math op of the adapter's output yields a vector or a memref
    shaped = "vector<" in result or "memref<" in result  # pragma: no mutate (equivalent, see above)
    return int(bool(result) and "tensor<" not in result and not shaped)


def outside_payload(op: Op, aliases: dict[str, str]) -> int:
    return int(not in_payload(op))


def payload_op(op: Op, aliases: dict[str, str]) -> int:
    """An arith/math op in a reduction's combiner: the work done per element reduced."""
    return int(op.name.startswith(VECTOR_DIALECTS) and op.parent is not None and op.parent.name == "linalg.reduce")


def index_reduce(op: Op, aliases: dict[str, str]) -> int:
    """argmax/argmin at the adapter level: `linalg.reduce … {reduce_mode = "max_with_index"}`, or a reduction
    of several inputs one of which is an integer tensor (the index)."""
    if op.name == "hfusion.reduce_with_index" or _INDEX_MODE.search(op.text):
        return 1
    ins = _INS.search(op.text)
    # equivalent mutant of the guard: a `linalg.reduce`, the only op left here, prints `ins(` on its first line
    types = tensor_types(ins.group(1)) if ins else []  # pragma: no mutate (equivalent, see above)
    return int(len(types) >= 2 and any(t.element.startswith("i") for t in types))


def atomic_generic(op: Op, aliases: dict[str, str]) -> int:
    """triton-ascend lowers `tl.atomic_*` to a `linalg.generic` on memrefs tagged `GenericAtomicRMW`."""
    return int("GenericAtomicRMW" in op.text)


def discrete_loop(op: Op, aliases: dict[str, str]) -> int:
    """A loop the adapter built to load or store a non-contiguous access one element at a time."""
    # its marker is in the attributes `scf.for` prints after its region: on the loop's closing line, never its first
    return int("ExtractedLoadOrStore" in op.tail)


def alloc_bytes(op: Op, aliases: dict[str, str]) -> int:
    """Bytes of a statically shaped local buffer (`memref.alloc() : memref<128xf32>` → 512)."""
    # equivalent mutants of the split: the buffer's type ends the line, after its every `=` and space
    m = _STATIC_MEMREF.search(op.text.split("=", 1)[-1])  # pragma: no mutate (equivalent, see above)
    if m is None:
        return 0  # a dynamic shape (`memref<?xf32>`)
    n = 1
    for d in m.group(1).split("x")[:-1]:
        n *= int(d)
    return n * max(int(re.sub(r"\D", "", m.group(2))), 8) // 8


ASCEND_RULES: list[OpRule] = [
    OpRule("sync.barrier", ("hivm.hir.pipe_barrier",), stages=STAGE),
    OpRule("sync.flag", ("hivm.hir.set_flag", "hivm.hir.wait_flag"), stages=STAGE),
    OpRule(
        "sync.block",
        (
            "hivm.hir.sync_block",
            "hivm.hir.sync_block_set",
            "hivm.hir.sync_block_wait",
            "hivm.hir.sync_block_lock",
            "hivm.hir.sync_block_unlock",
        ),
        stages=STAGE,
    ),
    OpRule(
        "mem.copy",
        (
            "memref.copy",
            "hivm.hir.copy",
            "hivm.hir.load",
            "hivm.hir.store",
            "hivm.hir.nd2nz",
            "hivm.hir.nz2nd",
            "hivm.hir.fixpipe",
        ),
        stages=STAGE,
    ),
    OpRule("mem.materialize", ("bufferization.materialize_in_destination",), stages=STAGE),
    OpRule("mem.to_tensor", ("bufferization.to_tensor",), stages=STAGE),
    OpRule("mem.alloc", ("memref.alloc", "memref.alloca"), stages=STAGE),
    OpRule("mem.alloc_bytes", ("memref.alloc", "memref.alloca"), alloc_bytes, stages=STAGE),
    OpRule("mem.scalar_load", ("memref.load", "affine.load"), stages=STAGE),
    OpRule("mem.scalar_store", ("memref.store", "affine.store"), stages=STAGE),
    OpRule("mem.discrete_loop", ("scf.for",), discrete_loop, stages=STAGE),
    OpRule("compute.reduce", ("linalg.reduce", "hfusion.reduce_with_index", "hivm.hir.vreduce"), stages=STAGE),
    OpRule("compute.reduce_index", ("linalg.reduce", "hfusion.reduce_with_index"), index_reduce, stages=STAGE),
    OpRule("compute.reduce_body_ops", ("*",), payload_op, stages=STAGE),
    OpRule("compute.dot", MATMULS, stages=STAGE),
    OpRule(
        "compute.scan", ("hfusion.cumsum", "hfusion.cumprod", "hivm.hir.vcumsum", "hivm.hir.vcumprod"), stages=STAGE
    ),
    OpRule("compute.atomic", ("linalg.generic",), atomic_generic, stages=STAGE),
    OpRule("compute.atomic", ("hivm.hir.atomic_cas", "hivm.hir.atomic_xchg"), stages=STAGE),
    OpRule("compute.vector_ops", ("*",), vector_op, stages=STAGE),
    OpRule("compute.scalar_ops", ("*",), scalar_op, stages=STAGE),
    OpRule("compute.element_access", ("tensor.extract", "tensor.insert"), outside_payload, stages=STAGE),
]
