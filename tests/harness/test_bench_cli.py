"""`ladder bench` end to end on this CPU machine (real subprocesses, interpreter), and its report on a document
shaped like a GPU run."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from ladder.harness.ceilings import Ceilings
from ladder.harness.metrics import case_metrics
from ladder.harness.report import print_table, save_plot
from ladder.harness.suite_run import suite_aggregates
from suite.operator import get_operator

CANDIDATES = Path(__file__).parent / "candidates"


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ladder.cli", "bench", *args], capture_output=True, text=True, timeout=600
    )


def test_cpu_run_checks_kernels_and_says_timing_needs_a_gpu(tmp_path):
    proc = run_cli("--ops", "rms_norm_ch,softplus", "--out", str(tmp_path), "--seeds", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Timing needs a GPU" in proc.stdout
    doc = json.loads((tmp_path / "bench.json").read_text())
    assert [e["op"] for e in doc["operators"]] == ["rms_norm_ch", "softplus"]
    for entry in doc["operators"]:
        assert entry["accepted"] and entry["device"] == "cpu"
        assert [c["case"] for c in entry["cases"]] == ["s1", "s2"]
        for c in entry["cases"]:
            assert c["validation"]["runs"] == 4 and c["recheck"]["ok"] and "timing" not in c
    assert doc["environment"]["torch"] and "bench" in doc["command"]
    assert doc["aggregate"] == {"accepted_operators": 2, "operators": 2}


def test_candidate_dir_replaces_the_initial_kernel_and_a_bad_candidate_fails_the_run(tmp_path):
    cands = tmp_path / "cands"
    cands.mkdir()
    shutil.copy(CANDIDATES / "skips_tail.py", cands / "new_gelu.py")
    proc = run_cli("--ops", "new_gelu", "--out", str(tmp_path / "out"), "--seeds", "1", "--candidate-dir", str(cands))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    entry = json.loads((tmp_path / "out" / "bench.json").read_text())["operators"][0]
    assert entry["candidate"] == str(cands / "new_gelu.py") and not entry["accepted"]
    assert "NOT accepted" in proc.stdout


def test_unknown_operator_is_a_clear_error(tmp_path):
    proc = run_cli("--ops", "no_such_op", "--out", str(tmp_path))
    assert proc.returncode == 2 and "no operator 'no_such_op'" in proc.stdout


def gpu_shaped_doc() -> dict:
    ceilings = Ceilings(copy_gbps=4300.0, bf16_tflops=790.0, copy_bytes=1 << 30, gemm_n=8192)
    operators = []
    for name, (cand, eager, comp) in {"softmax": (0.2, 0.1, 0.09), "layer_norm": (20.0, 17.0, None)}.items():
        op = get_operator(name)
        cases = []
        for case in op.cases:
            timing = {"candidate": {"ms": cand, "timer": "do_bench"}, "eager": {"ms": eager, "timer": "do_bench"}}
            if comp and case.name == "c3":
                timing["compile"] = {"ms": comp, "timer": "do_bench"}
            rec = {"case": case.name, "label": case.label(), "correct": True, "errors": [], "timing": timing}
            rec["metrics"] = case_metrics(rec, op, case, ceilings)
            cases.append(rec)
        operators.append({"op": name, "accepted": True, "cases": cases})
    return {
        "command": "python -m ladder.cli bench --out x",
        "operators": operators,
        "skipped": [],
        "environment": {"gpu": "NVIDIA H200", "ceilings": ceilings.to_json()},
        "aggregate": suite_aggregates(operators),
    }


def test_report_of_a_gpu_run(tmp_path):
    doc = gpu_shaped_doc()
    agg = doc["aggregate"]
    assert agg["vs_eager"]["per_op"]["softmax"]["speedup"] == 0.5 and agg["vs_eager"]["operators"] == 2
    assert agg["vs_compile"]["per_op"]["softmax"]["cases_timed"] == 1
    assert "layer_norm" not in agg["vs_compile"]["per_op"]
    console = Console(record=True, width=220)
    print_table(doc, console)
    text = console.export_text()
    assert "candidate vs eager: geo-mean" in text and "layer_norm" in text and "c3(B=4,C=32,H=512,W=512)" in text
    png = save_plot(doc, tmp_path / "bench.png")
    assert png is not None and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
