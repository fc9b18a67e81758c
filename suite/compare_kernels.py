"""The float comparison's two passes (suite.compare) as Triton kernels, for outputs on a GPU.

Each pass reads the output and the oracle once, widens every element to float64 in registers and reduces per
program; the few partial rows are reduced with torch and read back in one transfer. The torch version of the same
passes (suite.compare, used on the CPU) materializes float64 slices and makes about twenty elementwise passes over
each, reading its figures back per slice: on gigabyte outputs on a GPU shared with other evaluations, the judge's
largest cost. The rules are suite.compare's, element for element; only the summation order differs.

`finite_stats(o, r)` → (NaN mismatches, infinity mismatches, max |ref| over finite ref, finite count);
`tolerance_stats(o, r, atol, rtol)` → (elements over the limit, max |diff|, Σ diff², Σ ref², worst excess, the
output and oracle values at the worst element). Both take 1-D contiguous tensors on one CUDA device (or, with
TRITON_INTERPRET=1 set before this module is imported, on the CPU: how the tests check them against suite.compare).
"""

from __future__ import annotations

import contextlib
import threading

import torch
import triton
import triton.language as tl

BLOCK = 1024
PROGRAMS_PER_SM = 8
_LAUNCH = threading.Lock()  # the suite judges in threads: one compile of each kernel, not one per thread


@triton.jit
def _widened(o_ptr, r_ptr, offs, n):
    """One block of output and oracle, as float64, and which lanes lie inside."""
    inside = offs < n
    o = tl.load(o_ptr + offs, mask=inside, other=0.0).to(tl.float64)
    r = tl.load(r_ptr + offs, mask=inside, other=0.0).to(tl.float64)
    return o, r, inside


@triton.jit
def _finite_pass(o_ptr, r_ptr, n, out_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    lanes = tl.arange(0, BLOCK)
    nan_diff = tl.zeros([BLOCK], tl.float64)
    inf_diff = tl.zeros([BLOCK], tl.float64)
    scale = tl.zeros([BLOCK], tl.float64)
    count = tl.zeros([BLOCK], tl.float64)
    for start in range(pid.to(tl.int64) * BLOCK, n, tl.num_programs(0).to(tl.int64) * BLOCK):
        o, r, inside = _widened(o_ptr, r_ptr, start + lanes, n)
        nan_o, nan_r = o != o, r != r
        inf_o, inf_r = tl.abs(o) == float("inf"), tl.abs(r) == float("inf")
        finite = inside & ~(nan_r | inf_r)
        nan_diff += tl.where(inside & (nan_o != nan_r), 1.0, 0.0)
        inf_diff += tl.where(inside & ((inf_o != inf_r) | (inf_r & (o != r))), 1.0, 0.0)  # position or sign
        scale = tl.maximum(scale, tl.where(finite, tl.abs(r), 0.0))
        count += tl.where(finite, 1.0, 0.0)
    row = out_ptr + pid * 4
    tl.store(row, tl.sum(nan_diff, 0))
    tl.store(row + 1, tl.sum(inf_diff, 0))
    tl.store(row + 2, tl.max(scale, 0))
    tl.store(row + 3, tl.sum(count, 0))


@triton.jit
def _tolerance_pass(o_ptr, r_ptr, n, limits_ptr, out_ptr, index_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    lanes = tl.arange(0, BLOCK)
    atol = tl.load(limits_ptr)
    rtol = tl.load(limits_ptr + 1)
    bad = tl.zeros([BLOCK], tl.float64)
    max_diff = tl.zeros([BLOCK], tl.float64)
    err_sq = tl.zeros([BLOCK], tl.float64)
    ref_sq = tl.zeros([BLOCK], tl.float64)
    top = tl.full([BLOCK], float("-inf"), tl.float64)
    top_at = tl.zeros([BLOCK], tl.int64)
    for start in range(pid.to(tl.int64) * BLOCK, n, tl.num_programs(0).to(tl.int64) * BLOCK):
        offs = start + lanes
        o, r, inside = _widened(o_ptr, r_ptr, offs, n)
        keep = inside & (r == r) & (tl.abs(r) != float("inf"))  # the first pass found the output finite there
        diff = tl.where(keep, tl.abs(o - r), 0.0)
        excess = tl.where(keep, diff - (atol + rtol * tl.abs(r)), float("-inf"))
        bad += tl.where(excess > 0, 1.0, 0.0)
        max_diff = tl.maximum(max_diff, diff)
        err_sq += diff * diff
        ref_sq += tl.where(keep, r * r, 0.0)
        worse = excess > top
        top = tl.where(worse, excess, top)
        top_at = tl.where(worse, offs, top_at)
    lane = tl.argmax(top, 0)
    row = out_ptr + pid * 5
    tl.store(row, tl.sum(bad, 0))
    tl.store(row + 1, tl.max(max_diff, 0))
    tl.store(row + 2, tl.sum(err_sq, 0))
    tl.store(row + 3, tl.sum(ref_sq, 0))
    tl.store(row + 4, tl.max(top, 0))
    tl.store(index_ptr + pid, tl.sum(tl.where(lanes == lane, top_at, 0), 0))


def _programs(o: torch.Tensor) -> int:
    # on the CPU (Triton's interpreter, in the tests) a few programs, so that each one loops over several blocks
    sms = torch.cuda.get_device_properties(o.device).multi_processor_count if o.is_cuda else 1
    return max(1, min(triton.cdiv(o.numel(), BLOCK), sms * PROGRAMS_PER_SM))


def _on(t: torch.Tensor) -> contextlib.AbstractContextManager:
    return torch.cuda.device(t.device) if t.is_cuda else contextlib.nullcontext()


def finite_stats(o: torch.Tensor, r: torch.Tensor) -> tuple[float, float, float, float]:
    programs = _programs(o)
    rows = torch.empty((programs, 4), dtype=torch.float64, device=o.device)
    with _LAUNCH, _on(o):
        _finite_pass[(programs,)](o, r, o.numel(), rows, BLOCK=BLOCK)
    nan_diff, inf_diff, scale, count = torch.stack(
        [rows[:, 0].sum(), rows[:, 1].sum(), rows[:, 2].max(), rows[:, 3].sum()]
    ).tolist()
    return nan_diff, inf_diff, scale, count


def tolerance_stats(
    o: torch.Tensor, r: torch.Tensor, atol: float, rtol: float
) -> tuple[float, float, float, float, float, float, float]:
    programs = _programs(o)
    rows = torch.empty((programs, 5), dtype=torch.float64, device=o.device)
    at = torch.empty(programs, dtype=torch.int64, device=o.device)
    limits = torch.tensor([atol, rtol], dtype=torch.float64, device=o.device)  # float64 exactly, not a float32 arg
    with _LAUNCH, _on(o):
        _tolerance_pass[(programs,)](o, r, o.numel(), limits, rows, at, BLOCK=BLOCK)
    worst = torch.argmax(rows[:, 4])
    j = at[worst]
    bad, max_diff, err_sq, ref_sq, top, got, expected = torch.stack(
        [
            rows[:, 0].sum(),
            rows[:, 1].max(),
            rows[:, 2].sum(),
            rows[:, 3].sum(),
            rows[worst, 4],
            o[j].to(torch.float64),
            r[j].to(torch.float64),
        ]
    ).tolist()
    return bad, max_diff, err_sq, ref_sq, top, got, expected
