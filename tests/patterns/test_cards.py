"""Every card is valid data: schema, predicates, vocabulary, appliers; broken cards fail loudly."""

import shutil
from pathlib import Path

import jsonschema
import pytest

from patterns.appliers import APPLIERS
from patterns.card import CARDS_DIR, CardError, card_files, load_card, load_cards, render_card, schema, split_card_text

GOOD = CARDS_DIR / "index-free-top2.md"


def test_all_cards_validate_against_the_schema():
    files = card_files(CARDS_DIR, include_proposed=False)
    assert len(files) >= 24
    validator = jsonschema.Draft202012Validator(schema())
    for f in files:
        front, body = split_card_text(f.read_text(), f)
        errors = list(validator.iter_errors({**front, **body}))
        assert not errors, f"{f.name}: {[e.message for e in errors]}"
    cards = load_cards(CARDS_DIR)  # predicates parse and name only known facts
    assert len({c.id for c in cards}) == len(cards) >= 24
    assert len({c.family for c in cards}) >= 15
    assert {"cuda", "hip"} <= {t for c in cards for t in c.targets}


def test_cards_cite_sources_and_the_measured_ones_log_their_numbers():
    cards = {c.id: c for c in load_cards(CARDS_DIR)}
    assert all(c.sources for c in cards.values())
    for cid in ("index-free-top2", "block-small-rows"):
        log = cards[cid].evidence_log
        assert log and log[0]["speedup"] == 16.0 and "docs/suite.md#case-study-moe-group-top-2" in log[0]["source"]


def test_appliers_and_cards_reference_each_other():
    cards = {c.id: c for c in load_cards(CARDS_DIR)}
    for c in cards.values():
        for name in c.appliers:
            assert name in APPLIERS, f"{c.id} names unknown applier {name}"
    for a in APPLIERS.values():
        assert a.card in cards and a.name in cards[a.card].appliers, f"{a.name} → {a.card}"


def test_render_and_parse_round_trip():
    card = load_card(GOOD)
    text = render_card(card.document)
    front, body = split_card_text(text, "rendered")
    assert {**front, **body} == card.document


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda t: t.replace("---\n", "", 1), "must start with a YAML front matter"),
        (lambda t: t.replace("family: index-reduction", "family: [unclosed"), "not valid YAML"),
        (lambda t: t.replace("status: curated", "status: curated\ncolour: red"), "Additional properties"),
        (lambda t: t.replace("ttir.compute.reduce_index >= 1", "ttir.compute.reduce_index >="), "column"),
        (lambda t: t.replace("ttir.compute.reduce_index >= 1", "ttir.sync.shuffle >= 1"), "not measured on ttir"),
        (lambda t: t.replace("src.mask_from_index", "src.mask_from_idx"), "unknown src fact"),
        (lambda t: t.replace("## After\n\n```python\n", "## After\n\n"), "fenced code"),
        (lambda t: t.replace("## Notes", "## Remarks"), "unknown section"),
        (lambda t: t.replace("schema_version: 1", "schema_version: 2"), "schema_version"),
        (lambda t: t.replace("  - before.src.index_reductions", "  - src.index_reductions"), "recognizers read"),
    ],
)
def test_broken_cards_are_rejected_with_the_reason(tmp_path, mutate, message):
    text = mutate(GOOD.read_text())
    path = write(tmp_path, "index-free-top2.md", text)
    with pytest.raises(CardError) as e:
        load_card(path)
    assert message in str(e.value) and str(path) in str(e.value)


def test_file_name_must_be_the_id_and_ids_unique(tmp_path):
    with pytest.raises(CardError, match=r"rename to index-free-top2\.md"):
        load_card(write(tmp_path, "other.md", GOOD.read_text()))
    cards = tmp_path / "cards"
    (cards / "proposed").mkdir(parents=True)
    shutil.copy(GOOD, cards / GOOD.name)
    shutil.copy(GOOD, cards / "proposed" / GOOD.name)
    with pytest.raises(CardError, match="is also used by"):
        load_cards(cards)


def test_every_bad_card_in_a_directory_is_reported_at_once(tmp_path):
    for name in ("a.md", "b.md"):
        write(tmp_path, name, "no front matter")
    with pytest.raises(CardError) as e:
        load_cards(tmp_path)
    assert "a.md" in str(e.value) and "b.md" in str(e.value)


def test_the_documentation_lists_every_card_feature_fact_and_applier():
    from patterns.features import FEATURES
    from patterns.names import L2_FACTS

    doc = (Path(__file__).resolve().parents[2] / "docs" / "patterns.md").read_text()
    missing = [f"`{c.id}`" for c in load_cards(CARDS_DIR) if f"`{c.id}`" not in doc]
    missing += [f"`src.{k}`" for k in FEATURES if f"`src.{k}`" not in doc]
    missing += [f"`l2.{k}`" for k in L2_FACTS if f"`l2.{k}`" not in doc]
    missing += [f"`{a}`" for a in APPLIERS if f"`{a}`" not in doc]
    assert not missing
