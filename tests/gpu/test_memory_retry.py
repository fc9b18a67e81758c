"""On the GPU: a case that runs out of device memory because something else holds it is evaluated again alone, and
an honest kernel is then accepted (ladder.harness.evaluate, docs/suite-protocol.md#the-memory-budget)."""

from __future__ import annotations

import threading
from contextlib import ExitStack

import pytest
import torch

from ladder import confine
from ladder.harness import memory_budget
from ladder.harness.evaluate import evaluate_candidate
from tests import sandbox_required

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
    pytest.mark.skipif(sandbox_required.may_skip(), reason="no sandbox here"),
]

GIB = 1 << 30


def test_an_honest_kernel_short_of_memory_beside_another_holder_is_evaluated_again_alone_and_accepted():
    """Another holder of the budget (a stand-in for a job whose judge held more than its estimate) fills the GPU
    but for 3 GiB: new_gelu's frozen kernel on c3 (1 GiB in, 1 GiB out) cannot allocate. Its evaluation again alone
    waits for that holder, which lets go as soon as someone waits in line, and then passes."""
    budget = memory_budget.for_current_gpu()
    free, _ = torch.cuda.mem_get_info()
    filler = [torch.empty(free - 3 * GIB, dtype=torch.uint8, device="cuda")]  # beyond what its share says
    other = ExitStack()
    other.enter_context(budget.hold(1 << 20, "another job's case"))
    done = threading.Event()

    def let_go_once_someone_waits() -> None:
        while not done.is_set():
            if budget.waiting:
                filler.clear()
                torch.cuda.empty_cache()
                other.close()
                return
            done.wait(0.05)

    watcher = threading.Thread(target=let_go_once_someone_waits)
    watcher.start()
    try:
        r = evaluate_candidate(
            "new_gelu", cases=["c3"], device="cuda", seeds=1, references=(), confinement=confine.available()
        )
    finally:
        done.set()
        watcher.join()
        filler.clear()
        other.close()
    assert r.memory_retried == ["c3"], r.reasons()
    assert r.accepted, r.reasons()
    assert r.phase_seconds["memory_retry"] > 0
