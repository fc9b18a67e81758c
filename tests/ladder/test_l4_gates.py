"""L4 cites the conditions that decide a symptom on the target, not the first ones in source order: ranking by the
invariant's deciding terms and the hazard's cause, dropping gates under guards the target excludes."""

from __future__ import annotations

import irscope
from compiler_index.queries import GateInfo, Loc
from irscope import hazards
from irscope.capture import capture_request
from irscope.targets import Target
from ladder.evidence import Finding
from ladder.invariants import load
from ladder.levels.source import _decision, narrow, ranked_gates
from tests.diagnosis.cases import CASES_FILE, load_cases
from tests.diagnosis.score import spec_of

INVARIANTS = load()[1]


def gate(kind: str, condition: str, guards: list[str], line: int, file: str = "lib/Analysis/Utility.cpp", **kw):
    return GateInfo(kind, condition, guards, "", Loc(file, line), None, **kw)


def test_a_blackwell_branch_is_not_quoted_for_hopper_and_the_deciding_condition_comes_first():
    fp32 = "aElemTy.isF32() && bElemTy.isF32()"
    tf32 = "op.getInputPrecision() == InputPrecision::TF32 && version >= 2"
    warps = "numWarps != 4 && numWarps != 8"
    gates = [
        gate("return-false", warps, [warps, "version == 5"], 10),
        gate("return-false", "aElemTy.isInteger()", ["aElemTy.isInteger()"], 20),
        gate("return-expr", fp32, [fp32], 30, expr=tf32),
    ]
    ranked = ranked_gates(INVARIANTS["dot-on-fma"], gates, Target.parse("cuda:90"))
    assert [g.loc.line for g in ranked] == [30, 20]  # line 10 is in `version == 5` (sm_90 tries v3, v2)
    assert _decision(ranked[0]) == (
        "returns op.getInputPrecision() == InputPrecision::TF32 && version >= 2 when aElemTy.isF32() && bElemTy.isF32()"
    )
    on_blackwell = ranked_gates(INVARIANTS["dot-on-fma"], gates, Target.parse("cuda:100"))
    assert 10 in [g.loc.line for g in on_blackwell]


def test_another_backends_code_is_dropped():
    amd = gate("failure", "isCDNA(arch)", ["isCDNA(arch)"], 5, file="third_party/amd/lib/X.cpp")
    nv = gate("failure", "vec == 1", ["vec == 1"], 6, file="third_party/nvidia/lib/Y.cpp")
    kept = ranked_gates(INVARIANTS["narrow-memory-access"], [amd, nv], Target.parse("cuda:90"))
    assert [g.loc.file for g in kept] == ["third_party/nvidia/lib/Y.cpp"]


def test_anchors_that_decide_the_hazards_cause_are_cited_first():
    inv = INVARIANTS["not-pipelined"]
    assert inv.for_cause(inv.gates, "num_stages")[0].symbol == "assignLatencies"
    assert inv.for_cause(inv.gates, "width")[0].symbol == "canBeConvertedToAsyncLoad"
    narrow = INVARIANTS["narrow-memory-access"]
    assert narrow.for_cause(narrow.gates, "mask")[0].symbol == "ModuleAxisInfoAnalysis::getMaskAlignment"


def test_an_assert_or_a_debug_print_is_not_quoted_as_a_condition():
    """Triton's getContiguity holds an assert and an LDBG print next to the code that decides: citing them as "the
    conditions that decide" would send a reader to a precondition and a log line."""
    decides = gate("return-expr", "rank > 0", ["rank > 0"], 1270, expr="contiguity[order[0]]")
    checks = gate("assert", "order[0] < uniqueContigPerThread.size()", [], 1264)
    prints = gate("debug", "", [], 1267)
    kept = ranked_gates(INVARIANTS["uncoalesced-access"], [checks, prints, decides], Target.parse("cuda:90"))
    assert [g.loc.line for g in kept] == [1270]


def test_a_helpers_caller_in_the_pipeline_that_ran_is_cited_not_one_in_another(tmp_path, triton_db):
    """buildCoalescedEncoding is called by Gluon's layout inference and by the tritongpu-coalesce pass; a
    @triton.jit kernel's compile runs only the second, so that is the caller L4 names."""
    case = next(c for c in load_cases(CASES_FILE) if c.id == "channels_last_affine-uncoalesced-access")
    capture_request(spec_of(case).request(), out_dir=tmp_path / "k", disassemble=False)
    found = next(h for h in hazards.find(irscope.load(tmp_path / "k")).hazards if h.symptom == "uncoalesced-access")
    inv = INVARIANTS["uncoalesced-access"]
    evidence, _ = narrow(triton_db, inv, Finding(found, str(tmp_path / "k"), 1.0), "t", Target.parse("cuda:90"))
    claims = [e.claim for e in evidence if e.claim.startswith("buildCoalescedEncoding")]
    assert claims and "called from CoalescePass::runOnOperation" in claims[0], claims
