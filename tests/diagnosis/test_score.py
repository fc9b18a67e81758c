"""The scorer judges a diagnosis against a case's expectation: a right one earns its points, a wrong expectation
loses them, a healthy kernel earns them only when nothing is blamed, and without an index L4 is left out."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ladder.api import run
from tests.diagnosis.cases import CASES_FILE, load_cases
from tests.diagnosis.score import score, spec_of


@pytest.fixture(scope="module")
def rmsnorm(tmp_path_factory):
    case = next(c for c in load_cases(CASES_FILE) if c.id == "rmsnorm_wide-cross-warp-reduction")
    work = tmp_path_factory.mktemp("d")
    return case, run(spec_of(case), through="L4", workdir=work, index=work / "no-index.db")  # L4: unavailable


def test_a_right_diagnosis_earns_its_points_and_l4_without_an_index_is_left_out(rmsnorm):
    case, d = rmsnorm
    s = score(case, d, 1.0)
    assert (s.symptom, s.family, s.l4) == (True, True, None)
    assert (s.points, s.possible) == (2, 2)


def test_a_wrong_expectation_loses_the_points(rmsnorm):
    case, d = rmsnorm
    wrong = replace(case, expect=replace(case.expect, symptom="global-atomics", family="global-reduction"))
    s = score(wrong, d, 1.0)
    assert not s.symptom and not s.family and s.got[0] == "cross-warp-reduction"


def test_a_healthy_expectation_on_a_blamed_kernel_earns_nothing(rmsnorm):
    case, d = rmsnorm
    healthy = replace(case, expect=replace(case.expect, symptom="none"))
    s = score(healthy, d, 1.0)
    assert s.points == 0 and s.possible == 3


def test_the_family_point_needs_a_final_verdict_that_names_the_fix(rmsnorm):
    """A family settled for the expected symptom on the way earns nothing when the verdict is inconclusive or
    names another family (issue #27: the family point only when the final verdict names the fix)."""
    case, d = rmsnorm
    inconclusive = replace(d, diagnosis=replace(d.diagnosis, outcome="inconclusive"))
    s = score(case, inconclusive, 1.0)
    assert s.symptom and not s.family and s.verdict is None and case.expect.family in s.families
    other = replace(case, expect=replace(case.expect, family="vectorization"))
    assert not score(other, d, 1.0).family
