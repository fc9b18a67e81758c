"""Output comparison against the oracle, per the operator's Tolerance (SUITE.md §6.1)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from bench.operator import Tolerance


@dataclass
class Verdict:
    ok: bool
    detail: str
    max_abs: float = 0.0
    rel_l2: float = 0.0


def _as_tuple(x: Any) -> tuple:
    return tuple(x) if isinstance(x, tuple | list) else (x,)


def compare(out: Any, ref: Any, tol: Tolerance) -> Verdict:
    """Every element checked; NaN never passes unless the reference has NaN at the same position."""
    outs, refs = _as_tuple(out), _as_tuple(ref)
    if len(outs) != len(refs):
        return Verdict(False, f"expected {len(refs)} outputs, got {len(outs)}")
    worst = Verdict(True, "ok")
    for i, (o, r) in enumerate(zip(outs, refs)):
        if type(o) is not torch.Tensor:  # exactly torch.Tensor: no subclasses, no lazy wrappers
            return Verdict(False, f"output {i} is {type(o).__name__}, not torch.Tensor")
        if tuple(o.shape) != tuple(r.shape):
            return Verdict(False, f"output {i} has shape {tuple(o.shape)}, expected {tuple(r.shape)}")
        v = _compare_one(o.detach().cpu(), r.detach().cpu(), tol, i)
        if not v.ok:
            return v
        if v.max_abs >= worst.max_abs:
            worst = Verdict(True, "ok", max(v.max_abs, worst.max_abs), max(v.rel_l2, worst.rel_l2))
    return worst


def _compare_one(o: torch.Tensor, r: torch.Tensor, tol: Tolerance, i: int) -> Verdict:
    if tol.kind == "index" or not r.is_floating_point():
        bad = (o.to(torch.int64) != r.to(torch.int64)).nonzero()
        if len(bad):
            idx = tuple(bad[0].tolist())
            return Verdict(False, f"output {i}: {len(bad)} index mismatches, first at {idx}: {o[idx]} vs {r[idx]}")
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
    if tol.atol_scale_sqrt_n:
        atol = max(atol, math.sqrt(rf.numel()) * 1.2e-7 * scale)
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
                       f"{float(of[j]):.6g} expected {float(rf[j]):.6g}", max_abs, rel_l2)
    if rel_l2 > tol.rel_l2:
        return Verdict(False, f"output {i}: relative L2 error {rel_l2:.3g} > {tol.rel_l2:.3g}", max_abs, rel_l2)
    return Verdict(True, "ok", max_abs, rel_l2)
