"""On the GPU: candidates that cheat the timing path, through the harness as a round runs them (confined, timed on
new_gelu's c1 and c2, speed of light from measured ceilings). Each is rejected for what it does, or gains
nothing; the honest control is accepted. `scripts/gpu_smoke.sh` runs the same candidates and prints their
verdicts; the CPU side of the layers (the parent's own rules, the thread count from outside) is in
tests/harness/test_candidates.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from ladder import confine
from ladder.harness.ceilings import measure
from ladder.harness.evaluate import evaluate_candidate
from ladder.harness.timing import TimingSettings
from tests import sandbox_required

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
    pytest.mark.skipif(sandbox_required.may_skip(), reason="no sandbox here"),
]

HOSTILE = Path(__file__).parent / "hostile"
TIMING = TimingSettings(rounds=2, rep_ms=10)


@pytest.fixture(scope="module")
def ceilings():
    return measure(copy_bytes=256 << 20, gemm_n=4096, warmup_ms=5, rep_ms=20)


def _evaluate(name: str, ceilings, static: bool = True):
    return evaluate_candidate(
        "new_gelu",
        candidate=HOSTILE / f"{name}.py",
        cases=["c1", "c2"],
        device="cuda",
        seeds=2,
        timing=TIMING.__dict__,
        references=(),
        confinement=confine.available(),
        ceilings=ceilings,
        timeout_s=600,
        static=static,
    )


def _ms(result, case: str = "c1") -> float:
    return next(c for c in result.cases if c["case"] == case)["timing"]["candidate"]["ms"]


def test_the_honest_control_is_accepted_and_timed(ceilings):
    r = _evaluate("honest", ceilings)
    assert r.accepted, r.reasons()
    assert all(c["timed"]["ok"] and c["timed"]["runs"] == 2 for c in r.cases)


def test_computing_only_when_checked_is_caught_on_the_timed_calls(ceilings):
    r = _evaluate("checks_only", ceilings)
    assert not r.static_violations and not r.accepted
    reasons = "\n".join(r.reasons())
    assert "timed random/timed" in reasons and "wrong output" in reasons, reasons
    assert "speed of light" in reasons, reasons  # a no-op kernel is also faster than the hardware can be


def test_a_cache_keyed_on_the_input_version_never_serves_a_timed_call(ceilings):
    honest, cached = _evaluate("honest", ceilings), _evaluate("caches_by_version", ceilings, static=False)
    # every timed call marks its inputs modified: the cache misses, so the candidate computes and is timed doing so
    assert cached.accepted, cached.reasons()
    assert _ms(cached) > 0.8 * _ms(honest) and _ms(cached, "c2") > 0.8 * _ms(honest, "c2")


def test_a_thread_started_at_import_is_seen_from_outside(ceilings):
    r = _evaluate("thread_at_import", ceilings, static=False)
    assert not r.accepted and any("started 1 thread" in p for p in r.process), r.reasons()


def test_a_patched_monitor_does_not_hide_the_raw_facts(ceilings):
    assert _evaluate("patches_monitor", ceilings).static_violations  # `_T = torch` resolved: torch.os
    r = _evaluate("patches_monitor", ceilings, static=False)
    reasons = "\n".join(r.reasons())
    assert not r.accepted and "no Triton kernel was launched" in reasons and "gelu" in reasons, reasons
