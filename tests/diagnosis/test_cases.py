"""The evaluation sets say true things: every case's root cause is really in its compiled code.

Three sets share one format and these checks: cases.yaml; holdout.yaml, held out from the ladder's rules and
written with kernels of its own; and unseen.yaml, likewise (a `new:` symptom, one docs/hazards.md does not have
yet, has no signature here: such a case is left out, and checked with plain Triton by test_unseen.py). Each case is
compiled once per module with irscope (real Triton 3.6, for its target, on the CPU) and its expected symptom's
structural signature (symptoms.py) must hold on the expected line; no other symptom may hold unless the case
lists it under `also`; a healthy kernel shows none; and where a case names `fixed_by` settings, compiling with
them removes the symptom. Independent of the ladder's rules: this checks the data sets, not the diagnosis. The
first two sets' 59 compiles take about 60 s of CPU time; unseen.yaml's 17 about 4 minutes more on 2 cores, most
of it top_p_filter's sort (it is there to measure capture cost)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from .cases import CASES_FILE, FRESH_FILE, HERE, HOLDOUT_FILE, NEW, NONE, UNSEEN_FILE, Case, load_cases
from .symptoms import FAMILIES, KERNEL, SIGNATURES, Compiled, present


@dataclass(frozen=True)
class Coverage:
    """What a set must contain: symptoms with a case, and distinct faulty and healthy kernels."""

    symptoms: int
    faulty_kernels: int
    healthy_kernels: int


SETS = {"cases": CASES_FILE, "holdout": HOLDOUT_FILE, "unseen": UNSEEN_FILE, "fresh": FRESH_FILE}
COVERAGE = {
    "cases": Coverage(symptoms=11, faulty_kernels=14, healthy_kernels=4),
    "holdout": Coverage(symptoms=8, faulty_kernels=12, healthy_kernels=4),
    "unseen": Coverage(symptoms=9, faulty_kernels=12, healthy_kernels=4),  # its cases with a signature
    "fresh": Coverage(symptoms=8, faulty_kernels=8, healthy_kernels=2),
}


def _checkable(case: Case) -> Case | None:
    """The case as the signatures can check it: none for a `new:` root cause, `new:` names dropped from `also`."""
    if case.expect.symptom.startswith(NEW):
        return None
    also = tuple(s for s in case.expect.also if not s.startswith(NEW))
    return replace(case, expect=replace(case.expect, also=also))


LOADED = {name: [c for c in map(_checkable, load_cases(path)) if c] for name, path in SETS.items()}


def _faulty(case: Case) -> bool:
    return case.expect.symptom != NONE


def params(keep: Callable[[Case], bool] = lambda case: True) -> list:
    """The sets' cases (those `keep` accepts) as test parameters named SET/KERNEL-SYMPTOM."""
    return [pytest.param(c, id=f"{name}/{c.id}") for name, loaded in LOADED.items() for c in loaded if keep(c)]


pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def compiled():
    """Compile each case (and each `fixed_by` variant) once for the module."""
    done: dict[str, Compiled] = {}

    def get(case: Case) -> Compiled:
        key = repr((case.kernel, case.args, case.constexprs, case.num_warps, case.num_stages, case.target))
        if key not in done:
            done[key] = Compiled(case.compile())
        return done[key]

    return get


def _kernel_file(case: Case) -> Path:
    return HERE / case.kernel.rpartition(":")[0]


@pytest.mark.parametrize("name", SETS)
def test_the_set_covers_the_symptoms(name: str):
    loaded, need = LOADED[name], COVERAGE[name]
    faulty = [c for c in loaded if _faulty(c)]
    expected = {c.expect.symptom for c in faulty}
    assert expected <= set(SIGNATURES), f"unknown symptoms: {expected - set(SIGNATURES)}"
    assert len(expected) >= need.symptoms, f"symptoms without a case: {set(SIGNATURES) - expected}"
    assert len({c.kernel for c in faulty}) >= need.faulty_kernels
    assert len({c.kernel for c in loaded if not _faulty(c)}) >= need.healthy_kernels
    for c in loaded:
        assert set(c.expect.also) <= set(SIGNATURES), c.id
        assert c.expect.symptom not in c.expect.also, c.id


def test_every_symptom_has_a_case():
    """Each symptom of docs/hazards.md is some set's root cause: a signature nothing exercises proves nothing."""
    expected = {c.expect.symptom for loaded in LOADED.values() for c in loaded if _faulty(c)}
    assert set(SIGNATURES) - expected == set()


def test_the_holdout_set_has_kernels_of_its_own():
    """Held out means new code: no kernel file of holdout.yaml is one of cases.yaml's, nor unseen.yaml's or
    fresh.yaml's one of an earlier set's."""
    files = {name: {_kernel_file(c) for c in load_cases(path)} for name, path in SETS.items()}
    assert not files["holdout"] & files["cases"]
    assert not files["unseen"] & (files["cases"] | files["holdout"])
    assert not files["fresh"] & (files["cases"] | files["holdout"] | files["unseen"])


@pytest.mark.parametrize("case", params())
def test_case_entry_is_well_formed(case: Case):
    """The docstring names the root cause, the line is inside the kernel, the family matches the symptom."""
    path = _kernel_file(case)
    tree = ast.parse(path.read_text())
    doc = ast.get_docstring(tree) or ""
    if case.expect.symptom == NONE:
        assert "Healthy" in doc
        assert case.expect.line is None and case.expect.l4 is None and case.expect.family is None
        return
    assert f"({case.expect.symptom})" in doc, f"{path.name}'s docstring does not name {case.expect.symptom}"
    assert case.expect.family == FAMILIES[case.expect.symptom]
    assert case.expect.l4 and case.expect.l4.get("file") and case.expect.l4.get("function")
    name = case.kernel.rpartition(":")[2]
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)
    if case.expect.line is not None:
        assert fn.lineno < case.expect.line <= fn.end_lineno


@pytest.mark.parametrize("case", params(_faulty))
def test_l4_names_real_triton_source(case: Case, triton_checkout: Path):
    """The cited file exists in Triton's source and defines the cited function."""
    assert case.expect.l4 is not None
    src = triton_checkout / case.expect.l4["file"]
    assert src.is_file(), f"{case.expect.l4['file']} is not in Triton's source"
    text = src.read_text()
    *scopes, function = case.expect.l4["function"].replace("::", ".").split(".")
    assert f"{function}(" in text, f"{src.name} has no function {function}"
    for scope in scopes:
        declared = (f"class {scope}", f"struct {scope}", f"{scope}::")  # in the file or defined out of line
        assert any(d in text for d in declared), f"{src.name} has no class {scope}"


@pytest.mark.parametrize("case", params())
def test_root_cause_is_in_the_compiled_code(case: Case, compiled):
    found = present(compiled(case))
    if case.expect.symptom == NONE:
        assert found == {}, f"a healthy kernel shows {found}"
        return
    lines = found.get(case.expect.symptom, set())
    where = KERNEL if case.expect.line is None else case.expect.line
    assert where in lines, f"{case.expect.symptom} not at {where}: found {found}"
    unexpected = set(found) - {case.expect.symptom, *case.expect.also}
    assert not unexpected, f"other symptoms present: { {s: found[s] for s in unexpected} }"
    missing = set(case.expect.also) - set(found)
    assert not missing, f"`also` lists symptoms that are absent: {missing}"


@pytest.mark.parametrize("case", params(lambda c: _faulty(c) and bool(c.fixed_by)))
def test_fixed_by_removes_the_root_cause(case: Case, compiled):
    fixed = present(compiled(case.with_overrides(case.fixed_by)))
    assert case.expect.symptom not in fixed, f"still {case.expect.symptom} with {case.fixed_by}: {fixed}"
