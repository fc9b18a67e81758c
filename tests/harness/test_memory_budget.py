"""The GPU's memory budget (ladder.harness.memory_budget): cases that do not fit together wait, in turn, bounded."""

import threading
import time

import pytest

from ladder.harness.gpu_lock import GpuWaitTimeout
from ladder.harness.memory_budget import (
    CASE_FACTOR,
    HEADROOM,
    RUNNER_CONTEXT,
    MemoryBudget,
    capacity,
    case_bytes,
)

GIB = 1 << 30


def _hold_in_thread(budget: MemoryBudget, nbytes: int, who: str, order: list[str], hold_s: float) -> threading.Thread:
    def run() -> None:
        with budget.hold(nbytes, who):
            order.append(who)
            time.sleep(hold_s)

    t = threading.Thread(target=run, name=who)
    t.start()
    return t


def _until_waiting(budget: MemoryBudget, n: int) -> None:
    deadline = time.monotonic() + 10
    while budget.waiting != n:
        assert time.monotonic() < deadline, f"{budget.waiting} in line, {n} expected"
        time.sleep(0.01)


def test_cases_that_do_not_fit_together_run_one_after_the_other_and_those_that_fit_at_once():
    budget = MemoryBudget(10 * GIB)
    order: list[str] = []
    with budget.hold(6 * GIB, "first"):
        small = _hold_in_thread(budget, 3 * GIB, "fits beside it", order, 0.0)
        small.join(2)
        assert order == ["fits beside it"]  # 6 + 3 of 10: no wait
        big = _hold_in_thread(budget, 5 * GIB, "too big beside it", order, 0.0)
        _until_waiting(budget, 1)
        assert order == ["fits beside it"] and "first (6.0 GiB" in budget.holders()
    big.join(2)
    assert order == ["fits beside it", "too big beside it"] and budget.free == 10 * GIB


def test_a_large_case_waiting_is_not_passed_by_smaller_ones():
    budget = MemoryBudget(10 * GIB)
    order: list[str] = []
    with budget.hold(6 * GIB, "first"):
        big = _hold_in_thread(budget, 8 * GIB, "large", order, 0.05)
        _until_waiting(budget, 1)
        small = _hold_in_thread(budget, 1 * GIB, "small, later", order, 0.0)  # would fit now, but waits its turn
        _until_waiting(budget, 2)
        assert order == []
        assert budget.try_hold(1 * GIB, "output slot") is None  # a slot is never taken while a case waits
    big.join(2)
    small.join(2)
    assert order == ["large", "small, later"]


def test_a_case_larger_than_the_budget_waits_for_all_of_it_then_runs_alone():
    budget = MemoryBudget(10 * GIB)
    order: list[str] = []
    with budget.hold(1 * GIB, "first"):
        huge = _hold_in_thread(budget, 40 * GIB, "huge", order, 0.5)
        _until_waiting(budget, 1)
        assert order == []
    _until_waiting(budget, 0)  # granted once the first let go
    assert budget.free == 0 and "huge (10.0 GiB" in budget.holders()
    huge.join(2)
    assert order == ["huge"] and budget.free == 10 * GIB


def test_a_case_that_asks_for_all_waits_for_the_other_cases_not_for_the_runners_slots():
    """A case evaluated again alone (it ran out of memory beside others) holds what the output slots leave, once no
    other case holds any: the slots last as long as their runners, which may wait in line behind it."""
    budget = MemoryBudget(10 * GIB)
    order: list[str] = []
    slot = budget.try_hold(2 * GIB, "spare runner: output slot")
    assert slot is not None
    held: list[int] = []

    def alone() -> None:
        with budget.hold(None, "alone") as granted:
            held.append(granted)
            order.append("alone")
            time.sleep(0.3)

    with budget.hold(1 * GIB, "another case"):
        waiting = threading.Thread(target=alone)
        waiting.start()
        _until_waiting(budget, 1)
        later = _hold_in_thread(budget, 1 * GIB, "later", order, 0.0)  # in line behind it, not beside it
        _until_waiting(budget, 2)
        assert order == []
    waiting.join(2)
    later.join(2)
    assert order == ["alone", "later"] and held == [8 * GIB]
    budget.release(slot)
    assert budget.free == 10 * GIB


def test_a_case_asking_more_than_the_runners_slots_leave_waits_for_the_other_cases_not_for_the_slots():
    """A case whose share grew past what the runners' output slots leave (it ran short twice) waited for the slots
    to go, which last as long as their runners: the spare runners of jobs waiting in line behind it. Ten jobs on an
    H100 stopped so for five minutes (session 11). It is now granted what the slots leave, as one that asks for all."""
    budget = MemoryBudget(10 * GIB)
    slot = budget.try_hold(2 * GIB, "spare runner: output slot")
    assert slot is not None
    order: list[str] = []
    held: list[int] = []

    def large() -> None:
        with budget.hold(9 * GIB, "large", wait_s=5) as granted:
            held.append(granted)
            order.append("large")

    with budget.hold(1 * GIB, "another case"):
        waiting = threading.Thread(target=large)
        waiting.start()
        _until_waiting(budget, 1)
        assert order == []  # it waits for the other case
    waiting.join(5)
    assert order == ["large"] and held == [8 * GIB]
    with budget.hold(7 * GIB, "fits beside the slot") as granted:  # one the slots leave room for is granted whole
        assert granted == 7 * GIB
    budget.release(slot)
    assert budget.free == 10 * GIB


def test_a_case_that_ran_short_of_memory_asks_for_twice_its_share_next_time_and_never_more_than_all():
    budget = MemoryBudget(100 * GIB)
    key = ("matmul_sigmoid_sum", "c1")
    first = budget.estimate(key, 1 * GIB)
    budget.ran_short(key, 1 * GIB)
    assert budget.estimate(key, 1 * GIB) == 2 * first
    assert budget.estimate(("matmul_sigmoid_sum", "c2"), 1 * GIB) == first  # other cases keep theirs
    for _ in range(8):
        budget.ran_short(key, 1 * GIB)
    assert budget.estimate(key, 1 * GIB) == 2 * budget.capacity  # held as the whole budget (`hold` caps it)


def test_a_wait_past_its_bound_names_the_holders_and_gives_up_leaving_the_line():
    budget = MemoryBudget(10 * GIB)
    with budget.hold(9 * GIB, "softmax round 2: validate"):
        with (
            pytest.raises(GpuWaitTimeout, match=r"for 2\.0 GiB of device memory.*held by: softmax round 2"),
            budget.hold(2 * GIB, "gemv round 1", wait_s=0.3),
        ):
            pass
        ticket = budget.try_hold(1 * GIB, "output slot")  # the one that gave up no longer blocks the line
        assert ticket is not None
        budget.release(ticket)
    assert budget.free == 10 * GIB


def test_an_output_slot_is_taken_only_where_it_fits_now():
    budget = MemoryBudget(10 * GIB)
    ticket = budget.try_hold(4 * GIB, "slot a")
    assert ticket is not None and budget.free == 6 * GIB
    assert budget.try_hold(7 * GIB, "slot b") is None
    budget.release(ticket)
    assert budget.free == 10 * GIB


def test_a_cases_estimate_grows_with_its_bytes_and_keeps_the_flush_buffer():
    assert case_bytes(0) > 0
    assert case_bytes(2 * GIB) - case_bytes(GIB) == CASE_FACTOR * GIB
    with pytest.raises(ValueError, match="holds nothing"):
        MemoryBudget(0)


def test_a_case_whose_runner_held_more_than_estimated_gets_twice_that_next_time():
    budget = MemoryBudget(64 * GIB)
    key = ("moe_group_top2", "c4")
    first = budget.estimate(key, 100 << 20)  # 100 MiB moved: the estimate from its bytes
    assert first == case_bytes(100 << 20)
    budget.observe(key, 10 * GIB)  # a router's temporaries: far more than its inputs and outputs
    assert budget.estimate(key, 100 << 20) == 20 * GIB
    budget.observe(key, 2 * GIB)  # a later, smaller peak does not lower it
    assert budget.estimate(key, 100 << 20) == 20 * GIB
    assert budget.estimate(("moe_group_top2", "c1"), 100 << 20) == first  # other cases keep theirs
    budget.observe(("hostile", "c1"), 1 << 50)  # a runner's claim is capped at the budget
    assert budget.estimate(("hostile", "c1"), 0) == 2 * budget.capacity


def test_each_runner_a_run_may_keep_alive_leaves_its_context_out_of_the_budget():
    """Sixteen jobs keep 32 runner processes alive on one GPU, each with a CUDA context outside PyTorch's allocator:
    their cases get that much less of an 80 GB H100 than three jobs' do, and never less than a quarter of it."""
    h100 = 79 * GIB
    three, sixteen = capacity(h100, 6), capacity(h100, 32)
    assert three - sixteen == 26 * RUNNER_CONTEXT
    assert sixteen + 32 * RUNNER_CONTEXT + HEADROOM <= 0.95 * h100  # the contexts fit beside the cases' shares
    assert capacity(h100, 1000) == h100 // 4


def test_a_budget_resized_for_more_runners_makes_a_case_wait_that_fitted_before():
    budget = MemoryBudget(10 * GIB, total=12 * GIB)
    order: list[str] = []
    with budget.hold(6 * GIB, "first"):
        budget.resize(8 * GIB)
        waits = _hold_in_thread(budget, 3 * GIB, "no longer fits", order, 0.0)
        _until_waiting(budget, 1)
        assert order == [] and budget.total == 12 * GIB
        budget.resize(9 * GIB)  # a waiter looks again at once
        waits.join(2)
        assert order == ["no longer fits"]


def test_jobs_spread_over_gpus_leave_room_for_a_runner_and_a_spare_each_on_their_gpu(monkeypatch):
    """`ladder suite --jobs 5` on two GPUs puts three jobs on one of them: six runners' contexts on each GPU's
    budget, made before or after."""
    from ladder.harness import memory_budget

    h200 = 140 * GIB
    made_before = MemoryBudget(capacity(h200, 2), total=h200)
    monkeypatch.setattr(memory_budget, "_BUDGETS", {0: made_before})
    monkeypatch.setattr(memory_budget, "_runners", 2)
    memory_budget.expect_jobs(5, 2)
    assert made_before.capacity == capacity(h200, 6)
    memory_budget.expect_jobs(16, 1)
    assert made_before.capacity == capacity(h200, 32)
    assert memory_budget._runners == 32  # what a budget made from now on starts with
