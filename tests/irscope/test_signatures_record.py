"""Every counter of every stage, whole-kernel and per line, on real compiles for four machines (Hopper, Ampere,
CDNA3, RDNA3), equals tests/irscope/signatures_recorded.json, reviewed when it was written.

The independent counts of test_signatures_forms.py say that each instruction class is counted right on some code;
this record says that nothing else moved: a rule narrowed, a counter attributed to another line, an aggregation
changed, on the kernels of tests/irscope/hazard_kernels.py (reductions, atomics, dots on wgmma, mma.sync, FMA and
MFMA, masked and narrow accesses, int64 index math). When a change is intended, rewrite the record
(`python -m tests.irscope.test_signatures_record --record`) and review its diff."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from irscope import signatures
from irscope.trajectory import Trajectory
from tests import trajectory_cache
from tests.irscope.test_hazards import CASES

RECORD = Path(__file__).with_name("signatures_recorded.json")

# (case of test_hazards.CASES, target)
RECORDED = [
    ("row_sum_8_warps", "cuda:90"),
    ("top1_then_second", "cuda:90"),
    ("max_with_payload", "cuda:90"),
    ("scatter_count", "cuda:90"),
    ("matmul_pipelined", "cuda:90"),
    ("matmul_two_warps", "cuda:90"),
    ("ieee_dot", "cuda:90"),
    ("copy_odd", "cuda:90"),
    ("copy_odd_fp16", "cuda:90"),  # 16- and 8-bit accesses: the narrowest widths of PTX and SASS
    ("copy_odd_int8", "cuda:90"),
    ("fp8_b_n_major", "cuda:90"),
    ("channel_int64", "cuda:90"),
    ("mask_by_value", "cuda:90"),
    ("matmul_pipelined", "cuda:80"),
    ("row_sum_8_warps", "hip:gfx942"),
    ("top1_then_second", "hip:gfx942"),
    ("matmul_pipelined", "hip:gfx942"),
    ("copy_odd", "hip:gfx942"),
    ("scatter_count", "hip:gfx942"),
    # RDNA3 names a memory instruction's width in bits (`buffer_load_b128`), CDNA3 in dwords (`global_load_dwordx4`)
    ("copy_aligned", "hip:gfx1100"),
    ("copy_odd", "hip:gfx1100"),
    ("matmul_pipelined", "hip:gfx1100"),
]


def capture(name: str, target: str) -> Trajectory:
    kernel, args, options = CASES[name]
    return trajectory_cache.capture(kernel, target=target, kernel_kwargs=args, **options)


def recorded_form(traj: Trajectory) -> dict:
    """The flat summary (every stage's counters and the resources) and each stage's counters per kernel line."""
    per_line = {
        stage: {str(n): dict(sorted(counts.items())) for n, counts in sorted(at.items())}
        for stage, at in signatures.by_line(traj).items()
    }
    return {"summary": signatures.summary(traj), "lines": per_line}


@pytest.mark.parametrize(("name", "target"), RECORDED, ids=[f"{n}@{t}" for n, t in RECORDED])
def test_signatures_equal_the_reviewed_record(name: str, target: str):
    assert recorded_form(capture(name, target)) == json.loads(RECORD.read_text())[f"{name}@{target}"]


if __name__ == "__main__" and sys.argv[1:] == ["--record"]:
    record = {f"{n}@{t}": recorded_form(capture(n, t)) for n, t in RECORDED}
    RECORD.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
