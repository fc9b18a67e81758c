"""The divisibility planner's inputs (irscope.hazards.plan) on real cuda:90 compiles of one kernel that carries an
offset beside two accumulators through a loop (tests/irscope/hazard_kernels.py: carried_walk): which arguments
the specialization left undivisible, which of them reach an access's address, and the plan that names them; and
on kernels of their own, a loop that carries one value or none, a line without an access, an `if` with two results."""

from __future__ import annotations

import pytest
import triton
import triton.language as tl

from irscope import hazards
from irscope.hazards.plan import HINT, divisibility, feeding, undivisible
from irscope.trajectory import Trajectory
from tests import trajectory_cache
from tests.irscope import hazard_kernels as K
from tests.irscope.test_hazard_view import line_of

ARGS = dict(out_ptr="*fp32", stride=4099, shift=4097, scale=0.5, bias_n=7, bias_m=9, n_steps=63)


@pytest.fixture(scope="module")
def walk() -> dict[str, Trajectory]:
    """The kernel with x_ptr 16-byte aligned ("aligned") and only 4-byte aligned ("unaligned")."""
    return {
        name: trajectory_cache.capture(
            K.carried_walk, target="cuda:90", kernel_kwargs=dict(ARGS, x_ptr=ptr), BLOCK=1024
        )
        for name, ptr in (("aligned", "*fp32"), ("unaligned", "*fp32:4"))
    }


def test_undivisible_lists_the_integer_and_pointer_arguments_not_proved_divisible_in_signature_order(walk):
    # scale (a float) and BLOCK (a constexpr) have no divisibility to prove; out_ptr and an aligned x_ptr have it
    assert undivisible(walk["aligned"]) == ["stride", "shift", "bias_n", "bias_m", "n_steps"]
    assert undivisible(walk["unaligned"]) == ["x_ptr", "stride", "shift", "bias_n", "bias_m", "n_steps"]


def test_an_access_in_the_loop_is_fed_by_its_own_carried_value_only(walk):
    """The load's offset is the loop's second carried value: its start (shift) and its step (stride) reach the
    address; the accumulators carried beside it (bias_n, bias_m) and the loop's bounds (n_steps) do not."""
    t = walk["aligned"]
    assert feeding(t, (line_of(K.carried_walk, "tl.load"),), undivisible(t)) == ["stride", "shift"]


def test_an_access_after_the_loop_is_fed_through_the_loop_result_it_uses(walk):
    """The store's offset is the loop's second result: what its second carried value started as and what each
    iteration added, not the loop's bounds or the other results."""
    t = walk["aligned"]
    assert feeding(t, (line_of(K.carried_walk, "tl.store"),), undivisible(t)) == ["stride", "shift"]


def test_the_divisibility_plan_names_every_argument_that_feeds_the_narrow_access(walk):
    t = walk["unaligned"]
    (h,) = [h for h in hazards.find(t).hazards if h.symptom == "narrow-memory-access"]
    assert h.lines == (line_of(K.carried_walk, "tl.load"),)
    (plan,) = divisibility(h, t)
    assert plan.condition == "x_ptr, stride, shift divisible by 16" and plan.realize == HINT
    assert plan.params == {"x_ptr": 16, "stride": 16, "shift": 16}
    assert plan.arg_attrs == ("x_ptr:divisibility=16", "stride:divisibility=16", "shift:divisibility=16")
    assert "x_ptr = tl.multiple_of(x_ptr, 16); stride = tl.multiple_of(stride, 16)" in plan.requirement


@triton.jit
def one_carried(x_ptr, out_ptr, stride, n_steps, BLOCK: tl.constexpr):
    # a loop that carries one value (its result is used as `%x`, not `%x#0`) and a loop that carries nothing
    off = tl.arange(0, BLOCK)
    for _ in range(n_steps):
        off += stride
    acc = tl.load(x_ptr + off)
    for i in range(n_steps):
        tl.store(out_ptr + i * BLOCK + tl.arange(0, BLOCK), acc)


@pytest.fixture(scope="module")
def one() -> Trajectory:
    args = dict(x_ptr="*fp32", out_ptr="*fp32", stride=4099, n_steps=63)
    return trajectory_cache.capture(one_carried, target="cuda:90", kernel_kwargs=args, BLOCK=1024)


def test_a_loop_carrying_one_value_is_walked_through_its_one_result_and_a_loop_carrying_none_is_skipped(one):
    """The load after the first loop reads at its single result: what it started as and the stride each iteration
    added reach the address, the loop's bound (n_steps) does not; the second loop carries nothing to follow."""
    assert undivisible(one) == ["stride", "n_steps"]
    assert feeding(one, (line_of(one_carried, "acc = tl.load"),), undivisible(one)) == ["stride"]


def test_a_line_without_a_load_or_store_is_walked_from_all_of_its_ops_operands(one):
    # `off += stride` has no access: its add's operands are followed (the carried offset and the stride)
    assert feeding(one, (line_of(one_carried, "off += stride"),), undivisible(one)) == ["stride"]


def test_the_specialization_lists_every_runtime_argument_in_attrs_proved_divisible_or_not(one):
    # so undivisible() never reads its default of no attributes for a name of the signature
    assert one.specialization.attrs["stride"] == [] and one.specialization.attrs["n_steps"] == []


@triton.jit
def branch_pair(x_ptr, out_ptr, a, b, flag, n, BLOCK: tl.constexpr):
    # an `if` that yields two values computed in it (its results `%x#0`, `%x#1`; a store in each branch keeps it an
    # `if`); n
    # reaches only the other store
    cols = tl.arange(0, BLOCK)
    if flag > 0:
        off = a + cols
        step = b * cols
        tl.store(out_ptr + cols, tl.zeros([BLOCK], tl.float32))
    else:
        off = b + cols
        step = a * cols
        tl.store(out_ptr + n + cols, tl.zeros([BLOCK], tl.float32))
    tl.store(x_ptr + off + step, tl.full([BLOCK], 1.0, tl.float32))


def test_the_results_of_an_op_with_several_results_lead_back_to_that_op():
    args = dict(x_ptr="*fp32", out_ptr="*fp32", a=4099, b=4097, flag=3, n=4095)
    t = trajectory_cache.capture(branch_pair, target="cuda:90", kernel_kwargs=args, BLOCK=256)
    assert undivisible(t) == ["a", "b", "flag", "n"]
    found = feeding(t, (line_of(branch_pair, "tl.store(x_ptr"),), undivisible(t))
    assert "flag" in found and "n" not in found
