"""L1 pattern triage on real suite kernels and the real pattern cards: ranking, provenance, L2 and earlier-round
facts, hazards, and the policy's verdict; one family name per rewrite across L1, L3 and L4."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from irscope.hazards import symptoms
from ladder.context import PastRound, digest, operator_context
from ladder.evidence import ARTIFACT, SOURCE_LINE, SourceRef
from ladder.facts import LAUNCH_BOUND_MS, diagnosis_facts, validation_facts
from ladder.harness.timing import TimingSettings
from ladder.invariants import DEFAULT_PATH, InvariantsError
from ladder.invariants import load as load_invariants
from ladder.levels import LEVELS
from ladder.levels.ir import IRLevel
from ladder.levels.patterns import PatternLevel
from ladder.policy import INCONCLUSIVE, Diagnosis, climb
from patterns.matcher import default_index
from suite.operator import get_operator
from tests.ladder import h200

MOE = get_operator("moe_group_top2")
CUMSUM = get_operator("cumsum")
GELU = get_operator("new_gelu")
VALUE_MASK = Path(__file__).resolve().parent / "kernels" / "moe_top2_value_mask.py"


def test_l1_ranks_the_index_reduction_card_with_source_lines_and_stops_there(tmp_path):
    d = climb(operator_context(MOE, MOE.kernel_path, tmp_path), LEVELS)
    assert d.outcome == "actionable" and d.level == "L1" and d.reached == "L1"  # nothing above L1 ran
    l1 = d.results[0]
    assert d.family.name == "index-reduction" and "count its occurrences" in d.family.description.lower()
    assert d.hypothesis.bottleneck == "index-reduction" and d.hypothesis.cases == ()
    card = l1.evidence_by_id()["L1.card.index-free-top2"]
    assert card.source.kind == ARTIFACT and card.source.path.endswith("patterns/cards/index-free-top2.md")
    assert card.data["score"] == 4 and "src.mask_from_index" in card.data["held"]
    lines = {e.source.line: e for e in l1.evidence if e.source.kind == SOURCE_LINE}
    source = MOE.kernel_path.read_text().splitlines()
    assert sorted(lines) == [17, 19] and "tl.argmax" in source[16] and "offs == i1" in source[18]
    assert lines[17].source.path == str(MOE.kernel_path) and "src.uses_argmax" in lines[17].claim
    assert set(d.hypothesis.evidence) == {
        "L1.card.index-free-top2",
        "L1.index-free-top2.line17",
        "L1.index-free-top2.line19",
    }
    assert "minor: card block-small-rows (work-per-program) score 1 vs 4" in l1.notes


def test_competing_card_families_escalate(tmp_path):
    r = PatternLevel().run(operator_context(CUMSUM, CUMSUM.kernel_path, tmp_path))
    assert [h.bottleneck for h in r.hypotheses] == ["tuning", "scan"]  # autotune-configs 2.5, multi-block-scan 2
    assert not r.stopped
    assert r.tests.dominant.why.startswith("bottleneck classes compete: tuning and scan")
    assert r.tests.single_family.why == "2 families stand: tuning, scan"


def test_a_hazard_card_is_cited_but_explains_no_slowness(tmp_path):
    r = PatternLevel().run(operator_context(MOE, VALUE_MASK, tmp_path))
    assert "L1.card.value-mask-ties" in r.evidence_by_id()
    assert any(n.startswith("hazard: card value-mask-ties") for n in r.notes)
    assert "index-reduction" not in {h.bottleneck for h in r.hypotheses} | {f.name for f in r.families}


def test_timed_validation_supplies_l2_facts_cited_by_the_cards_that_read_them(tmp_path):
    ref = SourceRef(ARTIFACT, str(tmp_path / "validation.json"))
    timed = h200.timed(h200.NEW_GELU_EAGER)
    r = PatternLevel().run(operator_context(GELU, GELU.kernel_path, tmp_path, 1, timed, ref))
    facts = r.evidence_by_id()["L1.facts.validation"]
    assert facts.source == ref and facts.data["l2.sol_fraction"] == pytest.approx(0.11, abs=0.005)
    assert facts.data["l2.launch_bound"] is False and facts.data["l2.time_ms"] in dict(h200.NEW_GELU_EAGER)
    card = r.evidence_by_id()["L1.card.autotune-configs"]
    assert card.data["score"] == 3.5 and "not src.has_autotune and l2.sol_fraction < 0.5" in card.data["held"]
    tuning = next(h for h in r.hypotheses if h.bottleneck == "tuning")
    assert "L1.facts.validation" in tuning.evidence


def test_launch_bound_means_the_sub_20us_cases_carry_the_headroom(tmp_path):
    assert TimingSettings().cudagraph_below_ms == LAUNCH_BOUND_MS
    blocked = h200.timed(tuple(zip(h200.MOE_BLOCKED, h200.MOE_SOL)))
    weights = operator_context(MOE, MOE.kernel_path, tmp_path, validation=blocked).case_weights()
    assert validation_facts(blocked, weights)["l2.launch_bound"] is False  # c1 (6 µs) holds 74% < 75%
    small = h200.timed(tuple(zip(h200.MOE_BLOCKED, h200.MOE_SOL))[:2])
    weights = operator_context(MOE, MOE.kernel_path, tmp_path, validation=small).case_weights()
    assert validation_facts(small, weights)["l2.launch_bound"] is True
    assert validation_facts(None, weights) == {}


def test_an_earlier_rounds_ir_facts_about_the_same_kernel_count_at_l1(tmp_path):
    l3 = IRLevel().run(operator_context(MOE, MOE.kernel_path, tmp_path / "r1"))
    facts = diagnosis_facts(Diagnosis(INCONCLUSIVE, (l3,)))
    assert facts["ttir.compute.reduce_index"] == 1 and facts["ptx.sync.shuffle"] == 20
    ref = str(tmp_path / "r1" / "diagnosis.json")
    same = PastRound(
        1, "index-reduction", "rejected", None, kernel=digest(MOE.initial_source()), facts=facts, facts_ref=ref
    )
    other = PastRound(
        2,
        "tuning",
        "rejected",
        None,
        kernel=digest("another kernel"),
        facts={"ptx.sync.shuffle": 0},
        facts_ref="elsewhere",
    )
    r = PatternLevel().run(operator_context(MOE, MOE.kernel_path, tmp_path, 3, history=(same, other)))
    card = r.evidence_by_id()["L1.card.index-free-top2"]
    assert card.data["score"] == 8  # + the TTIR index reduction (3) and its PTX shuffles (1)
    assert "ttir.compute.reduce_index >= 1" in card.data["held"]
    cited = r.evidence_by_id()["L1.facts.round1"]
    assert cited.source == SourceRef(ARTIFACT, ref) and "L1.facts.round2" not in r.evidence_by_id()
    assert "L1.facts.round1" in r.hypotheses[0].evidence


def test_one_name_per_rewrite_family_across_l1_l3_and_l4(tmp_path):
    """L3 and L4 take family names from the card each symptom's invariant names; the bundled invariants cover every
    symptom; an invariant for an unknown symptom, or naming a card that does not exist, fails the load."""
    card_families = set(default_index().by_family)
    invariants = load_invariants()[1]
    assert set(invariants) == set(symptoms())
    assert {inv.family for inv in invariants.values()} <= card_families
    doc = yaml.safe_load(DEFAULT_PATH.read_text())
    doc["invariants"]["layout-conversion"]["card"] = "no-such-card"
    doc["invariants"]["slow-kernel"] = doc["invariants"].pop("global-atomics")
    bad = tmp_path / "invariants.yaml"
    bad.write_text(yaml.safe_dump(doc))
    with pytest.raises(InvariantsError) as e:
        load_invariants(bad)
    assert "card 'no-such-card' does not exist" in str(e.value)
    assert "slow-kernel: not a symptom irscope.hazards reports" in str(e.value)


def test_l2_family_names_are_card_families_or_aliases():
    """L2 names coarse families (fuse-passes, …): each must be a card family or alias, so the offline rewriter and
    L1 find the cards behind it (the cards own the family names)."""
    from ladder.levels.profile import FAMILIES

    index = default_index()
    names = {c.family for c in index.cards.values()} | {a for c in index.cards.values() for a in c.aliases}
    assert {name for families in FAMILIES.values() for name, _ in families} <= names


def test_a_card_held_by_hints_alone_does_not_stop_the_ladder(tmp_path):
    """The histogram of the evaluation set: L1's only match is divisibility-hints, held by one half-weight symptom
    (score 0.5) that most kernels show. It stays a lead; the ladder climbs, and L3's compiled-code evidence (one
    global atomic per element) settles the round."""
    from ladder import api
    from tests.diagnosis.cases import CASES_FILE, load_cases
    from tests.diagnosis.score import spec_of

    case = next(c for c in load_cases(CASES_FILE) if c.id == "histogram-global-atomics")
    d = api.run(spec_of(case), through="L3", workdir=tmp_path, counterfactuals=0)
    l1 = d.level("L1")
    assert l1 is not None and l1.hypotheses and not l1.stopped
    failed = l1.tests.first_failure()
    assert failed[0] == "a:dominant" and "score 0.5, below 1: it holds by hints only" in failed[1]
    assert d.diagnosis.level == "L3" and d.diagnosis.family.name == "global-reduction"
