"""Timer attacks on a GPU (skipped without CUDA): the static check rejects both candidates unrun; evaluated
without it (static=False, as only tests do), the layers behind it still catch them, confined like a round's
candidate. One patches CUDA events' clock (the tamper check sees the identity change); one replaces the runner's
timed block so every figure is inflated (the parent's wall clock bounds the device time a figure may claim)."""

from __future__ import annotations

import pytest

from ladder import confine
from ladder.harness.evaluate import evaluate_candidate
from ladder.harness.timing import TimingSettings
from tests import sandbox_required
from tests.ladder.candidates import module

torch = pytest.importorskip("torch")
pytestmark = [
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA"),
    pytest.mark.skipif(sandbox_required.may_skip(), reason="no sandbox here"),
]

PATCHES_EVENTS = module().replace(
    "\n\n@triton.jit", "\ntorch.cuda.Event.elapsed_time = lambda self, end: 1e-6\n\n@triton.jit", 1
)
INFLATES = module().replace(
    "\n\n@triton.jit",
    "\ntorch.os.sys.modules['ladder.harness.timing']._block = lambda *a, **kw: [100.0] * 50\n\n@triton.jit",
    1,
)
SETTINGS = TimingSettings(warmup_ms=2, rep_ms=5, rounds=1)


def _evaluate(tmp_path, source: str, static: bool):
    path = tmp_path / "candidate.py"
    path.write_text(source)
    return evaluate_candidate(
        "new_gelu",
        candidate=path,
        cases=["c1"],
        device="cuda",
        seeds=1,
        timing=SETTINGS.__dict__,
        references=(),
        confinement=confine.available(),
        timeout_s=300,
        static=static,
    )


@pytest.mark.parametrize("source", [PATCHES_EVENTS, INFLATES], ids=["patches_events", "inflates"])
def test_the_static_check_rejects_timer_attacks(tmp_path, source):
    r = _evaluate(tmp_path, source, static=True)
    assert not r.accepted and r.static_violations and not r.cases


def test_patched_cuda_events_are_seen(tmp_path):
    r = _evaluate(tmp_path, PATCHES_EVENTS, static=False)
    assert not r.accepted and "torch.cuda.Event.elapsed_time" in r.tampered


def test_inflated_figures_exceed_the_parents_wall_clock(tmp_path):
    r = _evaluate(tmp_path, INFLATES, static=False)
    assert not r.accepted
    assert any("not believable" in reason for reason in r.reasons()), r.reasons()
