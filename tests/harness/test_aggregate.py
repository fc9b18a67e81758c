"""The aggregation of docs/suite-protocol.md#aggregation and the per-case metrics, on hand-computed numbers."""

import math

import pytest

from ladder.harness.aggregate import CaseSpeed, aggregate
from ladder.harness.ceilings import Ceilings
from ladder.harness.metrics import case_metrics
from suite.operator import get_operator


def speeds(op, pairs, correct=True):
    return [CaseSpeed(op, f"c{i + 1}", ref, cand, correct) for i, (ref, cand) in enumerate(pairs)]


def test_per_operator_and_suite_statistics():
    cases = (
        speeds("a", [(4.0, 1.0), (1.0, 1.0)])  # 2x
        + speeds("b", [(9.0, 1.0), (1.0, 1.0 / 9.0)])  # 9x
        + speeds("c", [(1.0, 2.0)])  # 0.5x
        + speeds("moe_group_top2", [(100.0, 1.0)])
    )
    agg = aggregate(cases)
    assert agg["per_op"]["a"]["speedup"] == pytest.approx(2.0)
    assert agg["per_op"]["b"]["speedup"] == pytest.approx(9.0)
    assert agg["geomean"] == pytest.approx(math.prod([2, 9, 0.5, 100]) ** 0.25)
    assert agg["median"] == pytest.approx((2 + 9) / 2)
    assert agg["over_2x"] == 2 and agg["over_5x"] == 2  # b and the MoE operator; a is exactly 2x
    assert agg["geomean_without_moe"] == pytest.approx(9 ** (1 / 3))
    assert agg["fast_p"] == {"0": 1.0, "1": 0.75, "1.2": 0.75, "2": 0.5, "5": 0.5}


def test_incorrect_operator_rules():
    cases = speeds("a", [(4.0, 1.0)]) + speeds("b", [(8.0, 1.0)], correct=False)
    agg = aggregate(cases)
    assert agg["per_op"]["b"]["speedup"] == 1.0 and agg["per_op"]["b"]["rule"] == "1.0 (no correct version)"
    assert agg["fast_p"]["0"] == 0.5 and agg["fast_p"]["2"] == 0.5
    agg = aggregate(cases, last_correct={"b": 3.0})
    assert agg["per_op"]["b"]["speedup"] == 3.0 and agg["per_op"]["b"]["rule"] == "last correct version"


def test_untimed_operators_are_listed_not_counted():
    agg = aggregate(speeds("a", [(2.0, 1.0)]) + speeds("b", [(None, 1.0)]))
    assert agg["untimed"] == ["b"] and agg["operators_timed"] == 1 and agg["geomean"] == pytest.approx(2.0)


def test_case_metrics_and_plausibility_flags():
    op = get_operator("softmax")
    case = op.cases[0]  # 4096 × 4096 fp32: 128 MiB moved
    ceilings = Ceilings(copy_gbps=4000.0, bf16_tflops=800.0, copy_bytes=1 << 30, gemm_n=8192)
    sol = op.bytes_moved(case) / 4000e9 * 1e3
    record = {
        "timing": {
            "candidate": {"ms": sol / 0.95, "timer": "do_bench"},
            "eager": {"ms": 12 * sol / 0.95, "timer": "do_bench"},
            "compile": {"ms": None, "error": "warm-up failed: boom"},
        }
    }
    m = case_metrics(record, op, case, ceilings)
    assert m["sol_ms"] == pytest.approx(sol)
    assert m["impl"]["candidate"]["frac_sol"] == pytest.approx(0.95)
    assert m["impl"]["candidate"]["gbps"] == pytest.approx(0.95 * 4000.0)
    assert m["speedup"] == {"eager": pytest.approx(12.0)}
    flags = " | ".join(m["flags"])
    assert "compile: warm-up failed" in flags and "12.0x faster than eager" in flags
    assert "0.95 of speed of light" in flags


def test_bf16_speed_of_light_takes_the_compute_bound():
    c = Ceilings(copy_gbps=4000.0, bf16_tflops=800.0, copy_bytes=1, gemm_n=1)
    flops = 2 * 8192**3
    assert c.sol_ms(3 * 2 * 8192**2, flops, "bf16") == pytest.approx(flops / 800e12 * 1e3)
    assert c.sol_ms(3 * 2 * 8192**2, flops, "fp32") == pytest.approx(3 * 2 * 8192**2 / 4000e9 * 1e3)
