"""Matching cards against evidence from real kernels: source, a real cuda:90 trajectory, a profile."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import irscope
from irscope.examples import EXAMPLES
from patterns import match
from patterns.card import load_cards
from patterns.facts import FactsError, KernelFacts
from patterns.matcher import CardIndex

REPO = Path(__file__).resolve().parents[2]
EXAMPLES_FILE = REPO / "irscope" / "examples" / "kernels.py"
ARGMAX_LINE = next(
    i for i, ln in enumerate(EXAMPLES_FILE.read_text().splitlines(), 1) if "i1 = tl.argmax(x, axis=0)" in ln
)


@pytest.fixture(scope="module")
def argmax_trajectory(tmp_path_factory):
    ex = EXAMPLES["top2_argmax"]
    out = tmp_path_factory.mktemp("traj") / "top2_argmax"
    irscope.capture(ex.kernel, target="cuda:90", kernel_kwargs=ex.args, out_dir=out, **ex.options)
    return out


@pytest.fixture(scope="module")
def index():
    return CardIndex(load_cards())


def test_trajectory_of_the_moe_argmax_kernel_ranks_the_index_card_first(argmax_trajectory, index):
    ev = KernelFacts.from_trajectory(argmax_trajectory)
    results = match(ev, index)
    top = results[0]
    assert top.card.id == "index-free-top2"
    assert top.score > results[1].score
    matched = {r.predicate: r for r in top.matched}
    ttir = matched["ttir.compute.reduce_index >= 1"]
    assert ttir.values == {"ttir.compute.reduce_index": 1}
    locs = ttir.locations["ttir.compute.reduce_index"]
    assert any(x.stage == "ttir" and x.line == ARGMAX_LINE and x.file == str(EXAMPLES_FILE) for x in locs)
    assert any(x.stage == "ttir" and x.pass_arg is not None for x in locs)  # which pass (or the stage input)
    shuffle = matched["ptx.sync.shuffle > 0 and ttgir.compute.reduce_index >= 1"]
    assert shuffle.values["ptx.sync.shuffle"] > 0
    assert any(x.line == ARGMAX_LINE for x in shuffle.locations["ptx.sync.shuffle"])
    assert matched["src.uses_argmax or src.uses_argmin"].locations["src.uses_argmax"][0].line == ARGMAX_LINE
    assert [r.outcome for r in top.preconditions] == [True]  # the index is not an output


def test_the_value_only_rewrite_no_longer_matches_the_index_card(index):
    ex = EXAMPLES["top2_value"]
    traj = irscope.capture(ex.kernel, target="cuda:90", kernel_kwargs=ex.args, **ex.options)
    ev = KernelFacts.from_trajectory(traj, passes=False)
    assert ev.get("ttir.compute.reduce_index") == 0  # a zero the summary omits is a fact, not unknown
    assert "index-free-top2" not in [m.card.id for m in match(ev, index)]
    assert ev.get("spec.num_warps") == 4 and ev.get("target.arch") == 90 and ev.get("spec.block_max") == 128


def test_source_only_evidence_leaves_ir_facts_unknown(index):
    ev = KernelFacts.from_source_file(EXAMPLES_FILE, kernel="moe_group_top2_argmax")
    results = match(ev, index)
    assert results[0].card.id == "index-free-top2"
    assert [r.predicate for r in results[0].unknown] == [
        "ttir.compute.reduce_index >= 1",
        "ptx.sync.shuffle > 0 and ttgir.compute.reduce_index >= 1",
    ]


def test_a_false_precondition_blocks_the_card(index):
    src = EXAMPLES_FILE.read_text().replace("tl.store(out_ptr + pid, first + second)", "tl.store(out_ptr + pid, i1)")
    ev = KernelFacts.from_source(src, "argmax_out.py", kernel="moe_group_top2_argmax")
    assert ev.get("src.stores_index") is True
    assert "index-free-top2" not in [m.card.id for m in match(ev, index)]
    blocked = [m for m in match(ev, index, include_blocked=True) if m.card.id == "index-free-top2"]
    assert blocked and blocked[0].blocked


def test_a_precondition_whose_fact_is_unknown_does_not_block_the_card(index):
    """The matcher's rule: unknown evidence counts neither for nor against a card. IR counters alone say nothing
    about the source, so `not src.stores_index` is unknown: the card still matches, unblocked, and shows it."""
    ev = KernelFacts(counters={"ttir.compute.reduce_index": 1})
    assert ev.get("src.stores_index") is None
    (top,) = [m for m in match(ev, index) if m.card.id == "index-free-top2"]
    assert [(r.predicate, r.outcome) for r in top.preconditions] == [("not src.stores_index", None)]
    assert not top.blocked and top.is_match and top.score > 0


def test_profile_facts_drive_l2_cards(tmp_path, index):
    src = REPO / "tests" / "patterns" / "data" / "kernels" / "softmax_3pass.py"
    prof = tmp_path / "profile.json"
    prof.write_text(
        json.dumps({"l2": {"num_rows": 64, "sm_count": 132, "sol_fraction": 0.05, "bottleneck": "latency"}})
    )
    without = [m.card.id for m in match(KernelFacts.from_source_file(src), index)]
    ev = KernelFacts.from_source_file(src).merge(KernelFacts.from_profile(prof))
    results = {m.card.id: m for m in match(ev, index)}
    assert "split-row-reduction" not in without and "split-row-reduction" in results
    hit = results["split-row-reduction"].matched[0]
    assert hit.predicate == "src.has_reduce and l2.num_rows < l2.sm_count"
    assert hit.values == {"src.has_reduce": True, "l2.num_rows": 64, "l2.sm_count": 132}
    assert hit.locations["l2.num_rows"][0].file == str(prof)


def test_target_and_family_filters(index):
    ev = KernelFacts(
        source_features={
            "has_dot": True,
            "uses_tensor_descriptor": False,
            "uses_block_ptr": False,
            "has_autotune": False,
        },
        target={"backend": "hip", "arch": "gfx942"},
    )
    ids = [m.card.id for m in match(ev, index)]
    assert "tma-tensor-descriptors" not in ids and "amd-tuning-knobs" in ids
    assert {m.card.family for m in match(ev, index, family="tuning")} == {"tuning"}
    with pytest.raises(KeyError, match="no family 'nope'"):
        match(ev, index, family="nope")


def test_quick_index_skips_cards_whose_symptoms_read_only_unknown_facts(index):
    ev = KernelFacts(counters={"res.spill_bytes": 64.0})
    assert [c.id for c in index.candidates(ev)] == sorted(index.by_fact["res.spill_bytes"])
    assert [m.card.id for m in match(ev, index)] == ["register-spills"]
    assert match(KernelFacts(), index) == []


def test_evidence_round_trips_through_json(argmax_trajectory):
    ev = KernelFacts.from_trajectory(argmax_trajectory, passes=False)
    again = KernelFacts.from_json(json.loads(json.dumps(ev.to_json())))
    assert again.counters == ev.counters and again.locations == ev.locations
    with pytest.raises(FactsError, match="unknown evidence field"):
        KernelFacts.from_json({"countrs": {}})
    with pytest.raises(FactsError, match="cannot read profile"):
        KernelFacts.from_profile(REPO / "no-such-profile.json")


def test_cli_match_on_a_stored_trajectory(argmax_trajectory):
    out = subprocess.run(
        [sys.executable, "-m", "patterns.cli", "match", "--trajectory", str(argmax_trajectory), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    first = data["matches"][0]
    assert first["card"] == "index-free-top2"
    reduce_index = next(m for m in first["matched"] if m["predicate"] == "ttir.compute.reduce_index >= 1")
    assert {"stage": "ttir", "line": ARGMAX_LINE}.items() <= next(
        loc for loc in reduce_index["locations"]["ttir.compute.reduce_index"] if "line" in loc
    ).items()


# Cards written here from a real one, with clauses chosen so that each part of the score, the filters and the
# ranking decides something; facts given as counters (`ptx.*`) and source features (`src.*`).
def card(base, id: str, family: str = "f", status: str = "curated", targets=("cuda",), **clauses):
    from dataclasses import replace

    from patterns.card import Clause
    from patterns.predicate import Predicate

    def parse(items):
        return [Clause(Predicate.parse(text), f"why {text}", weight) for text, weight in items]

    return replace(
        base,
        id=id,
        family=family,
        status=status,
        targets=list(targets),
        symptoms=parse(clauses.get("symptoms", ())),
        preconditions=parse(clauses.get("preconditions", ())),
        anti_signals=parse(clauses.get("anti_signals", ())),
    )


@pytest.fixture(scope="module")
def base(index):
    return index.cards["index-free-top2"]


def test_score_and_confidence_count_known_symptoms_and_subtract_anti_signals(base):
    from patterns.matcher import ANTI_SIGNAL, PRECONDITION, SYMPTOM, evaluate

    c = card(
        base,
        "scored",
        symptoms=[("ptx.sync.shuffle > 0", 2.0), ("ptx.sync.barrier > 0", 1.0), ("ptx.mem.load > 0", 4.0)],
        preconditions=[("ptx.sync.shuffle > 0", 1.0)],
        anti_signals=[("ptx.sync.shuffle > 1", 0.5), ("ptx.sync.barrier > 0", 3.0)],
    )
    ev = KernelFacts(counters={"ptx.sync.shuffle": 2, "ptx.sync.barrier": 0})  # mem.load unknown
    m = evaluate(c, ev)
    assert m.score == 2.0 - 0.5  # the true symptom less the true anti-signal
    assert m.confidence == 2.0 / 3.0  # of the symptoms whose value is known
    assert [r.outcome for r in m.symptoms] == [True, False, None] and [r.predicate for r in m.unknown] == [
        "ptx.mem.load > 0"
    ]
    assert [r.role for r in m.symptoms + m.preconditions + m.anti_signals] == [SYMPTOM] * 3 + [PRECONDITION] + [
        ANTI_SIGNAL
    ] * 2
    assert [r.outcome for r in m.anti_signals] == [True, False]
    first = m.symptoms[0]
    assert (first.why, first.weight, first.values) == ("why ptx.sync.shuffle > 0", 2.0, {"ptx.sync.shuffle": 2})
    assert m.is_match and not m.blocked
    nothing_known = evaluate(c, KernelFacts(counters={"ptx.sync.shuffle": 0, "ptx.sync.barrier": 0}))
    assert (nothing_known.score, nothing_known.confidence) == (0.0, 0.0) and not nothing_known.is_match
    unknown_only = evaluate(c, KernelFacts())
    assert unknown_only.confidence == 0.0 and len(unknown_only.unknown) == 3


def test_a_clause_result_carries_the_predicates_notes(base):
    from patterns.matcher import evaluate

    c = card(base, "noted", symptoms=[("src.kernel_name > 0", 1.0)])  # a string ordered against a number
    (r,) = evaluate(c, KernelFacts(source_features={"kernel_name": "k"})).symptoms
    assert (r.outcome, r.notes) == (None, ["cannot order 'k' and 0 (>): unknown"])


def test_candidates_filter_by_family_backend_and_status(base):
    cards = [
        card(base, "a", family="f1", symptoms=[("ptx.sync.shuffle > 0", 1.0)]),
        card(base, "b", family="f2", symptoms=[("ptx.sync.shuffle > 0", 1.0)]),
        card(base, "c", family="f1", targets=("hip",), symptoms=[("ptx.sync.shuffle > 0", 1.0)]),
        card(base, "d", family="f1", status="proposed", symptoms=[("ptx.sync.shuffle > 0", 1.0)]),
        card(base, "e", family="f2", symptoms=[("ptx.sync.barrier > 0", 1.0)]),
        card(base, "g", family="f1", symptoms=[("ptx.sync.barrier > 0", 1.0)]),
    ]
    idx = CardIndex(cards)
    assert idx.by_family == {"f1": ["a", "c", "d", "g"], "f2": ["b", "e"]} and idx.families() == ["f1", "f2"]
    cuda = KernelFacts(counters={"ptx.sync.shuffle": 1}, target={"backend": "cuda"})
    assert [c.id for c in idx.candidates(cuda)] == ["a", "b"]  # not c (hip), d (proposed), e (reads no known fact)
    assert [c.id for c in idx.candidates(cuda, include_proposed=True)] == ["a", "b", "d"]
    assert [c.id for c in idx.candidates(cuda, family="f1")] == ["a"]  # the family's, among those above (not g)
    anywhere = KernelFacts(counters={"ptx.sync.shuffle": 1})  # no backend known: every target's cards
    assert [c.id for c in idx.candidates(anywhere)] == ["a", "b", "c"]
    with pytest.raises(KeyError, match="no family 'f3'; families: f1, f2"):
        idx.candidates(cuda, family="f3")
    assert [m.card.id for m in match(cuda, cards)] == ["a", "b"]  # a list of cards is indexed the same way
    assert [m.card.id for m in match(cuda, cards, include_proposed=True)] == ["a", "b", "d"]
    assert [m.card.id for m in match(cuda, cards, top=1)] == ["a"]


def test_ranking_is_by_score_then_confidence_then_fewer_unknowns_then_id(base):
    from patterns.matcher import evaluate, rank

    ev = KernelFacts(counters={"ptx.sync.shuffle": 1, "ptx.sync.barrier": 0})
    sure = card(base, "z-sure", symptoms=[("ptx.sync.shuffle > 0", 1.0)])
    unsure = card(base, "a-unsure", symptoms=[("ptx.sync.shuffle > 0", 1.0), ("ptx.sync.barrier > 0", 1.0)])
    vague = card(base, "b-vague", symptoms=[("ptx.sync.shuffle > 0", 1.0), ("ptx.mem.load > 0", 1.0)])
    strong = card(base, "y-strong", symptoms=[("ptx.sync.shuffle > 0", 2.0)])
    twin = card(base, "x-sure", symptoms=[("ptx.sync.shuffle > 0", 1.0)])
    ranked = rank(evaluate(c, ev) for c in (sure, unsure, vague, strong, twin))
    # score 2 first; then confidence 1.0 (fewer unknowns first: x-sure, z-sure by id, then b-vague), then 0.5
    assert [m.card.id for m in ranked] == ["y-strong", "x-sure", "z-sure", "b-vague", "a-unsure"]


def test_a_matchs_json_rounds_its_numbers_to_four_places(base):
    from dataclasses import replace

    from patterns.matcher import evaluate

    c = replace(
        card(base, "r", symptoms=[("ptx.sync.shuffle > 0", 1.234567), ("ptx.sync.barrier > 0", 1.0)]), path=None
    )
    doc = evaluate(c, KernelFacts(counters={"ptx.sync.shuffle": 1, "ptx.sync.barrier": 0})).to_json()
    assert (doc["score"], doc["confidence"], doc["path"]) == (1.2346, 0.5525, None)


def test_the_default_index_holds_every_card_once():
    from patterns.matcher import default_index

    assert default_index() is default_index()
    assert sorted(default_index().cards) == sorted(c.id for c in load_cards())
    ev = KernelFacts(counters={"res.spill_bytes": 64.0})
    assert [m.card.id for m in match(ev)] == ["register-spills"]  # cards=None: the default index


def test_a_match_in_json_says_what_matched_and_where(argmax_trajectory, index):
    top = match(KernelFacts.from_trajectory(argmax_trajectory), index)[0]
    doc = top.to_json()
    assert (doc["card"], doc["family"], doc["blocked"]) == ("index-free-top2", top.card.family, False)
    assert (doc["score"], doc["confidence"]) == (round(top.score, 4), round(top.confidence, 4))
    assert {k: doc[k] for k in ("aliases", "title", "kind", "status", "rewrite", "appliers")} == {
        "aliases": top.card.aliases,
        "title": top.card.title,
        "kind": top.card.kind,
        "status": top.card.status,
        "rewrite": top.card.rewrite,
        "appliers": top.card.appliers,
    }
    assert doc["path"] == str(top.card.path)
    assert [r["predicate"] for r in doc["matched"]] == [r.predicate for r in top.matched]
    assert len(doc["symptoms"]) == len(top.symptoms) and len(doc["preconditions"]) == len(top.preconditions)
    assert doc["anti_signals"] == [r.to_json() for r in top.anti_signals]
    first = doc["matched"][0]
    r = top.matched[0]
    assert first == {
        "role": "symptom",
        "predicate": r.predicate,
        "why": r.why,
        "weight": r.weight,
        "outcome": True,
        "values": r.values,
        "locations": {k: [x.to_json() for x in v] for k, v in r.locations.items()},
        "notes": r.notes,
    }
    assert first["locations"]["ttir.compute.reduce_index"][0]["stage"] == "ttir"
    json.dumps(doc)  # plain JSON all through
