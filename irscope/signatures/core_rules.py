"""Counters over Triton's own dialects (tt, ttg, scf, gpu): the same on every backend."""

from __future__ import annotations

import re
from functools import partial

from irscope.parse.mlir import Op
from irscope.signatures.rules import MAX, OpRule
from irscope.signatures.types import encoding_kind, result_type, tensor_types

_SHARED_ATTR = re.compile(r'"?ttg\.shared"? = (\d+)')
_WAIT_NUM = re.compile(r"\{num = (\d+)")
_MAX_STAGE = re.compile(r"tt\.scheduled_max_stage = (\d+)")
_INT_RESULT = re.compile(r"(?:\b|(?<=\dx))i(32|64)\b")
_FLOAT_RESULT = re.compile(r"(?:\b|(?<=\dx))(f16|bf16|f32|f64)\b")


def _convert_bytes(op: Op, aliases: dict[str, str]) -> int:
    t = result_type(op.text)
    # equivalent mutants: a ttg.convert_layout converts a tensor to a tensor (its verifier requires both), so its
    # line always has a result type and `t` is never None here
    return t.bytes if t else 0  # pragma: no mutate (equivalent, see above)


def _masked_load(op: Op, aliases: dict[str, str]) -> int:
    return int(len(op.operands) >= 2)


def _masked_store(op: Op, aliases: dict[str, str]) -> int:
    return int(len(op.operands) >= 3)


def _index_reduce(op: Op, aliases: dict[str, str]) -> int:
    """argmax/argmin lower to a tt.reduce over (values, indices): two operands, an integer result."""
    if len(op.operands) < 2:
        return 0
    # equivalent mutants: a tt.reduce's results have its operands' element types (its verifier requires them), so
    # the operand side of the closing line names the same types as the result side that is read here
    results = op.tail.split("->", 1)[-1]  # pragma: no mutate (equivalent, see above)
    # element types stand alone (`-> (f32, i32)`) or end a tensor shape (`tensor<32xi32, …>`)
    return int(bool(_INT_RESULT.search(results)) and bool(_FLOAT_RESULT.search(results)))


# The rules' values are module functions bound to their parameters with `partial` (not closures built while the
# table is): so they are looked up when a rule runs, and mutation testing reaches them (docs/mutation.md).
def _dot_encoding(kind: str, version: int | None, op: Op, aliases: dict[str, str]) -> int:
    t = result_type(op.text)
    if t is None or encoding_kind(t.encoding) != kind:
        return 0
    if version is not None:
        # an alias (#mma) stands for its definition. Equivalent mutants: the encoding is set (encoding_kind(None) is
        # None, returned above); Triton names every MMA and blocked encoding by an alias (its dialect's getAlias), so
        # a tt.dot's result encoding is never printed inline here: the split at `<` and the default are never used
        # (printed inline, a dot's line would pass the 400 characters the parser keeps of an op's text, and its
        # result type would not be read at all)
        definition = aliases.get(t.encoding.split("<", 1)[0], t.encoding) if t.encoding else ""  # pragma: no mutate
        return int(f"versionMajor = {version}" in definition)
    return 1


_UNSET = object()


def _result_encoding(op: Op, aliases: dict[str, str]) -> str | None:
    """The encoding kind of the op's (last) result tensor, computed once per op for all encoding counters."""
    # equivalent mutants of the cache's key (read and written): a miss computes the same kind again
    cached = op.__dict__.get("_result_encoding", _UNSET)  # pragma: no mutate (equivalent, see above)
    if cached is _UNSET:
        cached = None  # pragma: no mutate (its only reader compares it with a kind: None and "" both equal none)
        if op.results:
            # equivalent mutants: a location (`loc(#loc12)`, a variable's name) holds no `->` and no tensor type
            body = op.text.split(" loc(", 1)[0]  # pragma: no mutate (equivalent, see above)
            result = body.split("->")[-1]
            if "!ttg.memdesc<" in result:
                cached = "shared"  # shared-memory descriptors carry a shared encoding
            else:
                types = tensor_types(result)
                cached = encoding_kind(types[-1].encoding) if types else None
        op.__dict__["_result_encoding"] = cached  # pragma: no mutate (the cache's key: equivalent, see above)
    return cached


def _encoding_count(kind: str, op: Op, aliases: dict[str, str]) -> int:
    return int(_result_encoding(op, aliases) == kind)


def _shared_bytes(op: Op, aliases: dict[str, str]) -> int:
    m = _SHARED_ATTR.search(op.text)
    return int(m.group(1)) if m else 0


def _pipeline_depth(op: Op, aliases: dict[str, str]) -> int:
    if m := _MAX_STAGE.search(op.tail or op.text):
        return int(m.group(1)) + 1
    if op.name == "ttg.async_wait" and (m := _WAIT_NUM.search(op.text)):
        return int(m.group(1)) + 1
    return 0


def _waits_all(op: Op, aliases: dict[str, str]) -> int:
    return 1 if re.search(r"\bpendings = 0\b", op.text) else 0


CORE_RULES: list[OpRule] = [
    OpRule("sync.barrier", ("gpu.barrier", "ttg.local_barrier")),
    OpRule("sync.async_wait", ("ttg.async_wait",)),
    OpRule("sync.wgmma_wait_all", ("ttng.warp_group_dot_wait",), _waits_all),
    OpRule("layout.convert_layout", ("ttg.convert_layout",)),
    OpRule("layout.convert_layout_bytes", ("ttg.convert_layout",), _convert_bytes),
    OpRule("layout.local_alloc", ("ttg.local_alloc",)),
    OpRule("layout.local_load", ("ttg.local_load",)),
    OpRule("layout.local_store", ("ttg.local_store",)),
    OpRule("layout.shared_bytes", ("builtin.module",), _shared_bytes, aggregate=MAX),
    *[
        OpRule(f"layout.enc.{k}", ("*",), partial(_encoding_count, k))
        for k in ("blocked", "mma", "dot_op", "shared", "linear", "slice")
    ],
    OpRule("mem.load", ("tt.load", "tt.descriptor_load", "tt.descriptor_gather")),
    OpRule("mem.store", ("tt.store", "tt.descriptor_store", "tt.descriptor_scatter")),
    OpRule("mem.load_masked", ("tt.load",), _masked_load),
    OpRule("mem.store_masked", ("tt.store",), _masked_store),
    OpRule("mem.cp_async", ("ttg.async_copy_global_to_local",)),
    OpRule("compute.dot", ("tt.dot", "tt.dot_scaled", "ttng.warp_group_dot", "ttng.tc_gen5_mma")),
    OpRule("compute.dot_fma", ("tt.dot",), partial(_dot_encoding, "blocked", None)),
    OpRule("compute.mma_sync", ("tt.dot",), partial(_dot_encoding, "mma", 2)),
    OpRule("compute.reduce", ("tt.reduce",)),
    OpRule("compute.reduce_index", ("tt.reduce",), _index_reduce),
    OpRule("compute.scan", ("tt.scan",)),
    OpRule("compute.atomic", ("tt.atomic_rmw", "tt.atomic_cas")),
    OpRule("control.loop", ("scf.for", "scf.while")),
    OpRule("control.pipeline_stages", ("scf.for", "ttg.async_wait"), _pipeline_depth, aggregate=MAX),
    OpRule("control.warp_specialize", ("ttg.warp_specialize",)),
]
