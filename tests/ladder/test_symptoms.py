"""One record per symptom, in one table (irscope.hazards.SYMPTOMS): every symptom has its invariant, its card, real
counters and a row in docs/hazards.md; a new symptom is one record plus its invariant and card (a stub here), and
one without an invariant is a note, not a crash."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import irscope
from irscope import hazards, signatures
from irscope.examples import EXAMPLES
from irscope.hazards import SYMPTOMS, Hazard, KernelView, Symptom
from ladder.context import Context, KernelSubject
from ladder.evidence import RAN
from ladder.invariants import load as load_invariants
from ladder.kernel_spec import KernelSpec
from ladder.levels.ir import IRLevel
from ladder.options import build_options
from patterns.matcher import default_index

DOCS = Path(__file__).resolve().parents[2] / "docs" / "hazards.md"


def test_every_symptom_has_its_invariant_card_counters_and_docs_row():
    _, invariants = load_invariants()
    cards = default_index().cards
    counters = set(signatures.counter_names("cuda")) | set(signatures.counter_names("hip"))
    documented = re.findall(r"^\| `([a-z0-9-]+)` \|", DOCS.read_text().split("## Symptoms")[1], re.M)
    assert sorted(documented) == sorted(SYMPTOMS)
    for name, s in SYMPTOMS.items():
        assert s.name == name and len(s.description) > 60
        assert name in invariants and invariants[name].card.id in cards, name
        for shown in s.shows:
            assert shown.startswith("res.") or shown.split(".", 1)[1] in counters, f"{name} shows {shown}"


def _barriers(view: KernelView) -> list[Hazard]:
    """A stub detector: every machine-code barrier, costed far above anything else in the kernel."""
    lines = sorted(n for n, c in view.lines(view.machine_stage).items() if c.get("sync.barrier"))
    claim = f"{len(lines)} line(s) with barriers"
    return [Hazard("toy-barriers", view.kernel, tuple(lines), claim, 1e9, cause="barriers")] if lines else []


TOY = Symptom("toy-barriers", "every barrier, as a stand-in for a symptom added to the table tomorrow", _barriers)

TOY_INVARIANT = """
format: irscope-invariants
format_version: 2
invariants:
  toy-barriers:
    card: warp-local-reduction
    pass: convert-triton-gpu-to-llvm
    source_op: tt.reduce
    statement: Barriers come from the cross-warp combine of reductions.
    action: "keep reductions within a warp"
"""


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Symptom:
    monkeypatch.setitem(SYMPTOMS, TOY.name, TOY)  # its entry in the table
    return TOY


def test_a_new_symptom_is_its_record_plus_its_invariant_and_card(toy, tmp_path):
    ex = EXAMPLES["top2_argmax"]
    spec = KernelSpec.from_kernel(ex.kernel, ex.args, ex.options, "cuda:90")
    found = hazards.find(irscope.capture(ex.kernel, kernel_kwargs=dict(ex.args), **ex.options))
    assert found.hazards[0].symptom == "toy-barriers"  # the table is all find() reads
    # without an invariant: L3 still reports it, and notes that nothing names its family
    bare = IRLevel().run(Context(KernelSubject(spec), tmp_path / "bare"))
    assert bare.status == RAN and bare.hypotheses[0].bottleneck == "toy-barriers"
    assert any("toy-barriers: no invariant" in n for n in bare.notes)
    assert "reduction-layout" not in {f.name for f in bare.families}
    # with its invariant (naming an existing card): the card's family stands for it
    inv = tmp_path / "inv.yaml"
    inv.write_text(TOY_INVARIANT)
    full = IRLevel().run(Context(KernelSubject(spec), tmp_path / "full", options=build_options(invariants=inv)))
    assert [f.cards for f in full.families if f.name == "reduction-layout"] == [("warp-local-reduction",)]
