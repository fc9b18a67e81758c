"""suite.compare on real tensors: NaN/Inf rules, the dtype contract, tolerance edges, √N scaling, chunking, top-k
sets."""

import math

import pytest
import torch

from suite import compare as cmp
from suite.compare import compare
from suite.operator import Tolerance

FP32 = Tolerance("float", rtol=1e-4, atol=1e-5, rel_l2=1e-5)


def ref_tensor(n=1000, seed=0):
    return torch.randn(n, generator=torch.Generator().manual_seed(seed))


def test_identical_passes_and_reports_zero_error():
    r = ref_tensor()
    v = compare(r.clone(), r, FP32)
    assert v.ok and v.max_abs == 0 and v.rel_l2 == 0


def test_nan_never_passes_unless_the_reference_has_it_there():
    r = ref_tensor()
    o = r.clone()
    o[17] = float("nan")
    v = compare(o, r, FP32)
    assert not v.ok and "NaN at 1 positions" in v.detail
    r2 = r.clone()
    r2[17] = float("nan")
    assert compare(o, r2, FP32).ok
    o[18] = float("nan")
    assert not compare(o, r2, FP32).ok


def test_infinities_must_match_in_position_and_sign():
    r = ref_tensor()
    r[3] = float("inf")
    o = r.clone()
    assert compare(o, r, FP32).ok
    o[3] = -float("inf")
    assert "infinities" in compare(o, r, FP32).detail
    o[3] = 1e30
    assert not compare(o, r, FP32).ok


def test_contract_type_shape_and_dtype_kind():
    r = ref_tensor()

    class Sub(torch.Tensor):
        pass

    assert "not torch.Tensor" in compare(r.clone().as_subclass(Sub), r, FP32).detail
    assert "shape" in compare(r[:-1].clone(), r, FP32).detail
    assert compare(r.to(torch.bfloat16), r, Tolerance("float", rtol=2e-2, atol=2e-2, rel_l2=5e-3)).ok
    assert "dtype" in compare(r, torch.ones(1000, dtype=torch.int64), Tolerance("index")).detail
    assert "dtype" in compare(torch.ones(1000, dtype=torch.int32), torch.ones(1000, dtype=torch.int64), FP32).detail
    assert "expected 2 outputs" in compare(r, (r, r), FP32).detail


def test_elementwise_tolerance_edges():
    r = torch.full((100,), 2.0)
    scale_atol = 1e-5 * 2.0  # atol·max(1, max|ref|)
    limit = scale_atol + 1e-4 * 2.0
    o = r.clone().double()
    o[5] += 0.9 * limit
    loose = Tolerance("float", rtol=1e-4, atol=1e-5, rel_l2=1.0)
    assert compare(o.float(), r, loose).ok
    o[5] = 2.0 + 1.5 * limit
    v = compare(o.float(), r, loose)
    assert not v.ok and "1 elements outside" in v.detail and "expected 2" in v.detail


def test_relative_l2_bound_applies_on_its_own():
    r = ref_tensor(10000)
    o = r * (1 + 5e-5)  # every element within rtol=1e-4, but rel L2 = 5e-5 > 1e-5
    v = compare(o, r, FP32)
    assert not v.ok and "relative L2" in v.detail
    assert math.isclose(v.rel_l2, 5e-5, rel_tol=0.05)


def test_sqrt_n_scaling_uses_the_reduction_length():
    r = ref_tensor(4096)
    o = r.clone()
    o[0] += 3e-4 * float(r.abs().max())  # an accumulated-rounding-sized error
    tol = Tolerance("float", rtol=1e-4, atol=1e-5, rel_l2=1e-5, atol_scale_sqrt_n=True)
    assert not compare(o, r, tol, reduction_len=16).ok  # short reduction: √16·eps is tiny
    assert compare(o, r, tol, reduction_len=8_000_000).ok  # √8M·eps32 ≈ 3.4e-4 of max|ref|


def test_chunked_comparison_finds_the_worst_element_in_any_chunk(monkeypatch):
    monkeypatch.setattr(cmp, "CHUNK", 64)
    r = ref_tensor(1000)
    o = r.clone()
    o[10] += 1e-3
    o[900] += 5e-2
    v = compare(o, r, FP32)
    assert "2 elements outside" in v.detail
    assert f"expected {float(r[900]):.6g}" in v.detail
    monkeypatch.setattr(cmp, "CHUNK", 1 << 24)
    assert compare(o, r, FP32).rel_l2 == pytest.approx(v.rel_l2)


def test_index_outputs_are_exact():
    r = torch.tensor([[1, 2], [3, 4]])
    o = r.clone()
    o[1, 0] = 5
    v = compare(o, r, Tolerance("index"))
    assert not v.ok and "first at (1, 0)" in v.detail


def test_topk_sets_compare_as_sets_with_aligned_values():
    vals = torch.tensor([[0.9, 0.5, 0.1]])
    idx = torch.tensor([[4, 2, 7]])
    tol = Tolerance("topk_set", rtol=1e-4, atol=1e-5, rel_l2=1e-5)
    perm = torch.tensor([2, 0, 1])
    assert compare((vals[:, perm], idx[:, perm]), (vals, idx), tol).ok
    assert "index sets differ" in compare((vals, torch.tensor([[4, 2, 6]])), (vals, idx), tol).detail
    swapped = vals[:, torch.tensor([1, 0, 2])]  # right set, values attached to the wrong indices
    assert not compare((swapped, idx), (vals, idx), tol).ok
