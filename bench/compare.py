"""Output comparison against the oracle, per the operator's Tolerance (SUITE.md §6.1).

Every element is checked, on the output's own device (a GPU compares gigabyte outputs in milliseconds), in
float64. Outputs must be exactly `torch.Tensor` with the oracle's shape, dtype (the dtype contract) and device.
NaN never passes unless the oracle has NaN at the same position; infinities must match in position and sign.

Float rule: |out − ref| ≤ atol·max(1, max|ref|) + rtol·|ref| for every element, and the relative L2 error
‖out − ref‖/‖ref‖ ≤ rel_l2. With `atol_scale_sqrt_n` (long reductions, scans) both the absolute term and the
relative-L2 bound grow to √N·eps32 (·max|ref| for the absolute term), N being the reduction length when the
caller passes it and the output's element count otherwise, so summation order is not punished.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from bench.operator import Tolerance

EPS32 = 1.2e-7


@dataclass
class Verdict:
    ok: bool
    detail: str
    max_abs: float = 0.0
    rel_l2: float = 0.0


def _as_tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, tuple | list) else (x,)


def compare(out: Any, ref: Any, tol: Tolerance, reduction_len: int | None = None) -> Verdict:
    """Check `out` (the candidate's outputs) against `ref` (the oracle's) under `tol`."""
    outs, refs = _as_tuple(out), _as_tuple(ref)
    if len(outs) != len(refs):
        return Verdict(False, f"expected {len(refs)} outputs, got {len(outs)}")
    for i, (o, r) in enumerate(zip(outs, refs)):
        if type(o) is not torch.Tensor:  # exactly torch.Tensor: no subclasses, no lazy wrappers
            return Verdict(False, f"output {i} is {type(o).__name__}, not torch.Tensor")
        if tuple(o.shape) != tuple(r.shape):
            return Verdict(False, f"output {i} has shape {tuple(o.shape)}, expected {tuple(r.shape)}")
        if o.dtype != r.dtype:
            return Verdict(False, f"output {i} has dtype {o.dtype}, the contract is {r.dtype}")
        if o.device != r.device:
            return Verdict(False, f"output {i} is on {o.device}, expected {r.device}")
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
            return Verdict(False, f"output {i}: {len(bad)} index mismatches, first at {idx}: "
                           f"{o[idx].item()} vs {r[idx].item()}")  # fmt: skip
        return Verdict(True, "ok")
    o64, r64 = o.to(torch.float64), r.to(torch.float64)
    nan_o, nan_r = torch.isnan(o64), torch.isnan(r64)
    if not torch.equal(nan_o, nan_r):
        n = int((nan_o != nan_r).sum())
        return Verdict(False, f"output {i}: NaN at {n} positions where the reference has none (or vice versa)")
    inf_o, inf_r = torch.isinf(o64), torch.isinf(r64)
    if not torch.equal(inf_o, inf_r) or not torch.equal(o64[inf_o], r64[inf_r]):
        return Verdict(False, f"output {i}: infinities differ from the reference")
    finite = ~(nan_r | inf_r)
    of, rf = o64[finite], r64[finite]
    if rf.numel() == 0:
        return Verdict(True, "ok")
    scale = float(rf.abs().max())
    atol = tol.atol * max(scale, 1.0)
    rel_l2_limit = tol.rel_l2
    if tol.atol_scale_sqrt_n:
        sqrt_n = math.sqrt(reduction_len if reduction_len else rf.numel())
        atol = max(atol, sqrt_n * EPS32 * scale)
        rel_l2_limit = max(rel_l2_limit, sqrt_n * EPS32)
    diff = (of - rf).abs()
    limit = atol + tol.rtol * rf.abs()
    bad = diff > limit
    max_abs = float(diff.max())
    denom = float(torch.linalg.vector_norm(rf)) or 1.0
    rel_l2 = float(torch.linalg.vector_norm(of - rf)) / denom
    if bool(bad.any()):
        k = int(bad.sum())
        j = int(torch.argmax((diff - limit).masked_fill(~bad, -math.inf)))
        return Verdict(False, f"output {i}: {k} elements outside rtol={tol.rtol} atol={atol:.3g}; worst got "
                       f"{float(of[j]):.6g} expected {float(rf[j]):.6g}", max_abs, rel_l2)  # fmt: skip
    if rel_l2 > rel_l2_limit:
        return Verdict(False, f"output {i}: relative L2 error {rel_l2:.3g} > {rel_l2_limit:.3g}", max_abs, rel_l2)
    return Verdict(True, "ok", max_abs, rel_l2)
