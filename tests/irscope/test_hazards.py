"""irscope.hazards on real cuda:90 compiles: each detector fires on the mechanism it states, names the pass behind
it, and stays silent on the healthy twin (tests/irscope/hazard_kernels.py)."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from irscope import hazards, signatures
from irscope.hazards import cost, detectors
from irscope.hazards.model import Hazard, PassRef
from irscope.hazards.plan import Plan
from irscope.trajectory import Trajectory
from tests import trajectory_cache
from tests.irscope import cause_kernels as C
from tests.irscope import hazard_kernels as K

RECORD = Path(__file__).with_name("hazards_recorded.json")

MM = dict(a_ptr="*bf16", b_ptr="*bf16", c_ptr="*bf16", M=4096, N=4096, K=4096)
FP8 = dict(MM, a_ptr="*fp8e4nv", b_ptr="*fp8e4nv")
TILE = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=4)
CHANNELS = dict(x_ptr="*bf16", scale_ptr="*fp32", out_ptr="*bf16", n=1 << 24, HW=196, C=1024)
CASES = {
    "row_sum_8_warps": (K.row_sum, dict(x_ptr="*fp32", out_ptr="*fp32", n_cols=4096), dict(BLOCK=4096, num_warps=8)),
    "row_sum_1_warp": (K.row_sum, dict(x_ptr="*fp32", out_ptr="*fp32", n_cols=1024), dict(BLOCK=1024, num_warps=1)),
    "row_sum_2_warps": (K.row_sum, dict(x_ptr="*fp32", out_ptr="*fp32", n_cols=1024), dict(BLOCK=1024, num_warps=2)),
    "top1_then_second": (K.top1_then_second, dict(x_ptr="*fp32", out_ptr="*fp32", n=256), dict(BLOCK=256)),
    "scatter_count": (K.scatter_count, dict(idx_ptr="*i32", counts_ptr="*i32", n=4096), dict(BLOCK=1024)),
    "partial_sum_atomic": (
        K.partial_sum_atomic,
        dict(x_ptr="*fp32", total_ptr="*fp32", n=4096),
        dict(BLOCK=1024, num_warps=1),
    ),
    "matmul_pipelined": (K.tile_matmul, MM, dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=4, num_stages=3)),
    "matmul_one_stage": (K.tile_matmul, MM, dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=4, num_stages=1)),
    "matmul_two_warps": (K.tile_matmul, MM, dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, num_warps=2, num_stages=3)),
    "matmul_thin_m": (K.tile_matmul, MM, dict(BLOCK_M=16, BLOCK_N=64, BLOCK_K=32, num_warps=4, num_stages=3)),
    "ieee_dot": (K.ieee_dot, dict(a_ptr="*fp32", b_ptr="*fp32", c_ptr="*fp32"), dict(BLOCK=64)),
    "column_read": (
        K.column_read,
        dict(x_ptr="*fp32", out_ptr="*fp32", n_rows=1024, n_cols=4096),
        dict(BLOCK=1024),
    ),
    "copy_aligned": (K.copy_rows, dict(x_ptr="*fp32", out_ptr="*fp32", n_cols=4096), dict(BLOCK=1024)),
    "copy_odd": (K.copy_rows, dict(x_ptr="*fp32", out_ptr="*fp32", n_cols=4095), dict(BLOCK=1024)),
    "copy_odd_fp16": (K.copy_rows, dict(x_ptr="*fp16", out_ptr="*fp16", n_cols=4095), dict(BLOCK=1024)),
    "copy_odd_int8": (K.copy_rows, dict(x_ptr="*i8", out_ptr="*i8", n_cols=4095), dict(BLOCK=1024)),
    "scale_in_loop": (K.scaled_matmul, {**MM, "s_ptr": "*fp32"}, dict(TILE, SCALE_IN_LOOP=True, num_stages=3)),
    "scale_after_loop": (K.scaled_matmul, {**MM, "s_ptr": "*fp32"}, dict(TILE, SCALE_IN_LOOP=False, num_stages=3)),
    "running_row_max": (
        K.running_row_max,
        dict(a_ptr="*bf16", b_ptr="*bf16", out_ptr="*fp32", N=4096),
        dict(K=64, BLOCK_M=128, BLOCK_N=128, num_warps=4, num_stages=3),
    ),
    "matmul_while": (K.while_matmul, MM, dict(TILE, num_stages=3)),
    "fp8_b_n_major": (K.fp8_matmul, FP8, dict(TILE, B_K_CONTIGUOUS=False, num_stages=3)),
    "fp8_b_k_major": (K.fp8_matmul, FP8, dict(TILE, B_K_CONTIGUOUS=True, num_stages=3)),
    "channel_int64": (K.channel_scale, CHANNELS, dict(BLOCK=1024, WIDE=True)),
    "channel_int32": (K.channel_scale, CHANNELS, dict(BLOCK=1024, WIDE=False)),
    "mask_by_value": (
        K.keep_positive,
        dict(x_ptr="*fp32", out_ptr="*fp32", n=4096),
        dict(BLOCK=1024, MASK_BY_VALUE=True),
    ),
    "select_then_store": (
        K.keep_positive,
        dict(x_ptr="*fp32", out_ptr="*fp32", n=4096),
        dict(BLOCK=1024, MASK_BY_VALUE=False),
    ),
    **{
        f"scaled_by_{factor}": (
            K.scaled_in_loop,
            {**MM, "s_ptr": "*fp32", "t_ptr": "*fp32"},
            dict(TILE, FACTOR=i, num_stages=3),
        )
        for i, factor in enumerate(("block", "row_times_column", "tile", "exp"))
    },
    "both_axes_sum": (K.both_axes_sum, dict(x_ptr="*fp32", out_ptr="*fp32"), dict(ROWS=64, BLOCK=128, num_warps=8)),
    "batched_dot": (
        K.batched_dot,
        dict(a_ptr="*bf16", b_ptr="*bf16", c_ptr="*bf16"),
        dict(B=2, M=64, N=64, K=64, num_warps=4),
    ),
    "copy_pairs": (K.copy_pairs, dict(x_ptr="*fp32", out_ptr="*fp32", n=4096), dict(BLOCK=1024)),
    **{
        f"gather_{name}": (
            K.gather,
            dict(x_ptr="*fp32", idx_ptr="*i32", out_ptr="*fp32", N=4096),
            dict(ROWS=64, COLS=64, BOTH=both),
        )
        for name, both in (("rows", False), ("rows_and_columns", True))
    },
    "argmax_alone": (K.argmax_alone, dict(x_ptr="*fp32", out_ptr="*i32", n=1024), dict(BLOCK=1024, num_warps=4)),
    "strided_sum": (
        K.strided_sum,
        dict(x_ptr="*fp32", out_ptr="*fp32", stride=4099, n_steps=64, shift=4097),
        dict(BLOCK=1024),
    ),
    "max_with_payload": (
        K.max_with_payload,
        dict(x_ptr="*fp32", w_ptr="*fp32", out_ptr="*fp32", n=1024),
        dict(BLOCK=1024, num_warps=4),
    ),
    **{
        f"row_sums{'_scaled' if scaled else ''}": (
            C.row_sums,
            dict(x_ptr="*fp32", s_ptr="*fp32", out_ptr="*fp32", n_rows=64, n_cols=4096),
            dict(BLOCK=1024, SCALED=scaled),
        )
        for scaled in (False, True)
    },
    **{
        f"ranged_{stages}_stage{'s' if stages > 1 else ''}_{name}": (
            C.ranged_sum,
            dict(x_ptr="*fp16", out_ptr="*fp32", n=4096, shift=shift),
            dict(BLOCK=1024, STAGES=stages),
        )
        for stages, name, shift in ((1, "narrow", 4097), (2, "narrow", 4097), (2, "aligned", 4096))
    },
    "converted_operand_odd_k": (C.converted_matmul, dict(MM, a_ptr="*fp16", K=4095), dict(TILE, num_stages=3)),
    "loops_in_sequence": (
        C.loops_in_sequence,
        dict(x_ptr="*fp32", h_ptr="*fp16", out_ptr="*fp32", n=4096),
        dict(BLOCK=1024),
    ),
    "matmul_four_stages": (K.tile_matmul, MM, dict(TILE, num_stages=4)),
    "matmul_wide_8_warps": (K.tile_matmul, MM, dict(TILE, BLOCK_N=256, num_warps=8, num_stages=2)),
    "ieee_dot_no_sass": (
        K.ieee_dot,
        dict(a_ptr="*fp32", b_ptr="*fp32", c_ptr="*fp32"),
        dict(BLOCK=64, disassemble=False),
    ),
    "ieee_dot_8_warps": (
        K.ieee_dot,
        dict(a_ptr="*fp32", b_ptr="*fp32", c_ptr="*fp32"),
        dict(BLOCK=128, num_warps=8),
    ),
    "rows_per_warp": (
        K.rows_per_warp_sum,
        dict(x_ptr="*fp32", out_ptr="*fp32", n_cols=128),
        dict(ROWS=16, BLOCK=128, num_warps=4),
    ),
    "keep_positive_shifted": (
        C.keep_positive_shifted,
        dict(x_ptr="*fp32", out_ptr="*fp32", n=4096, shift=4097),
        dict(BLOCK=1024),
    ),
    "small_fp32_dot": (
        C.small_dot,
        dict(a_ptr="*fp32", b_ptr="*fp32", c_ptr="*fp32"),
        dict(BLOCK_M=8, BLOCK_N=8, BLOCK_K=16),
    ),
    "shifted_ieee_dot": (
        C.shifted_ieee_dot,
        dict(a_ptr="*fp32", b_ptr="*fp32", c_ptr="*fp32", shift=4097),
        dict(BLOCK=32),
    ),
    "keep_positive_twice": (
        C.keep_positive_twice,
        dict(x_ptr="*fp32", out_ptr="*fp32", half_ptr="*fp16", n=4096),
        dict(BLOCK=1024),
    ),
}


class Captured(dict[str, Trajectory]):
    """Each case's capture, made the first time a test reads it: a test compiles only the cases it reads."""

    def __missing__(self, name: str) -> Trajectory:
        kernel, args, options = CASES[name]
        self[name] = trajectory_cache.capture(kernel, target="cuda:90", kernel_kwargs=args, **options)
        return self[name]


class Found(dict[str, hazards.Findings]):
    """Each case's findings, found afresh in every test from the module's captures: each test runs the detectors
    whose output it reads (and a mutation run attributes each detector to those tests)."""

    def __init__(self, captured: Captured):
        super().__init__()
        self.captured = captured

    def __missing__(self, name: str) -> hazards.Findings:
        self[name] = hazards.find(self.captured[name])
        return self[name]


@pytest.fixture(scope="module")
def captured() -> Captured:
    return Captured()


@pytest.fixture
def found(captured: Captured) -> Found:
    return Found(captured)


def recorded_form(f: hazards.Findings, traj: Trajectory) -> dict:
    """Everything the detectors said about one kernel, as JSON: each hazard whole (claim, cost, counters, cause,
    passes, remarks), minor ones too, the kernel's cost with each hazard's share of it, and each hazard's what-if
    plans with the requirement a rewrite receives (its symptom's planner, run on the capture)."""
    return {
        "kernel_cost": round(f.kernel_cost, 2),
        "hazards": [h.to_json() for h in f.hazards],
        "shares": [round(f.share(h), 4) for h in f.hazards],
        "minor": [h.to_json() for h in f.minor],
        "plans": [[plan_form(p) for p in planned(h, traj)] for h in (*f.hazards, *f.minor)],
    }


def planned(h: Hazard, traj: Trajectory) -> list[Plan]:
    symptom = detectors.SYMPTOMS[h.symptom]
    return symptom.plan(h, traj) if symptom.plan is not None else []


def plan_form(p: Plan) -> dict:
    return {**json.loads(json.dumps(asdict(p))), "requirement": p.requirement}


def symptoms(f: hazards.Findings) -> list[str]:
    return [h.symptom for h in f.hazards]


def line_of(kernel, text: str, case: str = "") -> int:
    """The kernel file's line holding `text` (line numbers are derived, not typed in); with `case`, the line of the
    branch whose constexpr FACTOR is that case's (scaled_in_loop's variants)."""
    import inspect

    lines, first = inspect.getsourcelines(kernel.fn)
    at = [i for i, ln in enumerate(lines) if text in ln]
    return first + (at[CASES[case][2]["FACTOR"]] if case else at[0])


def every_line_of(kernel, text: str) -> list[int]:
    import inspect

    lines, first = inspect.getsourcelines(kernel.fn)
    return [first + i for i, ln in enumerate(lines) if text in ln]


def test_a_reduction_across_warps_goes_through_shared_memory_and_one_warp_does_not(found):
    # 8 warps along the only axis: ReduceOpConversion stores warp partials, syncs, combines, syncs again
    h = found["row_sum_8_warps"].hazards[0]
    assert h.symptom == "cross-warp-reduction" and h.lines == (line_of(K.row_sum, "tl.sum"),)
    assert "8 warps" in h.claim and h.counters["sync.barrier"] >= 2 and h.counters["mem.shared_store"] >= 1
    assert h.introduced_by is not None and h.introduced_by.pass_arg == "convert-triton-gpu-to-llvm"
    # one warp: shuffles only, nothing to blame
    assert "cross-warp-reduction" not in symptoms(found["row_sum_1_warp"])


def test_an_index_reduction_owns_the_reduction_that_masks_its_winner(found):
    (h,) = [h for h in found["top1_then_second"].hazards if h.symptom == "index-reduction-sync"]
    # the argmax line, and the second max whose input the index masked (data flow, not line adjacency)
    assert h.lines == (line_of(K.top1_then_second, "return_indices"), line_of(K.top1_then_second, "best + tl.max"))
    assert "cross-warp-reduction" not in symptoms(found["top1_then_second"])


def test_per_element_atomics_are_a_hazard_and_one_atomic_per_program_is_not(found):
    h = next(h for h in found["scatter_count"].hazards if h.symptom == "global-atomics")
    assert h.lines == (line_of(K.scatter_count, "tl.atomic_add"),) and h.counters["compute.atomic"] >= 1
    assert "global-atomics" not in symptoms(found["partial_sum_atomic"])  # a scalar atomic after tl.sum


def test_a_dot_loop_without_stages_is_not_pipelined_and_the_pipelined_one_is_clean(found):
    h = found["matmul_one_stage"].hazards[0]
    loads = (line_of(K.tile_matmul, "a = tl.load"), line_of(K.tile_matmul, "b = tl.load"))
    assert h.symptom == "not-pipelined" and h.lines == loads and h.counters["num_stages"] == 1
    assert h.declined_by is not None and h.declined_by.pass_arg == "tritongpu-assign-latencies"
    # wgmma fed by cp.async: nothing above the threshold (the epilogue's accumulator conversion is intended)
    assert found["matmul_pipelined"].hazards == ()


def test_two_warps_keep_a_hopper_dot_on_mma_sync(found):
    # supportMMA(op, 3) needs num_warps % 4 == 0: the dot falls back to MMA v2
    h = next(h for h in found["matmul_two_warps"].hazards if h.symptom == "mma-downgrade")
    assert h.lines == (line_of(K.tile_matmul, "tl.dot"),)
    assert h.introduced_by is not None and h.introduced_by.pass_arg == "tritongpu-accelerate-matmul"


def test_an_m_tile_below_wgmma_keeps_a_hopper_dot_on_mma_sync_and_plans_the_tile(found, captured):
    # wgmma's M is 64 per warp group: a 16-row tile falls back to MMA v2, and the plan is the tile, not the warps
    h = next(h for h in found["matmul_thin_m"].hazards if h.symptom == "mma-downgrade")
    assert h.cause == "shape" and h.lines == (line_of(K.tile_matmul, "tl.dot"),)
    (plan,) = planned(h, captured["matmul_thin_m"])
    assert plan.condition == "the M tile a multiple of 64 (wgmma's M)"
    assert plan.params == {"BLOCK_M": 64} and plan.constexprs == ("BLOCK_M=64",) and plan.realize == "constexpr"


def test_an_ieee_fp32_dot_stays_on_fma_and_spills(found):
    f = found["ieee_dot"]
    dot = next(h for h in f.hazards if h.symptom == "dot-on-fma")
    assert dot.declined_by is not None and dot.declined_by.pass_arg == "tritongpu-accelerate-matmul"
    # the compiler's own remark on that pass, harvested into the trajectory, travels with the hazard
    assert any("MMA version 3 acceleration not applied" in r for r in dot.remarks) and dot.cause == "precision"
    # a 64x64 fp32 product on 128 threads needs more than 255 registers: ptxas spills (SASS local traffic)
    spill = next(h for h in f.hazards if h.symptom == "register-spills")
    assert spill.counters["res.spill_bytes"] > 0 and spill.counters["mem.local_load"] > 0


def test_strided_reads_are_uncoalesced_and_unaligned_rows_are_narrow(found):
    col = found["column_read"].hazards[0]
    assert col.symptom == "uncoalesced-access" and col.lines == (line_of(K.column_read, "tl.load"),)
    odd = symptoms(found["copy_odd"])
    assert odd == ["narrow-memory-access", "narrow-memory-access"]  # the load and the store of each row
    assert found["copy_aligned"].hazards == ()  # n_cols=4096 is specialized divisible by 16: 128-bit accesses


def test_a_wgmma_waited_for_a_scale_is_synchronous_and_one_the_math_needs_is_not(found):
    (h,) = [h for h in found["scale_in_loop"].hazards if h.symptom == "synchronous-wgmma"]
    assert h.cause == "scaled-product" and h.lines == (line_of(K.scaled_matmul, "tl.dot(a, b) * s"),)
    assert h.introduced_by is not None and h.introduced_by.pass_arg == "tritongpu-pipeline"
    assert "synchronous-wgmma" not in symptoms(found["scale_after_loop"])
    # a max of the product every iteration waits too, but nothing in the kernel can be moved to avoid it
    assert "synchronous-wgmma" not in symptoms(found["running_row_max"])


def test_a_product_scaled_in_the_loop_waits_only_for_a_factor_that_folds_out_of_the_sum(found):
    """A per-block scalar or a row scale times a column scale could scale an operand or the result after the loop:
    the wait is the kernel's choice. A full tile of factors, or an exp of the product, is math the iteration needs."""
    for name in ("scaled_by_block", "scaled_by_row_times_column"):
        (h,) = [h for h in found[name].hazards if h.symptom == "synchronous-wgmma"]
        assert h.cause == "scaled-product" and h.lines == (line_of(K.scaled_in_loop, "acc += tl.dot(a, b) *", name),)
    for name in ("scaled_by_tile", "scaled_by_exp"):
        assert "synchronous-wgmma" not in symptoms(found[name])


def test_two_reductions_on_one_line_are_one_hazard_across_the_widest_warps(found):
    (h,) = [h for h in found["both_axes_sum"].hazards if h.symptom == "cross-warp-reduction"]
    assert h.lines == (line_of(K.both_axes_sum, "tl.store"),) and "8 warps" in h.claim


def test_a_rank3_dot_is_downgraded_for_its_rank(found):
    (h,) = [h for h in found["batched_dot"].hazards if h.symptom == "mma-downgrade"]
    assert h.cause == "rank" and h.lines == (line_of(K.batched_dot, "c = tl.dot"),)


def test_a_mask_constant_over_two_elements_narrows_the_access_to_two(found):
    (h,) = [h for h in found["copy_pairs"].hazards if h.symptom == "narrow-memory-access"]
    assert h.cause == "mask" and h.lines == (line_of(K.copy_pairs, "tl.store"),)


def test_a_gather_with_no_contiguous_dimension_is_uncoalesced_and_one_along_contiguous_rows_is_not(found):
    (h,) = [h for h in found["gather_rows_and_columns"].hazards if h.symptom == "uncoalesced-access"]
    assert h.lines == (line_of(K.gather, "x = tl.load"),)
    assert "uncoalesced-access" not in symptoms(found["gather_rows"])


def test_an_index_reduction_alone_is_on_its_own_line_only(found):
    (h,) = [h for h in found["argmax_alone"].hazards if h.symptom == "index-reduction-sync"]
    assert h.lines == (line_of(K.argmax_alone, "tl.argmax"),)
    # two float operands carried through a reduction produce no index: not this symptom
    assert "index-reduction-sync" not in symptoms(found["max_with_payload"])


def test_a_narrow_access_is_planned_a_hint_on_the_arguments_that_reach_its_address_only(found, captured):
    """The load's address advances by `stride` through the loop (a loop-carried pointer), the store's is offset by
    `shift`: each plan names its own argument. The stored value depends on `stride` too, but a value does not
    decide how wide its store is."""
    load, store = line_of(K.strided_sum, "tl.load(p)"), line_of(K.strided_sum, "tl.store")
    f = found["strided_sum"]
    narrow = {h.lines: h for h in (*f.hazards, *f.minor) if h.symptom == "narrow-memory-access"}
    assert [p.params for p in planned(narrow[(load,)], captured["strided_sum"])] == [{"stride": 16}]
    assert [p.params for p in planned(narrow[(store,)], captured["strided_sum"])] == [{"shift": 16}]


def test_a_while_loop_is_never_pipelined(found):
    (h,) = [h for h in found["matmul_while"].hazards if h.symptom == "not-pipelined"]
    assert h.cause == "while-loop" and h.lines == (
        line_of(K.while_matmul, "a = tl.load"),
        line_of(K.while_matmul, "b = tl.load"),
    )


def not_pipelined(f: hazards.Findings) -> dict[tuple[int, ...], Hazard]:
    return {h.lines: h for h in (*f.hazards, *f.minor) if h.symptom == "not-pipelined"}


def test_each_loop_the_pipeliner_skips_is_named_with_its_reason(found, captured):
    """Without a dot the pipeliner takes only a loop that asks for stages itself (tl.range(…, num_stages=N)), and
    only an innermost one; a loop's own num_stages ≤ 1 turns it off whatever the kernel's; a loop it does take keeps
    a load under 4 contiguous bytes per thread synchronous. The loads each hazard names are the loop's own."""
    inner, outer = line_of(C.row_sums, "acc += tl.load"), line_of(C.row_sums, "tl.load(s_ptr")
    by_lines = not_pipelined(found["row_sums_scaled"])
    assert {lines: h.cause for lines, h in by_lines.items()} == {(inner,): "no-dot", (outer,): "outer-loop"}
    assert by_lines[(outer,)].counters == {"loads_in_loop": 1, "num_stages": 3}  # the kernel's default stages
    assert planned(by_lines[(outer,)], captured["row_sums_scaled"]) == []  # a source change: no compile fact
    load = (line_of(C.ranged_sum, "tl.load"),)
    (one,) = not_pipelined(found["ranged_1_stage_narrow"]).values()
    assert one.lines == load and one.cause == "num_stages" and one.counters["num_stages"] == 3
    assert [p.options for p in planned(one, captured["ranged_1_stage_narrow"])] == [("num_stages=3",)]
    # two stages asked for, but 16-bit loads at an offset not known divisible stay synchronous: the plan is the hint
    (two,) = not_pipelined(found["ranged_2_stages_narrow"]).values()
    assert two.lines == load and two.cause == "width" and "too narrow for cp.async" in two.claim
    assert [p.params for p in planned(two, captured["ranged_2_stages_narrow"])] == [{"shift": 16}]
    assert not not_pipelined(found["ranged_2_stages_aligned"])  # the same loop, aligned: cp.async


def test_a_dot_loop_the_pipeliner_took_keeps_a_narrow_converted_operand_synchronous(found):
    """K = 4095 leaves A's rows 2-byte aligned: the pipeliner copies B asynchronously and leaves A's load, converted
    before the dot (not a tile re-laid out through shared memory, operand-relayout-in-loop's), synchronous."""
    (h,) = not_pipelined(found["converted_operand_odd_k"]).values()
    assert h.cause == "partial" and h.lines == (line_of(C.converted_matmul, "a = tl.load"),)
    assert h.counters["loads_in_loop"] == 1 and "in the dot loop at line" in h.claim
    assert h.declined_by is not None and h.declined_by.pass_arg == "tritongpu-assign-latencies"


def test_each_loop_of_a_kernel_is_judged_on_its_own(found):
    """A loop without a load of its own (around another loop), a while loop or a loop the pipeliner took (its
    16-bit load left synchronous feeds no dot) says nothing about the loops after it."""
    loads = every_line_of(C.loops_in_sequence, "tl.load")  # the while loop's, the ranged loop's, the plain one's
    by_lines = not_pipelined(found["loops_in_sequence"])
    assert {lines: h.cause for lines, h in by_lines.items()} == {(loads[0],): "while-loop", (loads[2],): "no-dot"}
    (h,) = not_pipelined(found["row_sums"]).values()
    assert h.lines == (line_of(C.row_sums, "acc += tl.load"),) and h.cause == "no-dot"


def test_an_fp8_operand_in_the_wrong_order_is_relaid_out_every_iteration(found):
    (h,) = [h for h in found["fp8_b_n_major"].hazards if h.symptom == "operand-relayout-in-loop"]
    assert h.lines == (line_of(K.fp8_matmul, "(k + rk)[:, None] * N"),) and h.counters["mem.shared_store"] > 0
    assert any("pipelined load for this operand" in r for r in h.remarks)  # the compiler's own warning, kept
    assert "operand-relayout-in-loop" not in symptoms(found["fp8_b_k_major"])


def test_int64_index_division_is_a_hazard_and_int32_is_not(found):
    (h,) = [h for h in found["channel_int64"].hazards if h.symptom == "int64-index-division"]
    assert h.lines == (line_of(K.channel_scale, "channel ="),)
    assert "int64-index-division" not in symptoms(found["channel_int32"])


def test_a_mask_from_loaded_values_narrows_the_store_and_a_select_does_not(found):
    (h,) = [h for h in found["mask_by_value"].hazards if h.symptom == "data-dependent-store-mask"]
    assert h.lines == (line_of(K.keep_positive, "(x > 0))"),)
    assert "narrow-memory-access" not in symptoms(found["mask_by_value"])  # one cause once
    assert "data-dependent-store-mask" not in symptoms(found["select_then_store"])


def test_hazards_are_ranked_by_cost_and_minor_ones_kept_apart(found):
    for f in (found[name] for name in CASES):
        costs = [h.cost for h in f.hazards]
        assert costs == sorted(costs, reverse=True)
        assert all(h.cost < hazards.MIN_SHARE * f.kernel_cost for h in f.minor)
        assert sum(f.share(h) for h in f.hazards) + f.unexplained == pytest.approx(1.0) and f.unexplained > 0


def test_resident_warps_follow_the_register_and_shared_memory_limits():
    # 255 registers → 256 per thread → 65536 / (256 · 32 · 4) = 2 CTAs of 4 warps
    assert cost.resident_warps(255, 0, 4) == (8, "registers")
    # 100 KB of shared memory per CTA (+1 KB reserved): 228 KB / 101 KB = 2 CTAs
    assert cost.resident_warps(32, 100 * 1024, 4) == (8, "shared memory")
    # nothing large: the warp limit (64 / 8 warps = 8 CTAs)
    assert cost.resident_warps(32, 0, 8) == (64, "warps per SM")
    # 41 registers are allocated as 48: 65536 / (48 · 32 · 4) = 10 CTAs (12 if they were not rounded up)
    assert cost.resident_warps(41, 0, 4) == (40, "registers")
    # 64 // 3 = 21 CTAs of 3 warps, the same as the registers allow: the architectural limit is named on a tie
    assert cost.resident_warps(32, 0, 3) == (63, "warps per SM")
    # one warp per CTA: 32 CTAs per SM bind before 64 warps
    assert cost.resident_warps(32, 0, 1) == (32, "CTAs per SM")


def test_occupancy_is_judged_on_the_compiled_targets_machine():
    """96 KB of shared memory per CTA leaves room for two CTAs on an H100's 228 KB and one on an A100's 164 KB: the
    same kernel for sm_80 is occupancy-limited by shared memory, which H100 limits would not say."""
    options = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=4, num_stages=4)
    a100 = trajectory_cache.capture(K.tile_matmul, target="cuda:80", kernel_kwargs=MM, **options)
    assert signatures.resources(a100)["res.shared_bytes"] == 96 * 1024
    f = hazards.find(a100)
    (h,) = [h for h in (*f.hazards, *f.minor) if h.symptom == "occupancy-limit"]
    assert h.cause == "shared memory" and h.counters["resident_warps"] == 4
    # mma.sync is what sm_80 has: no downgrade there
    assert "mma-downgrade" not in [x.symptom for x in (*f.hazards, *f.minor)]
    assert cost.resident_warps(255, 96 * 1024, 4) == (8, "registers")  # with the H100's limits: two CTAs
    # a property of the whole kernel: its cost is a fixed share of what the kernel's instructions cost
    instructions = hazards.kernel_cost(hazards.KernelView(a100))
    assert h.cost == pytest.approx(cost.ONE_CTA_IDLE * instructions) and f.kernel == "tile_matmul"
    assert f.kernel_cost == pytest.approx(instructions + sum(x.cost for x in (*f.hazards, *f.minor)))
    # the smallest change first: one stage fewer, then two (never below the two the pipeliner needs)
    assert [(p.options, p.condition) for p in planned(h, a100)] == [
        (("num_stages=3",), "3 pipeline stages (less shared memory per CTA)"),
        (("num_stages=2",), "2 pipeline stages (less shared memory per CTA)"),
    ]


def test_a_kernel_held_to_one_cta_by_registers_is_planned_a_register_cap_for_two(captured):
    """Two CTAs of 4 warps share an H100 SM's 65536 registers at 256 per thread; a cause the planner does not know
    gets no plan."""
    traj = captured["ieee_dot"]
    by_registers = Hazard("occupancy-limit", "ieee_dot", (), "c", 1.0, cause="registers")
    (p,) = planned(by_registers, traj)
    assert (p.options, p.params) == (("maxnreg=256",), {"maxnreg": 256})
    assert p.condition == "at most 256 registers per thread (two CTAs per SM)"
    assert planned(replace(by_registers, cause="warps per SM"), traj) == []


def test_one_cta_per_hopper_sm_is_named_by_its_limit_and_planned_for_it(found, captured):
    """Four stages of a 128x128x64 bf16 tile take 128 KB of shared memory: one CTA per H100 SM, planned one stage
    fewer, then two. A 128x256 tile on 8 warps takes 188 registers per thread: one CTA of 8 warps, planned a cap
    that lets two share the register file (65536 / (2 · 8 · 32) = 128)."""
    (smem,) = [
        h
        for h in (*found["matmul_four_stages"].hazards, *found["matmul_four_stages"].minor)
        if h.symptom == "occupancy-limit"
    ]
    assert smem.cause == "shared memory" and smem.counters["res.shared_bytes"] == 128 * 1024
    assert smem.counters["resident_warps"] == 4 and "limited by shared memory" in smem.claim and smem.lines == ()
    assert smem.introduced_by is not None and smem.introduced_by.pass_arg == "allocate-shared-memory-nv"
    assert [p.options for p in planned(smem, captured["matmul_four_stages"])] == [("num_stages=3",), ("num_stages=2",)]
    f = found["matmul_wide_8_warps"]
    (regs,) = [h for h in (*f.hazards, *f.minor) if h.symptom == "occupancy-limit"]
    assert regs.cause == "registers" and regs.introduced_by is None and regs.counters["resident_warps"] == 8
    assert regs.counters["res.registers"] > 128 and f"{regs.counters['res.registers']} registers" in regs.claim
    assert [(p.params, p.condition) for p in planned(regs, captured["matmul_wide_8_warps"])] == [
        ({"maxnreg": 128}, "at most 128 registers per thread (two CTAs per SM)")
    ]
    # one CTA of two stages is planned nothing: the pipeliner needs two
    traj = captured["matmul_four_stages"]
    options = {**traj.specialization.options, "num_stages": 2}
    assert planned(smem, replace(traj, specialization=replace(traj.specialization, options=options))) == []


def test_spills_without_sass_are_priced_from_ptxas_report(found, captured):
    """Without the disassembly (--no-disassemble) no line shows local memory: the spill is priced from ptxas's
    spill bytes, one 4-byte local store each, on no line. With 8 warps the plan is 16."""
    (h,) = [h for h in found["ieee_dot_no_sass"].hazards if h.symptom == "register-spills"]
    spilled = h.counters["res.spill_bytes"]
    assert spilled > 0 and h.lines == () and h.cost == pytest.approx(cost.WEIGHTS["mem.local_store"] * spilled / 4)
    assert h.claim.endswith("0 local stores") and f"spills {spilled:g} bytes" in h.claim
    with_sass = next(x for x in found["ieee_dot"].hazards if x.symptom == "register-spills")
    assert with_sass.lines and with_sass.claim.endswith(
        f"on {'line' if len(with_sass.lines) == 1 else 'lines'} " + ", ".join(map(str, with_sass.lines))
    )
    (wide,) = [h for h in found["ieee_dot_8_warps"].hazards if h.symptom == "register-spills"]
    assert [p.options for p in planned(wide, captured["ieee_dot_8_warps"])] == [("num_warps=16",)]


def test_a_trajectory_without_its_compile_options_is_read_with_tritons_defaults(captured):
    """A trajectory that does not record num_stages or num_warps (an imported trace may not) is read and planned
    with Triton's defaults, 3 stages and 4 warps, like a compile that set neither."""

    def without_options(traj: Trajectory) -> Trajectory:
        options = {k: v for k, v in traj.specialization.options.items() if k not in ("num_stages", "num_warps")}
        return replace(traj, specialization=replace(traj.specialization, options=options))

    one_stage = without_options(captured["ranged_1_stage_narrow"])
    (h,) = [h for h in hazards.find(one_stage).hazards if h.symptom == "not-pipelined"]
    assert h.counters["num_stages"] == 3 and h.cause == "num_stages"  # the loop's own stages decide
    smem = Hazard("occupancy-limit", "tile_matmul", (), "c", 1.0, cause="shared memory")
    assert [p.options for p in planned(smem, without_options(captured["matmul_four_stages"]))] == [("num_stages=2",)]
    regs = Hazard("occupancy-limit", "tile_matmul", (), "c", 1.0, cause="registers")
    assert [p.params for p in planned(regs, without_options(captured["matmul_wide_8_warps"]))] == [{"maxnreg": 256}]
    spills = Hazard("register-spills", "ieee_dot", (), "c", 1.0, cause="registers")
    assert [p.options for p in planned(spills, without_options(captured["ieee_dot_8_warps"]))] == [("num_warps=8",)]


def test_a_dot_off_mma_for_its_tile_is_planned_a_tile_of_16_and_an_ieee_one_tf32(captured):
    """The planner offers tf32 only to an fp32 dot whose precision is ieee: a precision hazard on a dot that is
    already tf32, or a shape hazard, gets the tile constexprs that are no multiple of 16 set to 16 (none when the
    kernel's tile has no such constexpr)."""
    traj = captured["small_fp32_dot"]
    line = (line_of(C.small_dot, "tl.dot"),)
    tile = [
        Plan(
            "every dot dimension at least 16 (an MMA tile)",
            "constexpr",
            {"BLOCK_M": 16, "BLOCK_N": 16},
            constexprs=("BLOCK_M=16", "BLOCK_N=16"),
        )
    ]
    for cause in ("shape", "precision"):
        assert planned(Hazard("dot-on-fma", "small_dot", line, "c", 1.0, cause=cause), traj) == tile
    ieee = captured["ieee_dot"]
    shape = Hazard("dot-on-fma", "ieee_dot", (line_of(K.ieee_dot, "tl.dot"),), "c", 1.0, cause="shape")
    assert planned(shape, ieee) == []  # its tile is BLOCK=64: no BLOCK_M, BLOCK_N or BLOCK_K to set
    assert [p.dot_precision for p in planned(replace(shape, cause="precision"), ieee)] == ["tf32"]
    # the hazard's own dot decides, not another of the kernel's: its tf32 dot is planned no precision
    args = dict(a_ptr="*fp32", b_ptr="*fp32", c_ptr="*fp32", d_ptr="*fp32")
    both = trajectory_cache.capture(C.two_dots, target="cuda:90", kernel_kwargs=args, BLOCK=32)
    on = {p: (line_of(C.two_dots, f'input_precision="{p}"'),) for p in ("ieee", "tf32")}
    precision = Hazard("dot-on-fma", "two_dots", on["ieee"], "c", 1.0, cause="precision")
    assert [p.dot_precision for p in planned(precision, both)] == ["tf32"]
    assert planned(replace(precision, lines=on["tf32"]), both) == []


def test_an_fp32_dot_on_fma_carries_the_remarks_of_the_pass_that_kept_it_there_only(found):
    """The dot's hazard names AccelerateMatmul's remark; the narrow load's vectorization warning, printed while
    lowering to LLVM, is not about the dot."""
    f = found["shifted_ieee_dot"]
    (dot,) = [h for h in f.hazards if h.symptom == "dot-on-fma"]
    assert dot.cause == "precision" and dot.lines == (line_of(C.shifted_ieee_dot, "tl.dot"),)
    assert dot.declined_by is not None and len(dot.remarks) == 1
    assert "MMA version 3 acceleration not applied" in dot.remarks[0]
    view = hazards.KernelView(found.captured["shifted_ieee_dot"])
    assert any("vectorization fails" in r.text for r in view.remarks())


def test_a_line_that_stores_twice_under_a_data_mask_is_as_narrow_as_its_narrowest_store(found):
    (h,) = [h for h in found["keep_positive_twice"].hazards if h.symptom == "data-dependent-store-mask"]
    assert h.lines == (line_of(C.keep_positive_twice, "tl.store"),)
    assert h.counters == {"vector_bits": 16, "mask_alignment": 1} and "16 bits at a time" in h.claim


def test_a_reduction_within_each_warp_is_no_hazard_beside_a_conversion_that_syncs(found):
    """Rows spread over warps, each row's sum within one warp: the line's barrier and shared memory belong to the
    conversion of the sums for the store, not to the reduction."""
    f = found["rows_per_warp"]
    assert "cross-warp-reduction" not in [h.symptom for h in (*f.hazards, *f.minor)]
    assert "layout-conversion" in [h.symptom for h in (*f.hazards, *f.minor)]


def test_a_store_masked_by_data_is_found_after_a_narrow_load_it_does_not_own(found):
    f = found["keep_positive_shifted"]
    load, store = line_of(C.keep_positive_shifted, "x = tl.load"), line_of(C.keep_positive_shifted, "tl.store")
    by_symptom = {h.symptom: h for h in (*f.hazards, *f.minor)}
    assert by_symptom["narrow-memory-access"].lines == (load,)
    assert by_symptom["data-dependent-store-mask"].lines == (store,)


def test_a_share_of_a_kernel_without_cost_is_zero_and_nothing_is_explained():
    h = Hazard("global-atomics", "k", (1,), "c", 5.0)
    empty = hazards.Findings("k", (h,), (), 0.0)
    assert empty.share(h) == 0.0 and empty.unexplained == 1.0
    assert hazards.Findings("k", (h,), (), 20.0).share(h) == 0.25


def test_an_instruction_class_without_a_weight_counts_once():
    assert "no.such.class" not in cost.WEIGHTS
    assert cost.weighted({"no.such.class": 3}, ("no.such.class",)) == 3.0


def test_every_symptom_states_its_mechanism():
    assert set(hazards.symptoms()) == {
        "cross-warp-reduction",
        "index-reduction-sync",
        "register-spills",
        "not-pipelined",
        "synchronous-wgmma",
        "operand-relayout-in-loop",
        "dot-on-fma",
        "mma-downgrade",
        "layout-conversion",
        "global-atomics",
        "int64-index-division",
        "data-dependent-store-mask",
        "occupancy-limit",
        "uncoalesced-access",
        "narrow-memory-access",
    }
    assert all(len(text) > 60 for text in hazards.symptoms().values())


def test_two_detectors_for_one_symptom_are_refused():
    atomics, reduction = detectors.SYMPTOMS["global-atomics"], detectors.SYMPTOMS["cross-warp-reduction"]
    assert detectors._registry(atomics, reduction) == {"global-atomics": atomics, "cross-warp-reduction": reduction}
    with pytest.raises(ValueError, match="two detectors for symptom 'global-atomics'"):
        detectors._registry(atomics, reduction, atomics)


@pytest.mark.parametrize("name", CASES)
def test_findings_equal_the_reviewed_record(found, name: str):
    """Each case's findings equal tests/irscope/hazards_recorded.json, reviewed when it was written: a change to a
    detector, the cost model or the kernel view shows as a difference to review, never silently. When a change is
    intended, rewrite the record (`python -m tests.irscope.test_hazards --record`) and review its diff."""
    f = found[name]
    assert recorded_form(f, found.captured[name]) == json.loads(RECORD.read_text())[name]
    assert [Hazard.from_json(h.to_json()).to_json() for h in (*f.hazards, *f.minor)] == [
        h.to_json() for h in (*f.hazards, *f.minor)
    ]


def test_two_detectors_pricing_the_same_instructions_are_one_finding_under_the_first_name():
    """Same lines, costs within SAME_COST: the cross-warp reduction and the layout conversion it implies are one
    cause, named once with the other kept as an alias; 2 % apart, or on other lines, they stay two findings."""
    first = Hazard("cross-warp-reduction", "k", (12,), "c", 100.0)
    merged = hazards.one_cause_once([first, Hazard("layout-conversion", "k", (12,), "c", 100.5)])
    assert merged == [replace(first, aliases=("layout-conversion",))]
    apart = [
        first,
        Hazard("layout-conversion", "k", (12,), "c", 102.0),
        Hazard("layout-conversion", "k", (13,), "c", 100),
    ]
    assert hazards.one_cause_once(apart) == apart


def test_a_hazard_read_from_json_without_its_optional_fields_takes_their_defaults():
    h = Hazard.from_json({"symptom": "global-atomics", "kernel": "k", "claim": "c", "cost": 3})
    assert h == Hazard("global-atomics", "k", (), "c", 3.0)
    merged = Hazard("cross-warp-reduction", "k", (1,), "c", 1.23456, aliases=("layout-conversion",))
    assert merged.to_json()["cost"] == 1.23 and Hazard.from_json(merged.to_json()).aliases == ("layout-conversion",)
    assert (h.lines, h.counters, h.remarks, h.cause, h.introduced_by, h.declined_by) == ((), {}, (), "", None, None)
    assert h.pass_ref is None
    ref = PassRef(4, "ttgir", "tritongpu-coalesce")
    assert Hazard("s", "k", (1,), "c", 1.0, introduced_by=ref).pass_ref == ref
    declined = PassRef(9, "ttgir", "tritongpu-remove-layout-conversions")
    assert Hazard("s", "k", (1,), "c", 1.0, introduced_by=ref, declined_by=declined).pass_ref == declined


if __name__ == "__main__" and sys.argv[1:] == ["--record"]:
    every = Found(Captured())
    RECORD.write_text(
        json.dumps({name: recorded_form(every[name], every.captured[name]) for name in CASES}, indent=1) + "\n"
    )


THREE_CONVERSIONS = dict(
    a_ptr="*fp32", b_ptr="*fp32", c_ptr="*fp32", d_ptr="*fp32", x_ptr="*fp32", out_ptr="*fp32", shift=4097, n_cols=32
)


@pytest.fixture(scope="module")
def three_conversions() -> Trajectory:
    return trajectory_cache.capture(C.three_conversions, target="cuda:90", kernel_kwargs=THREE_CONVERSIONS, BLOCK=32)


def _layout_conversions(view: hazards.KernelView) -> list[Hazard]:
    return detectors.SYMPTOMS["layout-conversion"].detect(view)


def test_conversions_within_registers_and_an_epilogues_before_a_line_leave_its_conversion_found(three_conversions):
    """Three conversions on three lines: an ieee dot's result within registers, a tf32 MMA result's epilogue, then
    row sums converted through shared memory for their store. Only the last is a hazard, and the two before it do
    not end the search."""
    view = hazards.KernelView(three_conversions)
    store = line_of(C.three_conversions, "tl.sum")
    by_line = {n: c for n, c in view.lines("ttgir").items() if c.get("layout.convert_layout")}
    assert sorted(by_line) == [line_of(C.three_conversions, '"ieee"'), line_of(C.three_conversions, '"tf32"'), store]
    (h,) = _layout_conversions(view)
    assert h.lines == (store,) and h.counters == {"layout.convert_layout": 1}
    assert h.introduced_by == view.introducing("layout.convert_layout", [store]) is not None
    assert h.declined_by is not None and h.declined_by.pass_arg == "tritongpu-remove-layout-conversions"


def _machine_line(view: hazards.KernelView, line: int, counters: dict[str, int] | None) -> None:
    """The view's machine code with `line`'s counters replaced (None: the line has no machine code)."""
    lines = view.lines

    def replaced(stage: str) -> dict[int, dict[str, int]]:
        at = dict(lines(stage))
        if stage == view.machine_stage:
            at.pop(line, None)
            if counters is not None:
                at[line] = counters
        return at

    view.lines = replaced  # type: ignore[method-assign]


def test_a_conversion_without_machine_code_on_its_line_or_without_shared_loads_is_not_through_shared_memory(
    three_conversions,
):
    store = line_of(C.three_conversions, "tl.sum")
    for counters in (None, {"mem.shared_store": 1, "sync.barrier": 2}, {"mem.shared_load": 1, "sync.barrier": 2}):
        view = hazards.KernelView(three_conversions)
        _machine_line(view, store, counters)
        assert _layout_conversions(view) == [], counters
    view = hazards.KernelView(three_conversions)
    _machine_line(view, store, {"mem.shared_store": 3, "mem.shared_load": 2})  # its barrier on another line
    (h,) = _layout_conversions(view)
    assert "(3 shared stores, 2 shared loads, 0 barriers in ptx)" in h.claim, h.claim


def test_a_conversion_made_after_the_pass_that_removes_conversions_names_no_pass_that_declined_it(three_conversions):
    """`declined_by` names a run of tritongpu-remove-layout-conversions only where that conversion was in the
    pass's input: the view below hides it from every snapshot before the pass's last run."""
    view = hazards.KernelView(three_conversions)
    store = line_of(C.three_conversions, "tl.sum")
    last = view.pass_runs("tritongpu-remove-layout-conversions")[-1].index
    ops_in = view.ops_in

    def later(snap):
        return [r for r in ops_in(snap) if snap.index >= last or (r.op.name, r.line) != ("ttg.convert_layout", store)]

    view.ops_in = later  # type: ignore[method-assign]
    (h,) = _layout_conversions(view)
    assert h.lines == (store,) and h.declined_by is None


def test_each_conversion_names_the_pass_that_made_it_on_its_own_line():
    """Two conversions through shared memory: the row sums' for their store, made when the kernel entered the GPU
    dialect, and the scatter's, made by tritongpu-coalesce; each hazard names its own line's pass, not the
    kernel's first."""
    args = dict(x_ptr="*fp32", out_ptr="*fp32", idx_ptr="*i32", counts_ptr="*i32", n=4096, n_cols=32)
    traj = trajectory_cache.capture(C.row_sums_then_scatter, target="cuda:90", kernel_kwargs=args, BLOCK=32)
    sums, scatter = _layout_conversions(hazards.KernelView(traj))
    assert sums.lines == (line_of(C.row_sums_then_scatter, "tl.sum"),)
    assert scatter.lines == (line_of(C.row_sums_then_scatter, "tl.atomic_add"),)
    assert sums.introduced_by is not None and sums.introduced_by.pass_arg == "convert-triton-to-tritongpu"
    assert scatter.introduced_by is not None and scatter.introduced_by.pass_arg == "tritongpu-coalesce"


def test_narrow_accesses_line_by_line_past_a_data_masked_store_and_beside_one():
    """narrow_lines: the data-masked store's line is data-dependent-store-mask's and does not end the search; a
    narrow load beside a data-masked store on one line is still found; of a line's narrow accesses the narrowest is
    named (the 16-bit store, not the 32-bit load before it); pairs asserted aligned are narrowed by their contiguity,
    which no hint plan widens."""
    args = {name: "*fp32" for name in ("x_ptr", "y_ptr", "z_ptr", "w_ptr", "v_ptr", "out_ptr", "out2_ptr", "out3_ptr")}
    args.update(half_ptr="*fp16", n=4096, shift=4097)
    traj = trajectory_cache.capture(C.narrow_lines, target="cuda:90", kernel_kwargs=args, BLOCK=1024)
    view = hazards.KernelView(traj)
    masked = line_of(C.narrow_lines, "mask=(offs < n) & (x > 0)")
    assert (masked,) in [h.lines for h in detectors.SYMPTOMS["data-dependent-store-mask"].detect(view)]
    narrow = detectors.SYMPTOMS["narrow-memory-access"].detect(view)
    y, z, half, pairs = (line_of(C.narrow_lines, t) for t in ("y = tl.load", "tl.load(z_ptr", "half_ptr +", "v = "))
    assert [h.lines for h in narrow] == [(y,), (z,), (half,), (pairs,)] and masked < y
    assert [h.claim.split(":")[1].split(" of ")[0].strip() for h in narrow] == ["load", "load", "store", "load"]
    assert [h.counters["vector_bits"] for h in narrow] == [32, 32, 16, 64]
    assert [h.cause for h in narrow] == ["divisibility", "divisibility", "divisibility", "contiguity"]
    assert planned(narrow[-1], traj) == [] and planned(narrow[0], traj) != []


def test_a_load_narrowed_by_its_masks_bound_is_planned_that_bound_divisible():
    """keep_positive_twice with n = 4097: the mask `offs < n` is constant over one element only, so the load is 32
    bits wide for its mask; the plan is the bound's divisibility, which AxisInfo derives the mask's constancy from."""
    args = dict(x_ptr="*fp32", out_ptr="*fp32", half_ptr="*fp16", n=4097)
    traj = trajectory_cache.capture(C.keep_positive_twice, target="cuda:90", kernel_kwargs=args, BLOCK=1024)
    (h,) = detectors.SYMPTOMS["narrow-memory-access"].detect(hazards.KernelView(traj))
    assert h.lines == (line_of(C.keep_positive_twice, "x = tl.load"),) and h.cause == "mask"
    assert h.counters["mask_alignment"] == 1
    assert [p.condition for p in planned(h, traj)] == ["n divisible by 16"]
