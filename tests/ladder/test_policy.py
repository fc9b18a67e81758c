"""The escalation policy's three stop tests and the climb, on real LevelResult values and H200 timings."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from ladder.context import Context, operator_context
from ladder.evidence import (
    ARTIFACT,
    COMPILER_SOURCE,
    FAILED,
    RAN,
    SNAPSHOT,
    SOURCE_LINE,
    UNAVAILABLE,
    Evidence,
    Hypothesis,
    LevelResult,
    RewriteFamily,
    SourceRef,
)
from ladder.levels.base import Level
from ladder.levels.patterns import PatternLevel
from ladder.policy import (
    ACTIONABLE,
    AT_TARGET,
    DOMINANCE,
    INCONCLUSIVE,
    RIVAL_SHARE,
    Diagnosis,
    assess,
    beyond,
    climb,
)
from suite.operator import get_operator
from tests.ladder import h200

OP = get_operator("new_gelu")
KERNEL = OP.kernel_path
TIMINGS = SourceRef(ARTIFACT, "out/new_gelu/round-000/validation.json")
NCU = SourceRef(ARTIFACT, "out/new_gelu/round-001/ncu/ncu-c3.ncu-rep")
LINE = SourceRef(SOURCE_LINE, str(KERNEL), line=12)
SNAP = SourceRef(SNAPSHOT, "out/traj", snapshot=14, pass_arg="tritongpu-coalesce")
CPP = SourceRef(COMPILER_SOURCE, "lib/Dialect/TritonGPU/Transforms/Coalesce.cpp", line=88, symbol="getOrder")


NEW_GELU = h200.timed(h200.NEW_GELU_EAGER)


def ctx(validation=NEW_GELU, earlier=()) -> Context:
    return operator_context(OP, KERNEL, Path("out"), 1, validation, TIMINGS, earlier=tuple(earlier))


def l2_traffic(cases=h200.CASES) -> LevelResult:
    """An L2 result: every case moves 2.1x the minimum bytes; one family follows."""
    ev = tuple(Evidence(f"L2.ncu.{c}", "L2", f"{c}: traffic 2.1x the minimum", NCU, (c,)) for c in cases)
    ids = tuple(e.id for e in ev)
    hypothesis = Hypothesis("excess-memory-traffic", "kernel k", cases, ids)
    return LevelResult(
        "L2", RAN, evidence=ev, hypotheses=(hypothesis,), families=(RewriteFamily("fuse-passes", "one pass", ids),)
    )


def test_case_weights_follow_the_log_gap_to_target():
    w = ctx().case_weights()
    assert set(w) == set(h200.CASES)
    assert w["c1"] == pytest.approx(math.log(0.3122 * 0.8 / 0.0312))
    # Without timings every suite case matters equally.
    assert ctx(validation=None).case_weights() == {c.name: 1.0 for c in OP.cases}
    # softplus runs within 10 % of SoL: no case still matters at an 80 % target.
    assert ctx(h200.timed(h200.SOFTPLUS_EAGER)).case_weights() == {}


def test_all_three_pass_and_the_level_settles():
    r = assess(l2_traffic(), ctx())
    assert r.stopped
    assert r.tests.dominant.passed
    assert "excess-memory-traffic at kernel k explains 100%" in r.tests.dominant.why
    assert r.settled_family().name == "fuse-passes"
    assert r.settled_hypothesis().bottleneck == "excess-memory-traffic"


def test_a_fails_without_evidence_from_this_level():
    card = Evidence("L1.card", "L1", "card matches", SourceRef(ARTIFACT, "cards/x.yaml"))
    l1 = LevelResult("L1", RAN, evidence=(card,))
    l2 = replace(l2_traffic(), hypotheses=(Hypothesis("excess-memory-traffic", "kernel k", h200.CASES, ("L1.card",)),))
    r = assess(l2, ctx(earlier=[assess(l1, ctx())]))
    assert not r.tests.dominant.passed
    assert "cites no L2 evidence" in r.tests.dominant.why
    assert not r.stopped and r.settled_family() is None


def test_a_fails_on_unknown_evidence_ids():
    l2 = replace(l2_traffic(), hypotheses=(Hypothesis("excess-memory-traffic", "k", h200.CASES, ("L2.nope",)),))
    r = assess(l2, ctx())
    assert not r.tests.dominant.passed and "unknown evidence L2.nope" in r.tests.dominant.why


def test_a_weighs_cases_by_remaining_headroom():
    # layer_norm's headroom sits in c2-c4; a hypothesis for those three cases dominates, one for c1+c5 cannot.
    lnctx = ctx(h200.timed(h200.LAYER_NORM_EAGER))
    heavy = assess(l2_traffic(("c2", "c3", "c4")), lnctx)
    assert heavy.tests.dominant.passed, heavy.tests.dominant.why
    light = assess(l2_traffic(("c1", "c5")), lnctx)
    assert not light.tests.dominant.passed
    assert f"≥{DOMINANCE:.0%}" in light.tests.dominant.why
    # On new_gelu (equal gaps) two of five cases are not dominant either.
    assert not assess(l2_traffic(("c2", "c3")), ctx()).tests.dominant.passed


def test_a_fails_when_two_classes_compete():
    r = l2_traffic()
    rival = Hypothesis("under-parallelized", "kernel k", h200.CASES, ("L2.ncu.c1",))
    out = assess(replace(r, hypotheses=(*r.hypotheses, rival)), ctx())
    assert not out.tests.dominant.passed
    assert "compete" in out.tests.dominant.why and "under-parallelized" in out.tests.dominant.why


def test_a_hypothesis_without_cases_covers_every_case():
    r = l2_traffic()
    h = replace(r.hypotheses[0], cases=())
    assert assess(replace(r, hypotheses=(h,)), ctx()).tests.dominant.passed


def test_a_fails_when_nothing_matters_any_more():
    out = assess(l2_traffic(), ctx(h200.timed(h200.SOFTPLUS_EAGER)))
    assert not out.tests.dominant.passed and "no case still matters" in out.tests.dominant.why


@pytest.mark.parametrize(
    ("families", "why"),
    [
        ((), "no evidence-backed rewrite family"),
        (
            (RewriteFamily("fuse-passes", "d", ("L2.ncu.c1",)), RewriteFamily("more-work", "d", ("L2.ncu.c2",))),
            "2 families stand: fuse-passes, more-work",
        ),
        ((RewriteFamily("fuse-passes", "d", ()),), "fuse-passes cites no evidence"),
        ((RewriteFamily("fuse-passes", "d", ("L9.x",)),), "fuse-passes cites unknown evidence L9.x"),
    ],
)
def test_b_needs_exactly_one_backed_family(families, why):
    out = assess(replace(l2_traffic(), families=families), ctx())
    assert out.tests.dominant.passed
    assert not out.tests.single_family.passed and why in out.tests.single_family.why
    assert not out.stopped


def test_b_ignores_ruled_out_families():
    fams = (
        RewriteFamily("fuse-passes", "d", ("L2.ncu.c1",)),
        RewriteFamily("more-work", "d", ("L2.ncu.c2",), ruled_out="grid already fills 8 waves [L2.ncu.c2]"),
    )
    out = assess(replace(l2_traffic(), families=fams), ctx())
    assert out.tests.single_family.passed
    assert "more-work ruled out: grid already fills 8 waves" in out.tests.single_family.why
    assert out.stopped and out.settled_family().name == "fuse-passes"


def test_c_rejects_a_family_resting_only_on_lower_levels():
    l2 = assess(
        replace(
            l2_traffic(),
            families=(
                RewriteFamily("fuse-passes", "d", ("L2.ncu.c1", "L2.ncu.c2")),
                RewriteFamily("more-work", "d", ("L2.ncu.c3",)),
            ),
        ),
        ctx(),
    )
    assert not l2.stopped  # two families at L2: escalate
    l3_ev = (
        Evidence("L3.sync", "L3", "bar.sync from tt.reduce on line 12 in ttgir", SNAP, ("c3",)),
        Evidence("L3.line", "L3", "reduction at line 12", LINE),
    )
    hyp = (Hypothesis("excess-memory-traffic", "line 12", h200.CASES, ("L3.sync", "L3.line")),)
    inherited = LevelResult(
        "L3", RAN, evidence=l3_ev, hypotheses=hyp, families=(RewriteFamily("fuse-passes", "d", ("L2.ncu.c1",)),)
    )
    out = assess(inherited, ctx(earlier=[l2]))
    assert out.tests.dominant.passed and out.tests.single_family.passed
    assert not out.tests.justified_here.passed
    assert "rests only on L2 evidence, none exposed at L3" in out.tests.justified_here.why
    justified = replace(inherited, families=(RewriteFamily("fuse-passes", "d", ("L2.ncu.c1", "L3.line")),))
    ok = assess(justified, ctx(earlier=[l2]))
    assert ok.stopped and "justified by L3.line" in ok.tests.justified_here.why


def test_unavailable_level_fails_every_test_with_its_reason():
    out = assess(LevelResult("L2", UNAVAILABLE, "L2 needs a CUDA GPU"), ctx())
    assert not out.stopped
    assert [t.why for _, t in out.tests.items()] == ["L2 unavailable: L2 needs a CUDA GPU"] * 3


class _Canned(Level):
    """A level returning a fixed result (the policy under test is what decides)."""

    name = "L1"

    def __init__(self, name: str, result: LevelResult | Exception):
        self.name, self.result = name, result  # type: ignore[misc]

    def gather(self, ctx: Context) -> LevelResult:
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


def test_climb_with_no_levels_is_inconclusive_and_says_why_at_each_level():
    d = climb(ctx(), {})
    assert d.outcome == INCONCLUSIVE and d.level is None and d.family is None
    assert [x["level"] for x in d.escalations()] == ["L1", "L2", "L3", "L4"]
    assert all("no L" in x["why"] and "registered" in x["why"] for x in d.escalations())
    assert d.reached == "L4"


def test_climb_stops_at_the_first_level_that_passes():
    l3_ev = (
        Evidence("L3.sync", "L3", "sync ops from argmax", SNAP, ("c3",)),
        Evidence("L3.cpp", "L3", "index reduction lowering", CPP),
    )
    l3 = LevelResult(
        "L3",
        RAN,
        evidence=l3_ev,
        hypotheses=(Hypothesis("index-reduction-sync", "line 12", (), ("L3.sync",)),),
        families=(RewriteFamily("index-reduction", "max + tie-aware second max", ("L3.sync",)),),
    )
    l4 = _Canned("L4", RuntimeError("must not be reached"))
    levels = {
        "L1": _Canned("L1", LevelResult("L1", RAN)),
        "L2": _Canned("L2", l2_traffic(("c1",))),
        "L3": _Canned("L3", l3),
        "L4": l4,
    }
    d = climb(ctx(), levels)
    assert d.outcome == ACTIONABLE and d.level == "L3" and d.reached == "L3"
    assert d.family.name == "index-reduction" and d.hypothesis.bottleneck == "index-reduction-sync"
    esc = d.escalations()
    assert [(x["level"], x["failed_test"]) for x in esc] == [("L1", "a:dominant"), ("L2", "a:dominant")]
    assert "(excess-memory-traffic 21%)" in esc[1]["why"]  # c1 alone: about a fifth of the headroom
    assert [e.id for e in d.evidence()] == ["L2.ncu.c1", "L3.sync", "L3.cpp"]
    # Round trip through JSON keeps the verdicts and what was settled.
    back = Diagnosis.from_json(d.to_json())
    assert back.to_json() == d.to_json() and back.family == d.family


def test_a_level_that_raises_is_recorded_as_failed_and_the_ladder_climbs_on():
    d = climb(ctx(), {"L1": _Canned("L1", KeyError("card store missing")), "L2": _Canned("L2", l2_traffic())})
    assert d.outcome == ACTIONABLE and d.level == "L2"
    assert d.results[0].status == FAILED and "KeyError" in d.results[0].reason
    assert d.escalations()[0]["why"].startswith("L1 failed: KeyError")


def test_climb_does_nothing_at_target():
    d = climb(ctx(h200.timed(h200.SOFTPLUS_EAGER)), {"L2": _Canned("L2", l2_traffic())})
    assert d.outcome == AT_TARGET and d.results == ()


def test_a_level_must_return_its_own_level():
    with pytest.raises(ValueError, match="registered as L2 but returned a L1 result"):
        _Canned("L2", LevelResult("L1", RAN)).run(ctx())


@pytest.mark.parametrize(
    ("kwargs", "msg"),
    [
        ({"kind": "url", "path": "x"}, "not one of"),
        ({"kind": SOURCE_LINE, "path": "k.py"}, "needs a line"),
        ({"kind": SNAPSHOT, "path": "traj", "snapshot": 3}, "needs a snapshot index and a pass"),
        ({"kind": COMPILER_SOURCE, "path": "", "line": 3}, "needs a path"),
    ],
)
def test_evidence_sources_must_say_where(kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        SourceRef(**kwargs)


def test_source_refs_render_their_location():
    assert SNAP.render() == "out/traj#14 (tritongpu-coalesce)"
    assert CPP.render() == "lib/Dialect/TritonGPU/Transforms/Coalesce.cpp:88 (getOrder)"
    assert LINE.render().endswith("new_gelu.py:12")


def test_level_results_reject_duplicate_ids_and_silent_unavailability():
    e = Evidence("L2.x", "L2", "c", TIMINGS)
    with pytest.raises(ValueError, match="duplicate evidence ids"):
        LevelResult("L2", RAN, evidence=(e, e))
    with pytest.raises(ValueError, match="gives no reason"):
        LevelResult("L2", UNAVAILABLE)


def test_beyond_runs_the_deeper_levels_without_changing_the_diagnosis():
    l4_seen = []

    class _Recording(_Canned):
        def gather(self, ctx):
            l4_seen.append([r.level for r in ctx.earlier])
            return super().gather(ctx)

    levels = {"L2": _Canned("L2", l2_traffic()), "L4": _Recording("L4", LevelResult("L4", RAN))}
    d = climb(ctx(), levels)
    assert d.outcome == ACTIONABLE and d.level == "L2"
    deeper = beyond(ctx(), levels, d, "L4")
    assert [r.level for r in deeper] == ["L3", "L4"]
    assert deeper[0].status == UNAVAILABLE and "no L3 level" in deeper[0].reason
    assert l4_seen == [["L1", "L2", "L3"]]  # L4 sees everything below it
    assert beyond(ctx(), levels, d, "L2") == () and beyond(ctx(), levels, d, "L1") == ()


def test_without_timings_no_share_of_the_headroom_is_claimed():
    """Untimed, every case weighs 1: coverage says which cases a class concerns, not how much time it costs."""
    r = assess(l2_traffic(), ctx(validation=None))
    assert r.tests.dominant.passed
    assert "concerns every case; untimed, so no share of the headroom is claimed" in r.tests.dominant.why
    assert "explains" not in r.tests.dominant.why


@pytest.mark.parametrize(
    "covered, dominant",
    [
        (("c1", "c2", "c3"), False),  # 3 of 5 equal cases: 60 %, between a lowered 50 % and the 75 % threshold
        (("c1", "c2", "c3", "c4"), True),  # 80 %: above it
    ],
)
def test_the_dominance_threshold_sits_at_three_quarters(covered, dominant):
    """Untimed, the five cases weigh the same, so coverage is the share of cases a class explains."""
    assert DOMINANCE == 0.75
    r = assess(l2_traffic(covered), ctx(validation=None))
    assert r.tests.dominant.passed is dominant
    if not dominant:
        assert "no bottleneck class explains ≥75% of the remaining headroom" in r.tests.dominant.why


def test_two_classes_above_the_threshold_compete():
    a = l2_traffic(("c1", "c2", "c3", "c4"))
    rival = Hypothesis("under-parallelized", "kernel k", ("c2", "c3", "c4", "c5"), a.hypotheses[0].evidence)
    r = assess(replace(a, hypotheses=(*a.hypotheses, rival)), ctx(validation=None))
    assert not r.tests.dominant.passed and "bottleneck classes compete" in r.tests.dominant.why


# c1–c4 run 20x above speed of light, equally far from target; c5 runs at it, below the 80 % target: weightless.
EQUAL_FOUR = h200.timed(((2.0, 0.1),) * 4 + ((0.1, 0.1),))


@pytest.mark.parametrize("covered, dominant", [(("c1", "c2", "c3"), True), (("c1", "c2"), False)])
def test_dominance_exactly_at_the_threshold_passes(covered, dominant):
    """Three of four equally weighted cases is exactly 75 %: `at least DOMINANCE` holds there; two of four is
    half, below it."""
    eq = ctx(EQUAL_FOUR)
    assert set(eq.case_weights()) == {"c1", "c2", "c3", "c4"}
    r = assess(l2_traffic(covered), eq)
    assert r.tests.dominant.passed is dominant, r.tests.dominant.why
    if dominant:
        assert "explains 75% of the remaining headroom" in r.tests.dominant.why


@pytest.mark.parametrize("rival_cases, competes", [(("c2", "c3", "c4"), True), (("c3", "c4"), False)])
def test_a_rival_exactly_at_the_threshold_competes(rival_cases, competes):
    """A second class covering exactly 75 % is a rival too (each explains at least DOMINANCE); at 50 % it is not."""
    a = l2_traffic(("c1", "c2", "c3", "c4"))
    rival = Hypothesis("under-parallelized", "kernel k", rival_cases, a.hypotheses[0].evidence)
    r = assess(replace(a, hypotheses=(*a.hypotheses, rival)), ctx(EQUAL_FOUR))
    assert r.tests.dominant.passed is not competes
    assert ("bottleneck classes compete" in r.tests.dominant.why) is competes


@pytest.mark.parametrize(
    "c5, matters",
    [
        ((0.124, 0.1), False),  # 0.124 * 0.8 / 0.1 = 0.992 of the target: already there
        ((0.125, 0.1), False),  # exactly at target (0.125 * 0.8 == 0.1): no headroom left, log 1 = 0
        ((0.126, 0.1), True),  # 0.8 % above target: a little headroom, so it still matters
    ],
)
def test_a_case_matters_only_strictly_above_target(c5, matters):
    assert ctx(validation=None).sol_target == 0.8
    weights = ctx(h200.timed(((2.0, 0.1),) * 4 + (c5,))).case_weights()
    assert ("c5" in weights) is matters
    if matters:
        assert weights["c5"] == pytest.approx(math.log(0.126 * 0.8 / 0.1))


def test_rival_cards_are_kept_down_to_half_the_strongest_score(monkeypatch, tmp_path):
    """L1 keeps the cards scoring at least RIVAL_SHARE of the best one as rival hypotheses. cumsum's cards score
    2.5 (autotune-configs) and 2 (multi-block-scan): a ratio of 0.8, kept; moe_group_top2's block-small-rows
    scores 1 against 4: 0.25, a minor note. At a share of exactly 0.8 the scan card is still kept; just above,
    it is not."""
    from ladder.levels import patterns as l1

    assert RIVAL_SHARE == 0.5
    out = tmp_path
    cumsum, moe = get_operator("cumsum"), get_operator("moe_group_top2")
    assert [h.bottleneck for h in PatternLevel().run(operator_context(cumsum, cumsum.kernel_path, out)).hypotheses] == [
        "tuning",
        "scan",
    ]
    moe_l1 = PatternLevel().run(operator_context(moe, moe.kernel_path, out))
    assert "minor: card block-small-rows (work-per-program) score 1 vs 4" in moe_l1.notes
    assert 0.8 * 2.5 == 2.0  # the boundary below is exact in floating point
    monkeypatch.setattr(l1, "RIVAL_SHARE", 0.8)
    assert len(PatternLevel().run(operator_context(cumsum, cumsum.kernel_path, out)).hypotheses) == 2
    monkeypatch.setattr(l1, "RIVAL_SHARE", 0.81)
    at = PatternLevel().run(operator_context(cumsum, cumsum.kernel_path, out))
    assert [h.bottleneck for h in at.hypotheses] == ["tuning"]
    assert "minor: card multi-block-scan (scan) score 2 vs 2.5" in at.notes
