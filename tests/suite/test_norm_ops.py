"""Operators #2–#9 (softplus … batch_norm_train): input generators, adversarial kinds, cost model, and the eager
reference agreeing with the oracle under the operator's own tolerance. The kernels themselves are checked by
test_initial_kernels.py (interpreter) and test_kernels_compile.py (sm90)."""

import math

import pytest
import torch

from suite.compare import compare
from suite.operator import EXTREME, RANDOM, Case, get_operator

MINE = ["softplus", "softmax", "log_softmax", "l2_norm", "layer_norm", "rms_norm_ch", "group_norm", "batch_norm_train"]


def numel(case):
    s = dict(case.shape)
    s.pop("G", None)
    return math.prod(s.values())


@pytest.mark.parametrize("name", MINE)
def test_cases_fit_int32_offsets_and_bytes_count_every_tensor_once(name):
    op = get_operator(name)
    assert op.number == MINE.index(name) + 2 and op.dtype == "fp32"
    for case in op.cases:
        n = numel(case)
        assert n < 2**31, f"{case.label()} has {n} elements"
        params = 2 * 4 * case.shape.get("C", 0) if name in ("group_norm", "batch_norm_train") else 0
        if name == "layer_norm":
            params = 2 * 4 * (n // next(iter(case.shape.values())))
        assert op.bytes_moved(case) == 2 * 4 * n + params
        # fp32 operators: memory-only speed of light (docs/suite.md#how-speed-of-light-is-computed)
        assert op.flops(case) == 0


@pytest.mark.parametrize("name", MINE)
@pytest.mark.parametrize("kind", [RANDOM, EXTREME])
def test_reference_agrees_with_oracle_on_small_cases(name, kind):
    op = get_operator(name)
    for case in op.small_cases:
        inputs = op.make_inputs(case, 0, "cpu", kind)
        red = op.reduction_len(case) if op.reduction_len else None
        v = compare(op.reference(*inputs), op.oracle(*inputs), op.tolerance, red)
        assert v.ok, f"{case.label()} {kind}: {v.detail}"


@pytest.mark.parametrize("name", MINE)
def test_inputs_are_seeded_fresh_and_kinds_are_checked(name):
    op = get_operator(name)
    case = op.small_cases[0]
    a, b, c = (op.make_inputs(case, s, "cpu", RANDOM)[0] for s in (0, 0, 1))
    assert torch.equal(a, b) and not torch.equal(a, c)
    with pytest.raises(ValueError, match="unknown input kind"):
        op.make_inputs(case, 0, "cpu", "ties")


def test_softplus_extreme_inputs_cover_the_threshold_and_exp_overflow():
    op = get_operator("softplus")
    (x,) = op.make_inputs(Case("t", {"M": 64, "N": 64}), 3, "cpu", EXTREME)
    assert x.abs().max() > 88.7 and bool((x == 20.0).any()) and bool((x == -20.0).any())
    assert bool(((x > 20) & (x < 20.00001)).any())  # just past the threshold
    out = op.oracle(x)
    assert torch.isfinite(out).all()


def test_softmax_extreme_rows_need_max_subtraction_and_keep_masked_entries():
    op = get_operator("softmax")
    case = op.small_cases[0]
    (x,) = op.make_inputs(case, 0, "cpu", EXTREME)
    finite = x[torch.isfinite(x)]
    assert finite.abs().max() > 500  # exp overflows fp32 without subtracting the row maximum
    assert torch.isneginf(x).any(dim=1).all()  # every row has masked entries, none is fully masked
    assert (x == x.amax(dim=1, keepdim=True)).sum(dim=1).min() >= 2  # tied maxima
    naive = torch.exp(x) / torch.exp(x).sum(dim=1, keepdim=True)  # no max subtraction
    assert not compare(naive, op.oracle(x), op.tolerance, case.shape["N"]).ok


@pytest.mark.parametrize("name", ["layer_norm", "group_norm", "batch_norm_train"])
def test_offset_inputs_for_one_pass_variance(name):
    op = get_operator(name)
    case = op.small_cases[0]
    rand = op.make_inputs(case, 0, "cpu", RANDOM)[0]
    ext = op.make_inputs(case, 0, "cpu", EXTREME)[0]
    assert torch.allclose(ext - rand, torch.full_like(rand, 32.0))


def test_rms_norm_extreme_makes_eps_placement_matter():
    op = get_operator("rms_norm_ch")
    case = op.small_cases[0]
    (x,) = op.make_inputs(case, 0, "cpu", EXTREME)
    mean_sq = (x.double() ** 2).mean(dim=1)
    assert (mean_sq < 1e-5).any() and (mean_sq > 1.0).any()
    eps_outside = x / (torch.sqrt(torch.mean(x**2, dim=1, keepdim=True)) + 1e-5)
    assert not compare(eps_outside, op.oracle(x), op.tolerance, op.reduction_len(case)).ok
