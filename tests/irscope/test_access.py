"""Memory-access analysis: the AxisInfo rules on a few lines of TTIR each, then real cuda:90 compiles of small
kernels (tests/irscope/access_kernels.py) whose accesses must get the verdict their pattern implies, with the
vector width the compile emitted."""

from functools import cache

import pytest

import irscope
from irscope.access import VERDICTS, AccessError, accesses, emitted_widths
from irscope.axisinfo import MAX_DIVISOR, analyze
from irscope.cli import main as cli_main

from . import access_kernels as K


def module(args: str, body: str) -> str:
    lines = "\n".join(f"    {line.strip()}" for line in body.strip().splitlines())
    return f"module {{\n  tt.func public @k({args}) {{\n{lines}\n    tt.return\n  }}\n}}\n"


def facts(a, name):
    """Every fact of an SSA name, in text order (the printer reuses names in sibling regions)."""
    keys = sorted((k for k in a.facts if k.split("@")[0] == name), key=lambda k: int(k.split("@")[1]))
    return [a.facts[k] for k in keys]


def fact(a, name):
    (f,) = facts(a, name)
    return f.info


ARGS = "%x_ptr: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %n: i32 {tt.divisibility = 16 : i32}, %m: i32"


def test_range_times_stride():
    a = analyze(
        module(
            ARGS,
            """
            %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
            %sn = tt.splat %n : i32 -> tensor<128xi32>
            %by_n = arith.muli %r, %sn : tensor<128xi32>
            %one = arith.constant dense<1> : tensor<128xi32>
            %by_1 = arith.muli %r, %one : tensor<128xi32>
            %four = arith.constant dense<4> : tensor<128xi32>
            %by_4 = arith.muli %r, %four : tensor<128xi32>
            %sm = tt.splat %m : i32 -> tensor<128xi32>
            %plus_m = arith.addi %sm, %r : tensor<128xi32>
            %p = tt.splat %x_ptr : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
            %q = tt.addptr %p, %r : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
            """,
        )
    )
    # arange(0, 128): one run of 128, starting at 0 (divisible by anything)
    assert fact(a, "%r").contiguity == (128,) and fact(a, "%r").divisibility == (MAX_DIVISOR,)
    # × a runtime n: no run survives; a range counts as divisibility 1, times n's 16
    assert fact(a, "%by_n").contiguity == (1,) and fact(a, "%by_n").divisibility == (16,)
    # × 1 keeps the range (how the JIT's constant 1 for an int argument shows before canonicalize folds it)
    assert fact(a, "%by_1").contiguity == (128,)
    assert fact(a, "%by_4").contiguity == (1,) and fact(a, "%by_4").divisibility == (4,)
    # m + arange: still one run, but m's start carries no divisibility
    assert fact(a, "%plus_m").contiguity == (128,) and fact(a, "%plus_m").divisibility == (1,)
    # pointer + arange: divisibility in bytes, gcd(16, MAX × 4 bytes) = 16; the pointer is a pointer
    assert fact(a, "%q").contiguity == (128,) and fact(a, "%q").divisibility == (16,)
    assert facts(a, "%q")[0].pointer and not facts(a, "%r")[0].pointer


def test_two_dimensional_tile_and_masks():
    a = analyze(
        module(
            ARGS,
            """
            %r = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
            %row = tt.expand_dims %r {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
            %col = tt.expand_dims %r {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
            %sn = tt.splat %n : i32 -> tensor<64x1xi32>
            %rows = arith.muli %row, %sn : tensor<64x1xi32>
            %a = tt.broadcast %rows : tensor<64x1xi32> -> tensor<64x64xi32>
            %b = tt.broadcast %col : tensor<1x64xi32> -> tensor<64x64xi32>
            %o = arith.addi %a, %b : tensor<64x64xi32>
            %sn1 = tt.splat %n : i32 -> tensor<64xi32>
            %sm1 = tt.splat %m : i32 -> tensor<64xi32>
            %in_n = arith.cmpi slt, %r, %sn1 : tensor<64xi32>
            %in_m = arith.cmpi slt, %r, %sm1 : tensor<64xi32>
            %both = arith.andi %in_n, %in_m : tensor<64xi1>
            %always = arith.constant dense<true> : tensor<64xi1>
            """,
        )
    )
    o = fact(a, "%o")
    # rows × n are constant along dim 1 (broadcast), the columns contiguous there: runs of 64 along dim 1 only
    assert o.contiguity == (1, 64) and o.constancy == (1, 1)
    # dim 1 starts: n's 16 (the new axis of a range counts 1, times 16); dim 0: the column range's new axis, 1
    assert o.divisibility == (1, 16)
    # `offs < n`: the mask flips at most once per run, so it is constant over gcd(64, MAX, 16) = 16 elements
    assert fact(a, "%in_n").constancy == (16,)
    assert fact(a, "%in_m").constancy == (1,)  # m has no divisibility: it may flip anywhere
    assert fact(a, "%both").constancy == (1,)
    assert fact(a, "%always").constancy == (64,) and fact(a, "%always").constant == 1


def test_loaded_values_and_hints():
    a = analyze(
        module(
            "%idx_ptr: !tt.ptr<i32> {tt.divisibility = 16 : i32}, %m: i32",
            """
            %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
            %p = tt.splat %idx_ptr : !tt.ptr<i32> -> tensor<128x!tt.ptr<i32>>
            %q = tt.addptr %p, %r : tensor<128x!tt.ptr<i32>>, tensor<128xi32>
            %v = tt.load %q : tensor<128x!tt.ptr<i32>>
            %g = tt.addptr %p, %v : tensor<128x!tt.ptr<i32>>, tensor<128xi32>
            %start = arith.muli %m, %m {tt.divisibility = dense<16> : tensor<1xi32>} : i32
            %c64 = arith.constant dense<64> : tensor<128xi32>
            %wrap = arith.remsi %r, %c64 : tensor<128xi32>
            """,
        )
    )
    assert fact(a, "%v").contiguity == (1,) and fact(a, "%v").divisibility == (1,)  # data, not addresses
    assert fact(a, "%g").contiguity == (1,)
    assert fact(a, "%start").divisibility == (16,)  # tl.multiple_of overrides what the rules derived (1)
    # arange(128) % 64: runs of gcd(128, MAX, 64) = 64
    assert fact(a, "%wrap").contiguity == (64,)


def test_loop_carried_pointers_reach_a_fixpoint_and_names_stay_apart():
    body = """
        %c0 = arith.constant 0 : i32
        %c64 = arith.constant 64 : i32
        %r = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
        %p0 = tt.splat %x_ptr : !tt.ptr<f32> -> PTRS
        %q0 = tt.addptr %p0, %r : PTRS, tensor<128xi32>
        %step = arith.constant dense<64> : tensor<128xi32>
        %sm = tt.splat %m : i32 -> tensor<128xi32>
        %res:2 = scf.for %i = %c0 to %n step %c64 iter_args(%p = %q0, %p2 = %q0) -> (PTRS, PTRS)  : i32 {
          %x = tt.addptr %p, %step : PTRS, tensor<128xi32>
          %y = tt.addptr %p2, %sm : PTRS, tensor<128xi32>
          scf.yield %x, %y : PTRS, PTRS
        }
        scf.for %j = %c0 to %n step %c64  : i32 {
          %x = tt.load %q0 : PTRS
        }
        %c = arith.cmpi slt, %m, %n : i32
        %either = scf.if %c -> (PTRS) {
          %even = tt.addptr %q0, %step : PTRS, tensor<128xi32>
          scf.yield %even : PTRS
        } else {
          %odd = tt.addptr %q0, %step : PTRS, tensor<128xi32>
          scf.yield %odd : PTRS
        }
        %res2 = scf.for %k = %c0 to %n step %c64 iter_args(%w = %either) -> (PTRS)  : i32 {
          %w2 = tt.addptr %w, %step : PTRS, tensor<128xi32>
          scf.yield %w2 : PTRS
        }
    """
    a = analyze(module(ARGS, body.replace("PTRS", "tensor<128x!tt.ptr<f32>>")))
    # the induction variable: divisible by gcd(lower bound 0 → MAX, step 64) = 64
    assert fact(a, "%i").divisibility == (64,)
    # p advances by 64 elements (256 bytes) per trip: still runs of 128 starting 16-byte aligned
    assert fact(a, "%p").contiguity == (128,) and fact(a, "%p").divisibility == (16,)
    # p2 advances by m elements: after the first trip only gcd(16, 1 × 4 bytes) = 4 is certain
    assert fact(a, "%p2").divisibility == (4,) and fact(a, "%res#1").divisibility == (4,)
    # %x names an address in the first loop and loaded data in the second
    first, second = facts(a, "%x")
    assert first.pointer and first.info.contiguity == (128,)
    assert not second.pointer and second.info.contiguity == (1,)
    # a branch result feeding a loop: both branches are runs of 128 at 16 bytes, and so is every trip (the
    # result is known once its yields are: set earlier, a first guess would stick in the loop's join)
    assert fact(a, "%either").contiguity == (128,) and fact(a, "%either").divisibility == (16,)
    assert fact(a, "%w").contiguity == (128,) and fact(a, "%w").divisibility == (16,)


def test_emitted_widths_read_inline_ptx_and_llvm_types():
    text = "\n".join(
        [
            '#loc1 = loc("k.py":3:4)',
            '#loc2 = loc("k.py":5:6)',
            '#loc3 = loc("k.py":7:8)',
            "module {",
            '  %0 = llvm.inline_asm has_side_effects asm_dialect = att operand_attrs = [] "mov.u32 $0, 0x0;\\0A\\09'
            '@$3 ld.global.v2.b32 { $0, $1 }, [ $2 + 0 ];", "=r,=r,l,b" %p, %m : (!llvm.ptr<1>, i1) -> '
            "!llvm.struct<(i32, i32)> loc(#loc1)",
            '  %1 = llvm.inline_asm has_side_effects asm_dialect = att operand_attrs = [] "cp.async.ca.shared.global'
            ' [ $0 + 0 ], [ $1 + 0 ], 0x8, $2;", "r,l,r" %s, %p, %n : (!llvm.ptr<3>, !llvm.ptr<1>, i32) -> '
            "!llvm.void loc(#loc2)",
            '  %2 = llvm.inline_asm has_side_effects asm_dialect = att operand_attrs = [] "@$2 atom.global.gpu.'
            'acq_rel.add.noftz.f16x2 $0, [ $1 + 0 ], $2;", "=r,l,r" %p, %v : (!llvm.ptr<1>, i32) -> i32 loc(#loc3)',
            "  %3 = llvm.load %p {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32> loc(#loc3)",
            "  %4 = llvm.load %s {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32> loc(#loc3)",
            "}",
        ]
    )
    widths = {frames[0].line: found for frames, found in emitted_widths(text).items()}
    # v2 × b32; cp.async copies 0x8 bytes; f16x2 is one 32-bit lane; vector<4xf32>; shared memory is skipped
    assert widths == {3: [("load", 64)], 5: [("load", 64)], 7: [("atomic", 32), ("load", 128)]}


@cache
def compiled(kernel_name: str, *args, **constexprs):
    return irscope.capture(getattr(K, kernel_name), *args, target="cuda:90", **constexprs)


def line_of(traj, text):
    return next(i for i, line in enumerate(traj.kernel.source.splitlines(), start=1) if line.strip() == text)


def by_line(traj, text, kind):
    line = line_of(traj, text)
    return [x for x in accesses(traj) if x.line == line and x.kind == kind]


def test_contiguous_aligned_copy_is_wide():
    traj = compiled("copy", "*fp32", "*fp32", 4096, BLOCK=1024)
    (load,) = by_line(traj, "x = tl.load(x_ptr + offs, mask=mask)", "load")
    (store,) = by_line(traj, "tl.store(y_ptr + offs, x, mask=mask)", "store")
    for x in (load, store):
        assert x.verdict == "wide" and x.vector_bits == 128 and x.element_bits == 32
        # 1024 elements over 4 warps × 32 threads
        assert x.shape == (1024,) and x.elements_per_thread == 8 and x.contiguity == 1024
        assert x.divisibility == 4  # 16-byte aligned pointers, 4-byte elements
        assert x.mask_alignment == 16  # n = 4096 is specialized divisible by 16


def test_masked_tail_with_an_odd_bound_is_narrow():
    traj = compiled("copy", "*fp32", "*fp32", 4095, BLOCK=1024)
    (load,) = by_line(traj, "x = tl.load(x_ptr + offs, mask=mask)", "load")
    assert load.verdict == "narrow" and load.vector_bits == 32 and load.mask_alignment == 1
    assert "mask" in load.why and "from n" in load.why


def test_column_read_is_uncoalesced():
    traj = compiled("column", "*fp32", "*fp32", 4096, BLOCK=128)
    (load,) = by_line(traj, "x = tl.load(x_ptr + col + offs * n_cols)", "load")
    assert load.verdict == "uncoalesced" and load.contiguity == 1 and load.vector_bits == 32
    assert "multiplied by n_cols" in load.why
    # 128 elements over 128 threads: one each, which is all the store can move at once
    (store,) = by_line(traj, "tl.store(y_ptr + col * BLOCK + offs, x)", "store")
    assert store.verdict == "wide" and store.vector_bits == 32 and store.elements_per_thread == 1


@pytest.mark.parametrize(("n_cols", "verdict", "bits"), [(4095, "narrow", 32), (4096, "wide", 128)])
def test_row_read_width_follows_the_divisibility_of_n_cols(n_cols, verdict, bits):
    traj = compiled("row", "*fp32", "*fp32", n_cols, BLOCK=1024)
    assert traj.specialization.attrs["n_cols"] == ([["tt.divisibility", 16]] if n_cols % 16 == 0 else [])
    (load,) = by_line(traj, "x = tl.load(x_ptr + r * n_cols + offs)", "load")
    assert (load.verdict, load.vector_bits, load.contiguity) == (verdict, bits, 1024)
    if verdict == "narrow":
        assert load.divisibility == 1 and "from n_cols" in load.why


def test_indirect_load_is_a_gather():
    traj = compiled("gather", "*fp32", "*i32", "*fp32", BLOCK=1024)
    index, value = by_line(traj, "x = tl.load(x_ptr + tl.load(idx_ptr + offs))", "load")  # IR order
    assert index.verdict == "wide" and index.vector_bits == 128
    assert value.verdict == "gather" and value.contiguity == 1 and value.vector_bits == 32
    assert f"loaded on line {index.line}" in value.why


def test_per_program_scalar_store():
    traj = compiled("row_sum", "*fp32", "*fp32", BLOCK=1024)
    (store,) = by_line(traj, "tl.store(y_ptr + pid, total)", "store")
    assert store.verdict == "scalar" and store.shape == () and store.dim is None and store.vector_bits == 32


@pytest.mark.parametrize(("stride", "verdict", "bits"), [(64, "wide", 128), (63, "narrow", 32)])
def test_tile_with_contiguous_axis_last_and_first(stride, verdict, bits):
    traj = compiled("transpose", "*fp32", "*fp32", stride, BM=64, BN=64)
    (load,) = by_line(traj, "x = tl.load(x_ptr + rm[:, None] * stride + rn[None, :])", "load")
    (store,) = by_line(traj, "tl.store(y_ptr + rm[:, None] + rn[None, :] * stride, x)", "store")
    # Coalesce orders each access by its own contiguity: the load runs along dim 1, the store along dim 0
    assert (load.dim, store.dim) == (1, 0) and load.contiguity == store.contiguity == 64
    for x in (load, store):
        assert (x.verdict, x.vector_bits) == (verdict, bits)
    if verdict == "narrow":
        assert "from stride" in load.why and "from stride" in store.why


def test_int_argument_one_is_a_constant_and_keeps_the_range():
    traj = compiled("strided", "*fp32", "*fp32", 1, BLOCK=1024)
    assert traj.specialization.constexprs["stride"] == 1  # the JIT made it a constant; canonicalize folded `× 1`
    (load,) = by_line(traj, "x = tl.load(x_ptr + offs * stride)", "load")
    assert load.verdict == "wide" and load.vector_bits == 128
    two = compiled("strided", "*fp32", "*fp32", 2, BLOCK=1024)
    (load,) = by_line(two, "x = tl.load(x_ptr + offs * stride)", "load")
    assert load.verdict == "uncoalesced" and "multiplied by stride" in load.why


def test_pipelined_matmul_copies_merge_into_one_access_per_line(matmul_dump):
    traj = matmul_dump[0]
    found = accesses(traj)
    ops = [x.op for x in found]
    # the pipeliner's prologue and loop copies of each tl.load share its location: one access each
    assert ops.count("ttg.async_copy_global_to_local") == 2 and ops.count("tt.store") == 1
    assert all(x.verdict == "wide" and x.vector_bits == 128 and x.element_bits == 16 for x in found)
    assert all(x.verdict in VERDICTS for x in found)


def test_amd_buffer_ops():
    traj = irscope.capture(K.row, "*fp32", "*fp32", 4095, BLOCK=1024, target="hip:gfx942")
    load, store = accesses(traj)
    assert load.op == "amdg.buffer_load" and load.verdict == "narrow" and load.vector_bits == 32
    assert "from n_cols" in load.why
    assert store.op == "amdg.buffer_store" and store.verdict == "wide" and store.vector_bits == 128


def test_show_lists_memory_accesses(tmp_path, capsys):
    out = tmp_path / "column"
    spec = ["--arg", "x_ptr=*fp32", "--arg", "y_ptr=*fp32", "--arg", "n_cols=4095", "--constexpr", "BLOCK=128"]
    assert cli_main(["dump", f"{K.__file__}:column", *spec, "--no-disassemble", "--out", str(out)]) == 0
    capsys.readouterr()
    assert cli_main(["show", str(out)]) == 0
    text = capsys.readouterr().out
    assert "memory accesses" in text
    rows = [line for line in text.splitlines() if "uncoalesced" in line]
    assert len(rows) == 1 and "load" in rows[0] and "128" in rows[0]


def test_a_compile_stopped_after_ttir_gets_predicted_widths():
    """The same kernels cut after their TTIR stage, as a compile failing in TTGIR would leave them: the
    verdicts still follow from the analysis, with the layout Coalesce would pick and no emitted width."""
    for kernel, args, text, verdict in [
        ("row", ("*fp32", "*fp32", 4095), "x = tl.load(x_ptr + r * n_cols + offs)", "narrow"),
        ("row", ("*fp32", "*fp32", 4096), "x = tl.load(x_ptr + r * n_cols + offs)", "wide"),
        ("column", ("*fp32", "*fp32", 4096), "x = tl.load(x_ptr + col + offs * n_cols)", "uncoalesced"),
    ]:
        full = compiled(kernel, *args, BLOCK=1024)
        cut = irscope.Trajectory(full.kernel, full.target, full.specialization, full.stage_snapshots("ttir"))
        (load,) = by_line(cut, text, "load")
        assert load.verdict == verdict and load.vector_bits is None
        assert load.elements_per_thread == 8  # 1024 elements over num_warps 4 × 32 threads
        if verdict != "uncoalesced":
            assert "predicted" in load.why


def test_trajectories_without_triton_ir_or_gpu_threads_are_refused():
    full = compiled("copy", "*fp32", "*fp32", 4096, BLOCK=1024)
    empty = irscope.Trajectory(full.kernel, full.target, full.specialization, [])
    with pytest.raises(AccessError, match="no TTIR or TTGIR was captured"):
        accesses(empty)
    npu = irscope.Trajectory(full.kernel, irscope.parse_target("npu:Ascend910B4"), full.specialization, [])
    with pytest.raises(AccessError, match="models GPU threads"):
        accesses(npu)


@pytest.mark.parametrize(("step", "verdict", "bits"), [(4096, "wide", 128), (4095, "narrow", 32)])
def test_while_loop_pointers_and_branch_results_are_followed(step, verdict, bits):
    """Like MLIR's solver, the analysis follows values into scf.while and out of scf.if: the loop's pointer
    keeps its runs and is as aligned as `step`; the branch's result is contiguous only if both branches are."""
    traj = compiled("walk", "*fp32", "*fp32", 100, step, BLOCK=1024)
    (load,) = by_line(traj, "acc += tl.load(ptrs)", "load")
    assert (load.verdict, load.vector_bits, load.contiguity) == (verdict, bits, 1024)
    if verdict == "narrow":
        assert "from step" in load.why
    (store,) = by_line(traj, "tl.store(out, acc)", "store")
    assert store.verdict == "uncoalesced" and "multiplied by the constant 2" in store.why


@pytest.mark.parametrize(("m", "n", "verdict"), [(63, 64, "wide"), (63, 63, "narrow")])
def test_only_the_mask_bound_along_the_fast_axis_caps_the_width(m, n, verdict):
    """`(rm < M) & (rn < N)` changes along the rows' fast axis (dim 1) only where rn < N does: an odd M
    leaves the vectors whole, an odd N splits them, and the explanation names N alone."""
    traj = compiled("masked_tile", "*fp32", "*fp32", m, n, 64, BM=64, BN=64)
    (load,) = by_line(traj, "x = tl.load(x_ptr + rm[:, None] * stride + rn[None, :], mask=mask)", "load")
    assert load.dim == 1 and load.verdict == verdict
    # N = 64 carries tt.divisibility 16: the mask is constant over gcd(64, MAX, 16) = 16 elements
    assert load.mask_alignment == (16 if n == 64 else 1)
    if verdict == "narrow":
        assert load.vector_bits == 32 and "mask constant over runs of only 1 element(s) (from N)" in load.why


def test_a_contiguous_index_divided_by_a_uniform_value_reads_runs_not_a_stride():
    """`offs // HW` moves by at most one element between neighbours (a runtime or a constant divisor alike), and a
    remainder or an added base keeps that; a stride after the division, or a range as the divisor, does not."""
    traj = compiled("per_channel", "*fp32", "*fp32", "*fp32", 196, 1024, 7, BLOCK=1024)
    (channel,) = by_line(traj, "s = tl.load(scale_ptr + (offs // HW) % C)", "load")
    assert channel.verdict == "runs" and "divided by HW" in channel.why
    (constant,) = by_line(traj, "t = tl.load(scale_ptr + 1 + offs // 16)", "load")
    assert constant.verdict == "runs" and "divided by the constant 16" in constant.why
    (strided,) = by_line(traj, "u = tl.load(scale_ptr + (offs // HW) * stride)", "load")
    assert strided.verdict == "uncoalesced"
    (inverse,) = by_line(traj, "v = tl.load(scale_ptr + HW // (offs + 1))", "load")
    assert inverse.verdict == "uncoalesced"
