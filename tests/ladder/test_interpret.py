"""The CPU validator: real candidates under Triton's interpreter in a child process (correctness only)."""

from __future__ import annotations

import re
import time

import pytest

from ladder.validators import create
from ladder.validators.interpret import DEVICE, InterpretValidator
from suite.operator import get_operator
from tests.ladder import candidates

OP = get_operator("new_gelu")


def check(tmp_path, source: str, **kw):
    path = tmp_path / "candidate.py"
    path.write_text(source)
    return InterpretValidator(**kw).validate(OP, path, tmp_path)


def test_the_initial_kernel_and_a_correct_rewrite_pass(tmp_path):
    v = InterpretValidator(seeds=1).validate(OP, OP.kernel_path, tmp_path)
    assert v.correct and v.device == DEVICE and [c.case for c in v.cases] == ["s1", "s2"]
    assert not v.timed and v.times() == {}
    assert check(tmp_path, candidates.VALID, seeds=1).correct


def test_a_wrong_candidate_fails_with_the_comparison_detail(tmp_path):
    v = check(tmp_path, candidates.WRONG, seeds=1)
    assert not v.correct and re.match(r"s1: random seed \d+: output 0:", v.detail), v.detail
    assert "elements outside rtol" in v.detail


def test_the_candidate_sees_a_clean_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    v = check(tmp_path, candidates.READS_KEY, seeds=1)
    assert not v.correct and "key=None" in v.detail and "sk-must-not-leak" not in v.detail


@pytest.mark.slow
def test_a_candidate_that_spins_is_killed_at_the_timeout(tmp_path):
    t0 = time.perf_counter()
    v = check(tmp_path, candidates.SPINS, seeds=1, timeout_s=10)
    assert not v.correct and v.detail == "timed out after 10 s"
    assert time.perf_counter() - t0 < 30


def test_an_unknown_validator_is_a_clear_error():
    with pytest.raises(ValueError, match="no validator 'gpu'; validators: harness, interpret"):
        create("gpu")
