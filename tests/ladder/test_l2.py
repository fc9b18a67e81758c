"""L2 profiling diagnosis: needs a GPU or timings; roofline evidence from timings; counter classification."""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from ladder import ncu
from ladder.context import Context, PastRound, digest, operator_context
from ladder.evidence import ARTIFACT, RAN, UNAVAILABLE, SourceRef
from ladder.harness.gpu_lock import GpuSlot
from ladder.levels import LEVELS
from ladder.levels.profile import (
    EXCESS,
    ISSUE,
    LATENCY,
    MEMORY,
    UNDER_PARALLEL,
    ProfileLevel,
    _earlier_report,
    classify,
)
from ladder.options import build_options
from ladder.validation import CaseResult, Validation
from suite.operator import get_operator
from tests.ladder import h200

OP = get_operator("new_gelu")
REF = SourceRef(ARTIFACT, "out/new_gelu/round-000/validation.json")
CPU = Validation("interpret", "cpu (TRITON_INTERPRET=1)", True, "2 small cases correct", (CaseResult("s1", True),))
no_gpu = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU-only behaviour")


def ctx(validation: Validation | None, tmp_path: Path, **options) -> Context:
    return operator_context(OP, OP.kernel_path, tmp_path, 1, validation, REF, options=build_options(**options))


def test_the_registry_holds_the_levels():
    assert list(LEVELS) == ["L1", "L2", "L3", "L4"] and isinstance(LEVELS["L2"], ProfileLevel)


@no_gpu
@pytest.mark.parametrize("validation", [None, CPU])
def test_without_timings_on_a_cpu_machine_l2_says_it_needs_a_gpu(tmp_path, validation):
    r = ProfileLevel().run(ctx(validation, tmp_path))
    assert r.status == UNAVAILABLE and r.reason.startswith("L2 needs a CUDA GPU")
    assert ("validated on cpu (TRITON_INTERPRET=1), untimed" if validation else "never validated") in r.reason
    assert not r.stopped and r.tests.dominant.why.startswith("L2 unavailable: L2 needs a CUDA GPU")


@no_gpu
def test_with_gpu_timings_l2_reports_the_roofline_gap_and_no_class_without_counters(tmp_path):
    r = ProfileLevel().run(ctx(h200.timed(h200.NEW_GELU_EAGER), tmp_path, ncu="ncu-not-installed"))
    assert r.status == RAN
    by_id = r.evidence_by_id()
    assert sorted(by_id) == [f"L2.time.{c}" for c in h200.CASES]
    c3 = by_id["L2.time.c3"]
    assert c3.claim == "c3: 4.516 ms, speed of light 0.4994 ms (11% of SoL)" and c3.source == REF
    assert c3.data["sol_fraction"] == pytest.approx(0.4994 / 4.516)
    assert r.notes == ("no hardware counters: 'ncu-not-installed' is not on PATH (Nsight Compute)",)
    assert r.hypotheses == () and not r.stopped
    assert "no hypothesis backed by L2 evidence" in r.tests.dominant.why


def test_ncu_none_turns_counters_off_and_says_so(tmp_path):
    r = ProfileLevel().run(ctx(h200.timed(h200.NEW_GELU_EAGER), tmp_path, ncu="none"))
    assert r.status == RAN and r.notes == ("no hardware counters: turned off (--ncu none)",)


def test_an_earlier_report_of_the_same_kernel_is_found_and_another_kernels_is_not(tmp_path):
    """A rejected round leaves the kernel as it was: its next diagnosis reads the counters back, no new ncu run."""
    same, other = digest(OP.kernel_path.read_text()), digest("another kernel")

    def past(n: int, kernel: str) -> PastRound:
        rdir = tmp_path / f"round-{n:03d}"
        ncu.report_path(rdir / "ncu", "c3").parent.mkdir(parents=True)
        ncu.report_path(rdir / "ncu", "c3").write_bytes(b"report")
        return PastRound(n, "tuning", "rejected", 0.9, kernel=kernel, facts_ref=str(rdir / "diagnosis.json"))

    history = (past(1, same), past(2, same), past(3, other))
    c = operator_context(
        OP, OP.kernel_path, tmp_path / "round-004", 4, h200.timed(h200.NEW_GELU_EAGER), REF, history=history
    )
    assert _earlier_report(c, "c3") == tmp_path / "round-002" / "ncu" / "ncu-c3.ncu-rep"  # the newest
    assert _earlier_report(c, "c5") is None  # never profiled on that case
    assert _earlier_report(replace(c, history=history[2:]), "c3") is None


def test_a_timed_validation_without_its_artifact_is_a_failure_not_a_guess(tmp_path):
    c = operator_context(OP, OP.kernel_path, tmp_path, 1, h200.timed(h200.NEW_GELU_EAGER), None)
    r = ProfileLevel().run(c)
    assert r.status == "failed" and "no artifact to cite" in r.reason


def kernel(**kw) -> ncu.KernelCounters:
    base = {
        "name": "k",
        "time_ns": 5e6,
        "dram_bytes": 1e9,
        "dram_pct": 30.0,
        "sm_pct": 30.0,
        "occupancy_pct": 50.0,
        "grid": 1 << 20,
        "block": 128,
        "registers": 32,
        "waves": 100.0,
    }
    return ncu.KernelCounters(**{**base, **kw})


@pytest.mark.parametrize(
    ("kernels", "min_bytes", "expected"),
    [
        ((kernel(dram_bytes=3e9),), 1e9, EXCESS),
        ((kernel(dram_bytes=0.9e9), kernel(name="k2", dram_bytes=0.9e9)), 1e9, EXCESS),  # two passes
        ((kernel(grid=4, waves=0.03, dram_pct=5),), 1e9, UNDER_PARALLEL),
        ((kernel(dram_pct=85),), 1e9, MEMORY),
        ((kernel(sm_pct=80),), 1e9, ISSUE),
        ((kernel(grid=8388608, block=32, waves=2000, dram_pct=12, sm_pct=35),), 1e9, LATENCY),  # moe naive shape
    ],
)
def test_counter_classification(kernels, min_bytes, expected):
    c = classify(ncu.CaseCounters("c3", Path("r.ncu-rep"), kernels), int(min_bytes))
    assert c.bottleneck == expected and c.case == "c3"
    assert f"{len(kernels)} launch(es)" in c.why


# The layout of `ncu --import R --csv --page raw --print-units base`: tool chatter, a quoted header, a units row,
# one row per launch, thousands separators inside quoted numbers.
RAW = (
    "==PROF== Connected to process 4242\n"
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device",'
    '"CC",' + ",".join(f'"{m}"' for m in ncu.METRICS) + "\n"
    '"","","","","","","","","","","","nsecond","byte","byte","%","%","%","","","register/thread",""\n'
    '"0","4242","python","h","new_gelu_kernel","1","7","(256, 1, 1)","(65536, 1, 1)","0","9.0",'
    '"41,216","67,108,864","67,110,912","81.52","22.10","88.31","65,536","256","26","3.10"\n'
    '"1","4242","python","h","sum_kernel","1","7","(128, 1, 1)","(4, 1, 1)","0","9.0",'
    '"3,100","1,024","0","0.41","0.90","6.20","4","128","30","0.01"\n'
)


def test_raw_csv_rows_become_counters():
    rows = ncu.parse_raw_csv(RAW)
    assert [r["Kernel Name"] for r in rows] == ["new_gelu_kernel", "sum_kernel"]
    ks = ncu.counters_from_rows(rows)
    assert ks[0].time_ns == 41216 and ks[0].dram_bytes == 67108864 + 67110912 and ks[0].grid == 65536
    assert ks[0].dram_pct == pytest.approx(81.52) and ks[1].waves == pytest.approx(0.01)
    case = ncu.CaseCounters("c1", Path("x"), ks)
    assert case.dominant.name == "new_gelu_kernel" and case.time_ns == 44316


def test_raw_csv_errors_name_the_problem():
    with pytest.raises(ncu.NcuError, match="no ncu raw CSV header"):
        ncu.parse_raw_csv("==ERROR== unknown option --page raw\n")
    header_only = RAW.replace('"dram__bytes_read.sum",', "").split("\n")[1] + "\n"
    with pytest.raises(ncu.NcuError, match=r"lacks metrics dram__bytes_read\.sum"):
        ncu.counters_from_rows(ncu.parse_raw_csv(header_only + '"0","1","p","h","k"\n'))


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available() or shutil.which("ncu") is None, reason="needs a CUDA GPU and ncu")
def test_l2_on_a_gpu_profiles_the_cases_that_matter(tmp_path, monkeypatch):
    """On the GPU machine: real ncu counters for the initial new_gelu kernel, classified, cited by artifact; the
    round directory is relative, as `ladder suite --out out/run` gives it."""
    monkeypatch.chdir(tmp_path)
    r = ProfileLevel().run(ctx(h200.timed(h200.NEW_GELU_EAGER), Path("round-001"), ncu_cases=2))
    assert r.status == RAN and not r.notes
    profiled = [e for e in r.evidence if e.id.startswith("L2.ncu.")]
    assert len(profiled) == 2 and all(os.path.exists(e.source.path) for e in profiled)
    assert all(e.data["time_ns"] > 0 and e.data["dram_bytes"] > 0 for e in profiled)
    assert r.hypotheses and {h.bottleneck for h in r.hypotheses} <= {EXCESS, UNDER_PARALLEL, MEMORY, ISSUE, LATENCY}


def test_the_profiled_child_gets_cuda_settings_but_no_secrets(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    env = ncu._child_env(tmp_path, None, tmp_path / "home")
    assert "OPENAI_API_KEY" not in env and env["CUDA_VISIBLE_DEVICES"] == "0"
    assert env["HOME"] == str(tmp_path / "home")
    slot_env = ncu._child_env(tmp_path, GpuSlot("GPU-1234", "x.lock"), tmp_path / "home")
    assert slot_env["CUDA_VISIBLE_DEVICES"] == "GPU-1234"
    assert env["TRITON_CACHE_DIR"] == str(tmp_path / "triton-cache")
    first = env["PYTHONPATH"].split(os.pathsep)[0]  # the repository, then the parent's own import path
    assert Path(first, "ladder").is_dir() and set(sys.path) & set(env["PYTHONPATH"].split(os.pathsep))
