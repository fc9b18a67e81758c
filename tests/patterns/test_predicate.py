"""The card predicate language: parsing, precedence, three-valued evaluation, errors."""

import pytest

from patterns.predicate import Predicate, PredicateError

FACTS = {
    "ttir.compute.reduce_index": 1,
    "ptx.sync.shuffle": 28,
    "sass.mem.load_vec1": 3,
    "sass.mem.load_vec4": 0,
    "res.spill_bytes": 0,
    "l2.sol_fraction": 0.25,
    "l2.bottleneck": "memory",
    "l2.launch_bound": False,
    "src.uses_argmax": True,
    "src.tile_elements": 128,
    "spec.num_warps": 4,
}


def ev(text: str, facts: dict | None = None):
    return Predicate.parse(text).evaluate(FACTS if facts is None else facts)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("ptx.sync.shuffle > 0", True),
        ("ttir.compute.reduce_index >= 1", True),
        ("sass.mem.load_vec1 > 0 and sass.mem.load_vec4 == 0", True),
        ("res.spill_bytes > 0", False),
        ("l2.sol_fraction < 0.3", True),
        ('l2.bottleneck == "memory"', True),
        ("l2.bottleneck == 'compute'", False),
        ("l2.launch_bound", False),
        ("not l2.launch_bound", True),
        ("src.uses_argmax", True),
        ("src.tile_elements < 128 * spec.num_warps", True),
        ("src.tile_elements >= 32 * spec.num_warps", True),
        ("(ptx.sync.shuffle - 28) / 2 == 0", True),
        ("-spec.num_warps < -3", True),
        ("l2.sol_fraction * 4 == 1.0", True),
        ("spec.num_warps != 8", True),
        ("src.uses_argmax == true", True),
        ("1e3 > 999", True),
    ],
)
def test_values(text, expected):
    assert ev(text).value is expected


def test_precedence_not_binds_tighter_than_and_and_and_tighter_than_or():
    assert ev("not src.uses_argmax and res.spill_bytes == 0").value is False  # (not a) and b
    assert ev("src.uses_argmax or res.spill_bytes > 0 and l2.launch_bound").value is True  # a or (b and c)
    assert ev("(src.uses_argmax or res.spill_bytes > 0) and l2.launch_bound").value is False


def test_missing_evidence_is_unknown_and_kleene_logic_applies():
    out = ev("ttgir.layout.convert_layout >= 2")
    assert out.value is None and out.missing == ["ttgir.layout.convert_layout"]
    assert ev("not ttgir.layout.convert_layout").value is None
    assert ev("res.spill_bytes > 0 and ttgir.layout.convert_layout > 1").value is False  # false and unknown
    assert ev("src.uses_argmax or ttgir.layout.convert_layout > 1").value is True  # true or unknown
    assert ev("src.uses_argmax and ttgir.layout.convert_layout > 1").value is None  # true and unknown
    assert ev("res.spill_bytes > 0 or ttgir.layout.convert_layout > 1").value is None  # false or unknown
    assert ev("ttgir.layout.convert_layout + 1 > 0").value is None  # arithmetic on unknown


def test_every_read_name_is_reported_with_its_value():
    out = ev("src.uses_argmax or ptx.sync.shuffle > 0")
    assert out.read == {"src.uses_argmax": True, "ptx.sync.shuffle": 28}


def test_type_mismatches_are_unknown_with_a_note():
    out = ev("l2.bottleneck > 3")
    assert out.value is None and "cannot order" in out.notes[0]
    assert ev("l2.bottleneck == 3").value is False
    out = ev("l2.bottleneck + 1 > 0")
    assert out.value is None and "non-numbers" in out.notes[0]
    out = ev("spec.num_warps / res.spill_bytes > 1")
    assert out.value is None and "division by zero" in out.notes[0]


@pytest.mark.parametrize(
    "text, column, what",
    [
        ("", 1, "empty predicate"),
        ("ptx.sync.shuffle >", 19, "expected a number"),
        ("a > 1 > 0", 7, "chained comparison"),
        ("(a > 1", 7, "expected ')'"),
        ("a >> 1", 4, "expected a number"),
        ('__import__("os").system("true")', 17, "unexpected"),  # no calls, no attribute access
        ("a ; b", 3, "unexpected character"),
        ("x.y == 'unterminated", 8, "unexpected character"),
    ],
)
def test_syntax_errors_name_the_column(text, column, what):
    with pytest.raises(PredicateError) as e:
        Predicate.parse(text)
    assert what in str(e.value) and f"column {column}" in str(e.value)


def test_names_lists_each_name_once_in_order():
    p = Predicate.parse("a.b > 1 and (c.d or a.b < 3) and not e.f")
    assert p.names() == ["a.b", "c.d", "e.f"]


def test_keywords_are_not_names():
    assert Predicate.parse("true and not false").evaluate({}).value is True
    with pytest.raises(PredicateError):
        Predicate.parse("and > 1")
