"""Every frozen initial kernel is correct under Triton's interpreter on its small cases (CPU CI)."""

import json
import subprocess
import sys

import pytest

from suite.operator import all_operators


@pytest.fixture(scope="module")
def interp_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("interp") / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "suite.interp_check", "--json", str(out)], capture_output=True, text=True, timeout=900
    )
    assert out.exists(), f"interp_check produced no report:\n{proc.stdout}\n{proc.stderr}"
    return {r["op"]: r for r in json.loads(out.read_text())}


def test_suite_has_operators():
    assert all_operators(), "suite/ops defines no operators"


@pytest.mark.parametrize("name", list(all_operators()))
def test_initial_kernel_correct_under_interpreter(name, interp_report):
    report = interp_report[name]
    bad = [r for r in report["runs"] if not r["ok"]]
    assert report["runs"], f"{name}: no small cases ran"
    assert not bad, f"{name}: {bad[0]['case']} {bad[0]['kind']} seed {bad[0]['seed']}: {bad[0]['detail']}"


@pytest.mark.parametrize("name", list(all_operators()))
def test_operator_has_five_cases(name):
    op = all_operators()[name]
    assert len(op.cases) == 5, f"{name} has {len(op.cases)} cases, the suite defines 5"
    assert len({c.name for c in op.cases}) == 5
    assert op.small_cases, f"{name} has no small interpreter cases"
    for case in op.cases:
        assert op.bytes_moved(case) > 0
        assert op.flops(case) >= 0
