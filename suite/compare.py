"""Output comparison against the oracle, per the operator's Tolerance (docs/suite-protocol.md#correctness).

Every element is checked in float64, on the output's own device: on a GPU by the two fused passes of
suite.compare_kernels (gigabyte outputs in milliseconds), on the CPU in float64 slices. Outputs must be exactly
`torch.Tensor` with the oracle's shape and device; float outputs may be narrower than the oracle (bf16 operators
are compared against an fp32-upcast oracle, docs/suite.md; the harness checks the operator's dtype contract),
integer outputs must have the oracle's dtype. NaN never passes unless the oracle has NaN at the same position;
infinities must match in position and sign.

Float rule: |out − ref| ≤ atol·max(1, max|ref|) + rtol·|ref| for every element, and the relative L2 error
‖out − ref‖/‖ref‖ ≤ rel_l2. With `atol_scale_sqrt_n` (long reductions, scans) both the absolute term and the
relative-L2 bound grow to √N·eps32 (·max|ref| for the absolute term), N being the reduction length when the
caller passes it and the output's element count otherwise, so summation order is not punished.

`verify` is the one entry point for correctness checks (the harness, and through suite.interp_check the ladder's
interpreter validator and the pattern appliers' checker): an operator whose outputs admit more than one right
answer (a selection at a near-tie) supplies its own rule as `Operator.verify`; every other operator is compared
with its oracle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from suite import compare_kernels
from suite.operator import Operator, Tolerance

EPS32 = 1.2e-7
CHUNK = 1 << 24


@dataclass
class Verdict:
    ok: bool
    detail: str
    max_abs: float = 0.0
    rel_l2: float = 0.0


def _as_tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, tuple | list) else (x,)


def verify(op: Operator, inputs: tuple, out: Any, reduction_len: int | None = None) -> Verdict:
    """Whether `out` is a correct result of `op` on `inputs` (pristine copies): the operator's own `verify` rule
    where it has one, else `compare` with its oracle. Every correctness check goes through here."""
    if op.verify is not None:
        return op.verify(inputs, out, op.tolerance)
    return compare(out, op.oracle(*inputs), op.tolerance, reduction_len)


def check_structure(out: Any, ref: Any) -> Verdict:
    """Output count, exact type, shape, dtype kind and device of `out` against `ref`; values are not looked at."""
    outs, refs = _as_tuple(out), _as_tuple(ref)
    if len(outs) != len(refs):
        return Verdict(False, f"expected {len(refs)} outputs, got {len(outs)}")
    for i, (o, r) in enumerate(zip(outs, refs)):
        if type(o) is not torch.Tensor:  # exactly torch.Tensor: no subclasses, no lazy wrappers
            return Verdict(False, f"output {i} is {type(o).__name__}, not torch.Tensor")
        if tuple(o.shape) != tuple(r.shape):
            return Verdict(False, f"output {i} has shape {tuple(o.shape)}, expected {tuple(r.shape)}")
        if o.is_floating_point() != r.is_floating_point() or (not r.is_floating_point() and o.dtype != r.dtype):
            return Verdict(False, f"output {i} has dtype {o.dtype}, the reference {r.dtype}")
        if o.device != r.device:
            return Verdict(False, f"output {i} is on {o.device}, expected {r.device}")
    return Verdict(True, "ok")


def compare(out: Any, ref: Any, tol: Tolerance, reduction_len: int | None = None) -> Verdict:
    """Check `out` (the candidate's outputs) against `ref` (the oracle's) under `tol`."""
    structure = check_structure(out, ref)
    if not structure.ok:
        return structure
    outs, refs = _as_tuple(out), _as_tuple(ref)
    if tol.kind == "topk_set":
        return _compare_topk_set(outs, refs, tol, reduction_len)
    worst = Verdict(True, "ok")
    for i, (o, r) in enumerate(zip(outs, refs)):
        v = _compare_one(o.detach(), r.detach(), tol, i, reduction_len)
        if not v.ok:
            return v
        worst = Verdict(True, "ok", max(v.max_abs, worst.max_abs), max(v.rel_l2, worst.rel_l2))
    return worst


def _compare_topk_set(outs: tuple, refs: tuple, tol: Tolerance, reduction_len: int | None) -> Verdict:
    """(values, indices) per row: the index sets must be equal; values are compared aligned by index."""
    if len(outs) != 2:
        return Verdict(False, f"topk_set compares (values, indices); got {len(outs)} outputs")
    (ov, oi), (rv, ri) = outs, refs
    oi_sorted, o_perm = oi.sort(dim=-1)
    ri_sorted, r_perm = ri.sort(dim=-1)
    index_check = _compare_one(oi_sorted, ri_sorted, Tolerance("index"), 1, None)
    if not index_check.ok:
        return Verdict(False, index_check.detail.replace("index mismatches", "rows whose index sets differ"))
    return _compare_one(ov.gather(-1, o_perm), rv.gather(-1, r_perm), tol, 0, reduction_len)


def _compare_one(o: torch.Tensor, r: torch.Tensor, tol: Tolerance, i: int, reduction_len: int | None) -> Verdict:
    if tol.kind == "index" or not r.is_floating_point():
        bad = (o.to(torch.int64) != r.to(torch.int64)).nonzero()
        if len(bad):
            idx = tuple(bad[0].tolist())
            return Verdict(
                False, f"output {i}: {len(bad)} index mismatches, first at {idx}: {o[idx].item()} vs {r[idx].item()}"
            )
        return Verdict(True, "ok")
    return _compare_float(o.reshape(-1), r.reshape(-1), tol, i, reduction_len)


def _chunks(o: torch.Tensor, r: torch.Tensor):
    """float64 slices of at most CHUNK elements: a 2 GB output never needs 5 float64 copies of itself at once."""
    for start in range(0, r.numel(), CHUNK):
        yield start, o[start : start + CHUNK].to(torch.float64), r[start : start + CHUNK].to(torch.float64)


def _finite_stats(o: torch.Tensor, r: torch.Tensor) -> tuple[float, float, float, float]:
    """(NaN mismatches, infinity mismatches in position or sign, max |ref| where ref is finite, finite count)."""
    # Each slice's figures are stacked and read back once: on a GPU shared with other work every read-back waits
    # its turn, and one per figure made the comparison the judge's largest cost.
    nan_diffs, inf_diffs, scale, finite_count = 0.0, 0.0, 0.0, 0.0
    for _, oc, rc in _chunks(o, r):
        nan_o, nan_r = torch.isnan(oc), torch.isnan(rc)
        inf_o, inf_r = torch.isinf(oc), torch.isinf(rc)
        finite = ~(nan_r | inf_r)
        nan_diff, inf_diff, chunk_scale, count = torch.stack(
            [
                (nan_o != nan_r).sum().to(torch.float64),
                ((inf_o != inf_r) | (inf_r & (oc != rc))).sum().to(torch.float64),
                torch.where(finite, rc.abs(), 0.0).max(),
                finite.sum().to(torch.float64),
            ]
        ).tolist()
        nan_diffs, inf_diffs = nan_diffs + nan_diff, inf_diffs + inf_diff
        scale, finite_count = max(scale, chunk_scale), finite_count + count
    return nan_diffs, inf_diffs, scale, finite_count


def _tolerance_stats(
    o: torch.Tensor, r: torch.Tensor, atol: float, rtol: float
) -> tuple[float, float, float, float, float, float, float]:
    """Where ref is finite: (elements over atol + rtol·|ref|, max |diff|, Σ diff², Σ ref², the worst excess over
    the limit, the output and the reference there)."""
    bad_count, max_abs, err_sq, ref_sq = 0.0, 0.0, 0.0, 0.0
    worst = (-math.inf, 0.0, 0.0)
    for _, oc, rc in _chunks(o, r):
        keep = torch.isfinite(rc)  # the first pass found the output finite exactly there
        diff = torch.where(keep, (oc - rc).abs(), 0.0)
        excess = torch.where(keep, diff - (atol + rtol * rc.abs()), -math.inf)
        j = torch.argmax(excess)
        bad, chunk_max, chunk_err, chunk_ref, top, got, expected = torch.stack(
            [
                (excess > 0).sum().to(torch.float64),
                diff.max(),
                diff.square().sum(),
                torch.where(keep, rc.square(), 0.0).sum(),
                excess[j],
                oc[j],
                rc[j],
            ]
        ).tolist()
        bad_count, max_abs, err_sq, ref_sq = (
            bad_count + bad,
            max(max_abs, chunk_max),
            err_sq + chunk_err,
            ref_sq + chunk_ref,
        )
        if top > worst[0]:
            worst = (top, got, expected)
    return bad_count, max_abs, err_sq, ref_sq, *worst


def _compare_float(o: torch.Tensor, r: torch.Tensor, tol: Tolerance, i: int, reduction_len: int | None) -> Verdict:
    # Two passes: the first finds the scale the absolute tolerance is relative to. On a GPU each is one fused
    # kernel (suite.compare_kernels: a judge sharing the GPU with other evaluations spent most of its time here).
    if o.is_cuda and r.is_cuda:
        o, r = o.contiguous(), r.contiguous()
        finite_stats, tolerance_stats = compare_kernels.finite_stats, compare_kernels.tolerance_stats
    else:
        finite_stats, tolerance_stats = _finite_stats, _tolerance_stats
    nan_diff, inf_diff, scale, finite_count = finite_stats(o, r)
    if nan_diff:
        return Verdict(
            False, f"output {i}: NaN at {int(nan_diff)} positions where the reference has none (or vice versa)"
        )
    if inf_diff:
        return Verdict(False, f"output {i}: infinities differ from the reference")
    if finite_count == 0:
        return Verdict(True, "ok")
    atol = tol.atol * max(scale, 1.0)
    rel_l2_limit = tol.rel_l2
    if tol.atol_scale_sqrt_n:
        sqrt_n = math.sqrt(reduction_len if reduction_len else finite_count)
        atol = max(atol, sqrt_n * EPS32 * scale)
        rel_l2_limit = max(rel_l2_limit, sqrt_n * EPS32)
    bad_count, max_abs, err_sq, ref_sq, _, got, expected = tolerance_stats(o, r, atol, tol.rtol)
    rel_l2 = math.sqrt(err_sq) / (math.sqrt(ref_sq) or 1.0)
    if bad_count:
        return Verdict(
            False,
            f"output {i}: {int(bad_count)} elements outside rtol={tol.rtol} atol={atol:.3g}; worst got "
            f"{got:.6g} expected {expected:.6g}",
            max_abs,
            rel_l2,
        )
    if rel_l2 > rel_l2_limit:
        return Verdict(False, f"output {i}: relative L2 error {rel_l2:.3g} > {rel_l2_limit:.3g}", max_abs, rel_l2)
    return Verdict(True, "ok", max_abs, rel_l2)
