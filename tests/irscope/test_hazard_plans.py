"""The divisibility planner's inputs (irscope.hazards.plan) on real cuda:90 compiles of one kernel that carries an
offset beside two accumulators through a loop (tests/irscope/hazard_kernels.py: carried_walk): which arguments
the specialization left undivisible, which of them reach an access's address, and the plan that names them."""

from __future__ import annotations

import pytest

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
