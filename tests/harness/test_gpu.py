"""The harness's CUDA path (run on a GPU machine with pytest: `pytest -m gpu tests/harness/test_gpu.py`)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from irscope.capture.loader import load_module
from ladder.harness.anticheat import ForwardMonitor
from ladder.harness.correctness import poisoned_allocations
from suite.operator import KERNELS_DIR

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]


def test_launch_hook_counts_one_launch_per_forward_on_the_current_stream():
    forward = load_module(KERNELS_DIR / "softplus.py", "gpu_softplus").forward
    x = torch.randn(4096, device="cuda")
    forward(x)  # compile outside the monitor
    with ForwardMonitor() as m:
        forward(x)
    assert m.report.launches == 1 and dict(m.report.kernels) == {"softplus_kernel": 1}
    assert m.report.problems() == []


def test_poisoning_on_cuda():
    with poisoned_allocations():
        t = torch.empty(1 << 20, device="cuda")
    assert torch.isnan(t).all()


def test_timing_and_cuda_graph_switch():
    from ladder.harness.timing import TimingSettings, time_interleaved

    tiny = [(torch.randn(1024, device="cuda"),), (torch.randn(1024, device="cuda"),)]
    big = [(torch.randn(1 << 26, device="cuda"),), (torch.randn(1 << 26, device="cuda"),)]
    sets = [(a, b) for (a,), (b,) in zip(tiny, big)]
    fns = {"tiny": lambda s: s[0] * 2, "big": lambda s: s[1] * 2}
    t, _ = time_interleaved(fns, sets, TimingSettings(rounds=2))
    assert t["tiny"].timer == "cudagraph" and t["big"].timer == "cudagraph"  # one tiny impl switches the case
    assert t["big"].ms > t["tiny"].ms > 0 and len(t["big"].rounds_ms) == 2
    t, watch = time_interleaved({"big": lambda s: s[1] * 2}, sets, TimingSettings(rounds=2), checked="big")
    assert t["big"].timer == "events" and t["big"].q25_ms <= t["big"].ms <= t["big"].q75_ms
    # the watched calls: no Triton launches here (torch compute), one checksum per call per set, both judged
    assert len(watch.launches) == t["big"].calls and set(watch.launches) == {0}
    assert [len(c) for c in watch.checksums] == [t["big"].calls // 2, t["big"].calls - t["big"].calls // 2]
    assert all(j is not None for j in watch.judged)
    for which, index in enumerate(watch.judged_index):
        assert torch.equal(watch.judged[which], sets[which][1] * 2) and index is not None


def test_a_timed_block_that_raises_after_its_judged_call_keeps_no_index_into_checksums_never_kept():
    from ladder.harness.timing import Watch, _block, _Checksum, _Watched

    sets = [(torch.randn(1024, device="cuda"),)]
    calls = []

    def third_call_raises(inputs: tuple) -> torch.Tensor:
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("out of memory, say")
        return inputs[0] * 2

    watch = Watch(checksums=[[]], judged=[None], judged_index=[None])
    flush = torch.empty(1 << 20, dtype=torch.int8, device="cuda")
    watched = _Watched(lambda: 1, _Checksum(1), watch, {0: 0})  # the block's first call is the judged one
    with pytest.raises(RuntimeError):
        _block(third_call_raises, sets, 4, {"c": 0}, "c", flush, watched)
    assert watch.judged_index == [None] and watch.checksums == [[]] and watch.judged == [None]


def test_ceilings_are_plausible():
    from ladder.harness.ceilings import measure

    c = measure(copy_bytes=256 << 20, gemm_n=4096, warmup_ms=5, rep_ms=20)
    assert 100 < c.copy_gbps < 20_000 and 10 < c.bf16_tflops < 5_000


def test_bench_one_case_end_to_end(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ladder.cli",
            "bench",
            "--ops",
            "softplus",
            "--cases",
            "c1",
            "--compile-cases",
            "c1",
            "--seeds",
            "1",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads((tmp_path / "bench.json").read_text())
    case = doc["operators"][0]["cases"][0]
    assert set(case["timing"]) == {"candidate", "eager", "compile"}
    m = case["metrics"]
    assert 0 < m["impl"]["candidate"]["frac_sol"] < 1.2 and m["speedup"]["eager"] > 0
    assert doc["environment"]["ceilings"]["copy_gbps"] > 100 and (tmp_path / "bench.png").exists()


def test_the_harness_benchmarker_gives_tritons_quantiles_on_its_budget():
    from ladder.harness.autotune import BUDGET_MS, bench

    x = torch.randn(1 << 24, device="cuda")
    calls = []
    median, q20, q80 = bench(lambda: calls.append(x * 2), quantiles=(0.5, 0.2, 0.8))
    assert 0 < q20 <= median <= q80
    assert 1 + 3 <= len(calls) <= 1 + BUDGET_MS / q20 + 1, "one warm call, then about BUDGET_MS of timed calls"
    assert bench(lambda: x * 2) > 0


def test_an_autotuned_candidate_chooses_with_the_gpu_alone_and_its_validation_never_benchmarks(tmp_path):
    from ladder.harness.evaluate import evaluate_candidate
    from ladder.harness.timing import TimingSettings

    r = evaluate_candidate(
        "softplus",
        candidate=Path(__file__).parent / "candidates" / "autotuned_softplus.py",
        cases=["c1", "c2"],
        seeds=1,
        timing=TimingSettings(warmup_ms=2, rep_ms=5, rounds=1).__dict__,
        gpu_lock=str(tmp_path / "gpu.lock"),
        timeout_s=300,
    )
    assert r.accepted, r.reasons()
    assert r.phase_seconds.get("tune", 0) > 0 and "wait_alone" in r.phase_seconds
    for case in r.cases:
        runs = case["validation"]["runs"]
        assert case["validation"]["kernels"] == {"softplus_kernel": runs}, "one launch per run: nothing benchmarked"
        assert "tune" in case["phase_seconds"]
