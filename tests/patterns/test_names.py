"""The predicate vocabulary agrees with the counter contract (docs/signatures.md) and irscope's registry."""

import re
from pathlib import Path

from irscope.signatures import counter_names
from patterns.features import FEATURES
from patterns.names import COUNTERS, RESOURCES, STAGES, check_name

DOC = Path(__file__).resolve().parents[2] / "docs" / "signatures.md"


def contract_from_doc() -> tuple[dict[str, tuple[str, ...]], set[str]]:
    counters: dict[str, tuple[str, ...]] = {}
    resources: set[str] = set()
    for line in DOC.read_text().splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        names = re.findall(r"`([^`]+)`", cells[0])
        first = names[0]
        expanded = [first]
        for n in names[1:]:
            if n.startswith("."):
                expanded.append(first.rsplit(".", 1)[0] + n)
            elif n.startswith("_"):
                expanded.append(first.rsplit("_", 1)[0] + n)
            else:
                expanded.append(n)
        stages_cell = cells[-1]
        for name in expanded:
            if name.startswith("res."):
                resources.add(name.removeprefix("res."))
            else:
                on = STAGES if stages_cell == "all" else tuple(s.strip() for s in stages_cell.split(","))
                counters[name] = on
    return counters, resources


def test_counter_table_matches_the_contract_document():
    counters, resources = contract_from_doc()
    assert len(counters) > 40
    assert {k: set(v) for k, v in COUNTERS.items()} == {k: set(v) for k, v in counters.items()}
    assert set(RESOURCES) == resources


def test_every_registered_counter_is_in_the_vocabulary():
    registered = set(counter_names("cuda")) | set(counter_names("hip"))
    assert registered - {"res.instructions"} == set(COUNTERS)


def test_check_name_explains_what_is_wrong():
    src = frozenset(FEATURES)
    assert check_name("ttir.compute.reduce_index", src) is None
    assert check_name("res.spill_bytes", src) is None
    assert check_name("l2.sol_fraction", src) is None
    assert check_name("src.uses_argmax", src) is None
    assert "not measured on ttir" in check_name("ttir.sync.shuffle", src)
    assert "unknown namespace" in check_name("gpu.sync.shuffle", src)
    assert "unknown counter" in check_name("ptx.sync.shuffles", src)
    assert "unknown src fact" in check_name("src.uses_argmaxx", src)
    assert "names a namespace" in check_name("l2", src)
