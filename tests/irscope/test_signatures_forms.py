"""Every instruction form a PTX or SASS counter claims (docs/signatures.md) is counted, on real compiles.

Each form is first shown to occur in the compiled text, then the counter's total over that text must equal an
independent count: a regex over the PTX/SASS lines written here, not irscope's rules. A counter narrowed to one
form (shuffles to `bfly`, MMA to one shape, atomics to `atom`) then fails on the kernels that emit the others.
"""

import functools
import re

import pytest

from irscope import signatures
from irscope.parse.mlir import parse_mlir
from irscope.signatures import Analyzer, summary
from irscope.signatures.types import result_type
from tests.trajectory_cache import capture

from . import counter_kernels as k

# how each kernel is compiled; every one takes well under a second on the CPU
CASES = {
    "cumsum": lambda: capture(k.cumsum_kernel, "*fp32", "*fp32", N=1024),
    "gather": lambda: capture(k.gather_kernel, "*fp32", "*i32", "*fp32", N=128, num_warps=1),
    "atomics": lambda: capture(k.atomics_kernel, "*fp32", "*fp32", N=1024),
    "inline_ptx": lambda: capture(k.inline_ptx_kernel, "*fp32", "*i32", N=128),
    "print": lambda: capture(k.print_kernel, "*fp32", N=128),
    "spill": lambda: capture(k.spill_kernel, "*fp32", "*fp32", N=2048, num_warps=1, maxnreg=32),
    "wgmma": lambda: capture(k.matmul_kernel, "*fp16", "*fp16", "*fp32", 256, BM=64, BN=64, BK=32, num_stages=3),
    "mma_f16": lambda: capture(
        k.matmul_kernel, "*fp16", "*fp16", "*fp32", 256, BM=64, BN=64, BK=32, num_stages=3, target="cuda:80"
    ),
    # K=255 leaves the fp32 rows only 4-byte aligned: 4-byte `cp.async.ca` next to the 16-byte `.cg` ones
    "mma_tf32": lambda: capture(
        k.matmul_kernel, "*fp32", "*fp32", "*fp32", 255, BM=64, BN=64, BK=32, num_stages=3, target="cuda:80"
    ),
    "mma_s8": lambda: capture(
        k.matmul_kernel, "*i8", "*i8", "*fp32", 256, BM=64, BN=64, BK=32, num_stages=3, target="cuda:80"
    ),
    "tma": lambda: capture(k.tma_kernel, "*fp16", "*fp16", 256, 256, BM=64, BN=64),
    "special": lambda: capture(k.special_kernel, "*fp32", "*i32", "*fp16", "*fp32", N=1024),
    "int64_div": lambda: capture(k.int64_div_kernel, "*fp32", "*fp32", 3000, N=128),
}


@functools.cache
def compiled(case: str):
    traj = CASES[case]()
    return traj.stage_output("ptx").text, str(traj.artifacts["sass"].data), summary(traj)


# An instruction line, predicate included: `@%p1 shfl.sync…` in PTX, `/*0130*/ @!P0 SHFL.IDX …` in SASS.
PTX_LINE = r"^\s*(?:@!?%\w+\s+)?"
SASS_LINE = r"^\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?"

# (kind, counter) → every instruction the counter claims, written independently of irscope's rules
TOTALS = {
    ("ptx", "sync.shuffle"): r"shfl\.sync\.",
    ("ptx", "sync.barrier"): r"(?:bar|barrier)(?:\.cta)?\.sync\b",  # not bar.warp.sync (one warp) nor bar.red
    ("ptx", "sync.async_wait"): r"cp\.async\.(?:wait_group|wait_all|bulk\.wait_group)\b",
    ("ptx", "sync.mbarrier"): r"mbarrier\.",
    ("ptx", "sync.fence"): r"fence\.",
    ("ptx", "mem.cp_async"): r"cp\.async\.c[ag]\.",
    ("ptx", "mem.tma"): r"cp\.async\.bulk\.tensor\.",
    ("ptx", "mem.local_load"): r"ld\.local\.",
    ("ptx", "mem.local_store"): r"st\.local\.",
    ("ptx", "compute.mma_wgmma"): r"wgmma\.mma_async\.",
    ("ptx", "compute.mma_sync"): r"mma\.sync\.",
    ("ptx", "compute.atomic"): r"(?:atom|red)\.(?:global|shared)",
    ("ptx", "sync.redux"): r"redux\.sync\b",
    ("ptx", "mem.load"): r"ld\.global\b",
    ("ptx", "mem.store"): r"st\.global\b",
    ("ptx", "mem.shared_load"): r"(?:ld\.shared|ldmatrix)\b",
    ("ptx", "mem.shared_store"): r"(?:st\.shared|stmatrix)\b",
    ("ptx", "compute.special"): r"(?:ex2|lg2|rcp|rsqrt|sqrt|sin|cos|tanh)\.approx\b",
    ("ptx", "compute.int64_div"): r"(?:div|rem)\.[su]64\b",  # the remainder is often a multiply and subtract
    ("sass", "sync.shuffle"): r"SHFL\.",
    ("sass", "sync.barrier"): r"BAR\.(?:SYNC|RED)\b",
    ("sass", "sync.async_wait"): r"(?:LDGDEPBAR|DEPBAR)\b",
    ("sass", "sync.mbarrier"): r"SYNCS\.",
    ("sass", "sync.fence"): r"(?:FENCE|MEMBAR)\.",
    ("sass", "mem.cp_async"): r"LDGSTS\.",
    ("sass", "mem.tma"): r"(?:UTMALDG|UTMASTG|UBLKCP|UTMAPF)\b",
    ("sass", "mem.local_load"): r"LDL\b",
    ("sass", "mem.local_store"): r"STL\b",
    ("sass", "compute.mma_wgmma"): r"HGMMA\.",
    ("sass", "compute.mma_sync"): r"(?:HMMA|IMMA)\.",
    ("sass", "compute.atomic"): r"(?:ATOMG?|ATOMS|REDG?)\.",  # REDG: sm_90's global reduction without a result
    ("sass", "sync.redux"): r"REDUX\b",
    ("sass", "mem.load"): r"LDG\b",
    ("sass", "mem.store"): r"STG\b",
    ("sass", "mem.shared_load"): r"(?:LDS|LDSM)\b",
    ("sass", "mem.shared_store"): r"(?:STS|STSM)\b",
    ("sass", "compute.special"): r"MUFU\b",
    # the ALU mix: opcode lists (docs/signatures.md), so that a class counted as its sibling fails
    ("sass", "compute.fp_ops"): (
        r"(?:FADD|FMUL|FFMA|FMNMX|FSETP|FSEL|HADD2|HMUL2|HFMA2|HMNMX2|DADD|DMUL|DFMA|FCHK|FRND)\b"
    ),
    ("sass", "compute.int_ops"): r"(?:IADD3|IMAD|IMUL|LOP3|ISETP|SHF|LEA|IABS|IMNMX|SEL|PRMT|POPC|FLO)\b",
    ("sass", "compute.vector_fp_ops"): r"(?:HADD2|HMUL2|HFMA2|HMNMX2|HSET2|HSETP2)\b",
}

# (kind, counter, form, kernel whose text holds it, the form's own regex)
FORMS = [
    ("ptx", "sync.shuffle", "bfly", "atomics", r"shfl\.sync\.bfly\."),
    ("ptx", "sync.shuffle", "up", "cumsum", r"shfl\.sync\.up\."),
    ("ptx", "sync.shuffle", "idx", "gather", r"shfl\.sync\.idx\."),
    ("ptx", "sync.shuffle", "down", "inline_ptx", r"shfl\.sync\.down\."),
    ("ptx", "sync.barrier", "bar.sync", "cumsum", r"bar\.sync\b"),
    ("ptx", "sync.barrier", "barrier.sync", "inline_ptx", r"barrier\.sync\b"),
    ("ptx", "sync.barrier", "barrier.cta.sync", "inline_ptx", r"barrier\.cta\.sync\b"),
    ("ptx", "sync.async_wait", "wait_group", "wgmma", r"cp\.async\.wait_group\b"),
    ("ptx", "sync.async_wait", "wait_all", "inline_ptx", r"cp\.async\.wait_all\b"),
    ("ptx", "sync.async_wait", "bulk.wait_group", "tma", r"cp\.async\.bulk\.wait_group\b"),
    ("ptx", "sync.mbarrier", "mbarrier", "tma", r"mbarrier\.try_wait\."),
    ("ptx", "sync.fence", "fence.proxy", "tma", r"fence\.proxy\."),
    ("ptx", "mem.cp_async", "cg", "wgmma", r"cp\.async\.cg\."),
    ("ptx", "mem.cp_async", "ca", "mma_tf32", r"cp\.async\.ca\."),
    ("ptx", "mem.tma", "load", "tma", r"cp\.async\.bulk\.tensor\.\w+\.shared::cluster\.global"),
    ("ptx", "mem.tma", "store", "tma", r"cp\.async\.bulk\.tensor\.\w+\.global\.shared"),
    ("ptx", "mem.local_load", "ld.local", "inline_ptx", r"ld\.local\."),
    ("ptx", "mem.local_store", "st.local", "print", r"st\.local\."),
    ("ptx", "compute.mma_wgmma", "f16", "wgmma", r"wgmma\.mma_async\.\S*\.f16"),
    ("ptx", "compute.mma_sync", "f16", "mma_f16", r"mma\.sync\.\S*\.f16"),
    ("ptx", "compute.mma_sync", "tf32", "mma_tf32", r"mma\.sync\.\S*\.tf32"),
    ("ptx", "compute.mma_sync", "s8", "mma_s8", r"mma\.sync\.\S*\.s8"),
    ("ptx", "compute.atomic", "add", "atomics", r"atom\.global\.\S*\.add\."),
    ("ptx", "compute.atomic", "max", "atomics", r"atom\.global\.\S*\.max\."),
    ("ptx", "compute.atomic", "cas", "atomics", r"atom\.global\.\S*\.cas\."),
    ("ptx", "compute.atomic", "red", "inline_ptx", r"red\.global\."),
    ("ptx", "sync.redux", "redux.sync", "special", r"redux\.sync\."),
    ("ptx", "mem.load", "ld.global", "cumsum", r"ld\.global\."),
    ("ptx", "mem.store", "st.global", "cumsum", r"st\.global\."),
    ("ptx", "mem.shared_load", "ld.shared", "cumsum", r"ld\.shared\b"),
    ("ptx", "mem.shared_load", "ldmatrix", "mma_f16", r"ldmatrix\."),
    ("ptx", "mem.shared_store", "st.shared", "cumsum", r"st\.shared\b"),
    ("ptx", "compute.special", "ex2", "special", r"ex2\.approx\."),
    ("ptx", "compute.int64_div", "div.s64", "int64_div", r"div\.s64\b"),
    ("sass", "sync.shuffle", "BFLY", "atomics", r"SHFL\.BFLY\b"),
    ("sass", "sync.shuffle", "UP", "cumsum", r"SHFL\.UP\b"),
    ("sass", "sync.shuffle", "IDX", "gather", r"SHFL\.IDX\b"),
    ("sass", "sync.shuffle", "DOWN", "inline_ptx", r"SHFL\.DOWN\b"),
    ("sass", "sync.barrier", "BAR.SYNC", "cumsum", r"BAR\.SYNC\b"),
    ("sass", "sync.barrier", "BAR.RED", "inline_ptx", r"BAR\.RED\b"),
    ("sass", "sync.async_wait", "LDGDEPBAR", "wgmma", r"LDGDEPBAR\b"),
    ("sass", "sync.async_wait", "DEPBAR", "wgmma", r"DEPBAR\.LE\b"),
    ("sass", "sync.mbarrier", "SYNCS", "tma", r"SYNCS\."),
    ("sass", "sync.fence", "FENCE", "tma", r"FENCE\."),
    ("sass", "sync.fence", "MEMBAR", "tma", r"MEMBAR\."),
    ("sass", "mem.cp_async", "LDGSTS", "wgmma", r"LDGSTS\."),
    ("sass", "mem.tma", "UTMALDG", "tma", r"UTMALDG\b"),
    ("sass", "mem.tma", "UTMASTG", "tma", r"UTMASTG\b"),
    ("sass", "mem.local_load", "spill", "spill", r"LDL\b"),
    ("sass", "mem.local_store", "spill", "spill", r"STL\b"),
    ("sass", "mem.local_load", "ld.local", "inline_ptx", r"LDL\b"),
    ("sass", "mem.local_store", "st.local", "print", r"STL\b"),
    ("sass", "compute.mma_wgmma", "HGMMA", "wgmma", r"HGMMA\."),
    ("sass", "compute.mma_sync", "HMMA", "mma_f16", r"HMMA\."),
    ("sass", "compute.mma_sync", "HMMA.TF32", "mma_tf32", r"HMMA\.\S*TF32"),
    ("sass", "compute.mma_sync", "IMMA", "mma_s8", r"IMMA\."),
    ("sass", "compute.atomic", "ATOMG", "atomics", r"ATOMG\."),
    ("sass", "compute.atomic", "REDG", "atomics", r"REDG\."),
    ("sass", "compute.atomic", "REDG from red.global", "inline_ptx", r"REDG\."),
    ("sass", "sync.redux", "REDUX", "special", r"REDUX\b"),
    ("sass", "mem.load", "LDG", "cumsum", r"LDG\."),
    ("sass", "mem.store", "STG", "cumsum", r"STG\."),
    ("sass", "mem.shared_load", "LDS", "wgmma", r"LDS\b"),  # 17 LDS, 8 STS: a swap cannot pass unseen
    ("sass", "mem.shared_load", "LDSM", "mma_f16", r"LDSM\."),
    ("sass", "mem.shared_store", "STS", "tma", r"STS\b"),  # 34 STS, 26 LDS
    ("sass", "compute.special", "MUFU", "special", r"MUFU\."),
    ("sass", "compute.fp_ops", "FADD", "cumsum", r"FADD\b"),
    ("sass", "compute.fp_ops", "FMNMX", "atomics", r"FMNMX\b"),
    ("sass", "compute.int_ops", "IMAD", "cumsum", r"IMAD\b"),
    ("sass", "compute.int_ops", "IADD3", "mma_f16", r"IADD3\b"),
    ("sass", "compute.vector_fp_ops", "HFMA2", "special", r"HFMA2\b"),
]


def count(text: str, kind: str, opcode: str) -> int:
    return len(re.findall((PTX_LINE if kind == "ptx" else SASS_LINE) + opcode, text, re.M))


@pytest.mark.parametrize("kind,counter,form,case,pattern", FORMS, ids=[f"{kind}-{c}-{f}" for kind, c, f, _, _ in FORMS])
def test_counter_counts_every_form(kind, counter, form, case, pattern):
    ptx, sass, s = compiled(case)
    text = ptx if kind == "ptx" else sass
    assert count(text, kind, pattern) > 0, f"{case} no longer emits {form}: pick a kernel that does"
    assert s.get(f"{kind}.{counter}", 0) == count(text, kind, TOTALS[kind, counter])


def test_every_counted_pair_has_forms():
    assert {(kind, counter) for kind, counter, *_ in FORMS} == set(TOTALS)


def test_every_instruction_class_of_ptx_and_sass_has_a_total():
    """Each counter that counts the instructions of a class on PTX or SASS (a rule without a value function of
    its own) is checked against an independent total: shared loads counted as shared stores, or one class as its
    sibling, then fails on real code. Measures (vector widths, masks, bit widths, branches) are rules with a
    value function; res.instructions counts every instruction."""
    from irscope.backends.nvidia_counters import PTX_RULES, SASS_RULES

    classes = {(r.kind, r.counter) for r in PTX_RULES + SASS_RULES if r.value is None}
    assert classes - {("sass", "res.instructions")} <= set(TOTALS)


def test_one_warp_sync_and_barrier_reductions_are_no_ptx_cta_barrier():
    """`bar.warp.sync` synchronises one warp, `bar.red` is counted where ptxas writes it (BAR.RED): neither
    adds to the PTX barrier count."""
    ptx, _, s = compiled("tma")
    assert count(ptx, "ptx", r"bar\.warp\.sync\b") > 0
    assert s["ptx.sync.barrier"] == count(ptx, "ptx", r"bar\.sync\b")
    ptx, _, s = compiled("inline_ptx")
    assert count(ptx, "ptx", r"bar\.red\.") == 1
    assert s["ptx.sync.barrier"] == count(ptx, "ptx", r"barrier(?:\.cta)?\.sync\b") + count(ptx, "ptx", r"bar\.sync\b")


# ---- AMDGCN, for hip:gfx942 -----------------------------------------------------------------------------------

AMD_CASES = {
    "cumsum": lambda: capture(k.cumsum_kernel, "*fp32", "*fp32", N=1024, target="hip:gfx942"),
    "special": lambda: capture(k.special_kernel, "*fp32", "*i32", "*fp16", "*fp32", N=1024, target="hip:gfx942"),
    "mfma": lambda: capture(
        k.matmul_kernel, "*fp16", "*fp16", "*fp32", 256, BM=64, BN=64, BK=32, num_stages=2, target="hip:gfx942"
    ),
    "atomic": lambda: capture(k.atomic_add_kernel, "*fp32", "*fp32", N=1024, target="hip:gfx942"),
}


@functools.cache
def amd_compiled(case: str):
    traj = AMD_CASES[case]()
    return traj.stage_output("amdgcn").text, summary(traj)


# counter → every instruction it claims, written independently of irscope's rules
AMD_TOTALS = {
    "sync.barrier": r"s_barrier\b",
    "sync.shuffle": r"(?:ds_swizzle|ds_bpermute|ds_permute)\w*|v_\w+.*\b(?:row_shr|row_bcast|quad_perm|row_ror)",
    "mem.load": r"(?:global|buffer)_load",
    "mem.store": r"(?:global|buffer)_store",
    "mem.shared_load": r"ds_read",
    "mem.shared_store": r"ds_write",
    "compute.mma_amd": r"v_(?:mfma|wmma|smfmac)",
    "compute.atomic": r"(?:global|buffer|flat|ds)_atomic",
    "compute.special": r"v_(?:exp|log|rcp|rsq|sqrt|sin|cos)_",
}
# (counter, form, kernel, the form's own regex); shared loads and stores where their counts differ (60 and 9)
AMD_FORMS = [
    ("sync.barrier", "s_barrier", "mfma", r"s_barrier\b"),
    ("sync.shuffle", "ds_swizzle/bpermute", "cumsum", r"(?:ds_swizzle|ds_bpermute)"),
    ("sync.shuffle", "dpp", "special", r"v_\w+.*\b(?:row_shr|row_bcast|quad_perm|row_ror)"),
    ("mem.load", "global_load", "mfma", r"global_load"),
    ("mem.store", "global_store", "mfma", r"global_store"),
    ("mem.shared_load", "ds_read", "mfma", r"ds_read"),
    ("mem.shared_store", "ds_write", "mfma", r"ds_write"),
    ("compute.mma_amd", "mfma", "mfma", r"v_mfma"),
    ("compute.atomic", "buffer_atomic", "atomic", r"buffer_atomic"),
    ("compute.special", "v_exp", "special", r"v_exp_"),
]


def amd_count(text: str, pattern: str) -> int:
    return len(re.findall(r"^\s+" + pattern, text, re.M))


@pytest.mark.parametrize("counter,form,case,pattern", AMD_FORMS, ids=[f"{c}-{f}" for c, f, _, _ in AMD_FORMS])
def test_amdgcn_counter_counts_every_form(counter, form, case, pattern):
    asm, s = amd_compiled(case)
    assert amd_count(asm, pattern) > 0, f"{case} no longer emits {form}: pick a kernel that does"
    assert s.get(f"amdgcn.{counter}", 0) == amd_count(asm, AMD_TOTALS[counter])


def test_every_instruction_class_of_amdgcn_has_a_total_and_a_form():
    """As for PTX and SASS. Local loads and stores (scratch_*) are left out: no kernel here makes the AMD compiler
    spill (it has no register cap to force one); res.instructions counts every instruction."""
    from irscope.backends.amd_counters import AMDGCN_RULES

    classes = {r.counter for r in AMDGCN_RULES if r.value is None}
    assert classes - {"res.instructions", "mem.local_load", "mem.local_store"} == set(AMD_TOTALS)
    assert {c for c, *_ in AMD_FORMS} == set(AMD_TOTALS)


def test_signed_narrow_loads_count_their_own_width_per_line():
    """A signed 16- or 8-bit load is 16 or 8 bits wide on both stages (SASS names it `.S16`/`.S8`, beside the
    unsigned `.U16`/`.U8` of Triton's own narrow loads), and one 32-bit lane."""
    traj = capture(k.signed_narrow_kernel, "*i16", "*i32", N=128)
    sass = str(traj.artifacts["sass"].data)
    assert re.search(r"LDG\.E\.S16\b", sass) and re.search(r"LDG\.E\.S8\b", sass)
    lines = signatures.by_line(traj)
    for stage in ("ptx", "sass"):
        half, byte = sorted(n for n, counts in lines[stage].items() if counts.get("mem.load_bits_max"))
        assert lines[stage][half]["mem.load_bits_max"] == 16 and lines[stage][byte]["mem.load_bits_max"] == 8, stage
        assert lines[stage][half]["mem.load_vec1"] == lines[stage][byte]["mem.load_vec1"] >= 1, stage
    assert summary(traj)["sass.mem.load_bits_max"] == 16


# ---- Triton's own dialects (irscope/signatures/core_rules.py, types.py) ---------------------------------------
# The stages' final texts are in test_signatures_record.py; here the snapshots between passes (the loop schedule
# before the pipeliner) and each op line of a compile, read independently.


@functools.cache
def matmul(num_stages: int):
    return capture(k.matmul_kernel, "*fp16", "*fp16", "*fp32", 256, BM=64, BN=64, BK=32, num_stages=num_stages)


def source_line(traj, text: str) -> int:
    return next(i for i, line in enumerate(traj.kernel.source.splitlines(), start=1) if line.strip() == text)


@pytest.mark.parametrize("num_stages", [3, 4])
def test_the_loop_schedule_counts_its_stages_on_the_loop(num_stages):
    """Before the pipeliner, the loop schedule marks the loop with its last stage (`tt.scheduled_max_stage`, on the
    loop's closing line): the pipeline's depth is that stage plus one, the number of stages asked for."""
    traj = matmul(num_stages)
    snap = next(s for s in traj.snapshots if s.pass_arg == "tritongpu-schedule-loops")
    marks = [int(m) for m in re.findall(r"\}.*\{tt\.scheduled_max_stage = (\d+)", snap.text)]
    assert marks == [num_stages - 1], "the schedule marks the loop's closing line"
    sig = Analyzer(traj).signature(snap)
    assert sig.counters["control.pipeline_stages"] == num_stages
    loop = source_line(traj, "for k in range(0, K, BK):")
    assert {ln: c["control.pipeline_stages"] for ln, c in sig.lines.items() if "control.pipeline_stages" in c} == {
        loop: num_stages
    }


# the last tensor type of a line: its shape and its element (a pointer's included)
LAST_TENSOR = re.compile(r"tensor<((?:\d+x)*)(!tt\.ptr<\w+>|\w+)")


@pytest.mark.parametrize("stage", ["ttir", "ttgir"])
def test_result_type_is_the_last_tensor_type_of_an_op_line(stage):
    """`result_type` reads an op's line: the last tensor type before its location, and None on a line that names
    no tensor (a scalar constant, a return)."""
    traj = matmul(3)
    ops = parse_mlir(traj.stage_output(stage).text).ops
    scalar = [op for op in ops if "tensor<" not in op.text]
    assert {"arith.constant", "tt.return"} <= {op.name for op in scalar}
    for op in scalar:
        assert result_type(op.text) is None, op.text
    tensors = [op for op in ops if "tensor<" in op.text]
    assert len(tensors) > 10
    for op in tensors:
        shape, element = LAST_TENSOR.findall(op.text)[-1]
        t = result_type(op.text)
        assert t is not None, op.text
        assert (t.shape, t.element) == (tuple(int(d) for d in shape.split("x") if d), element), op.text
