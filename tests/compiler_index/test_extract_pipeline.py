"""The Python pipeline extractor: adders per stage method in order, with conditions; stage keys from add_stages."""

from __future__ import annotations

from compiler_index.extract.pipeline import extract
from tests.compiler_index.conftest import CORPUS

REL = "toytriton/backends/toy/compiler.py"


def test_steps_in_order_with_conditions():
    facts = extract(REL, (CORPUS / "python" / REL).read_bytes())
    steps = [(s.method, s.position, s.adder, s.args, s.condition) for s in facts.pipeline_steps]
    assert steps == [
        ("make_ttir", 0, "passes.tgpu.add_print_ir", "'before'", ""),
        ("make_ttgir", 0, "passes.tgpu.add_vectorize_loads", "", ""),
        ("make_ttgir", 1, "passes.tgpu.add_fuse_relayouts", "options.rounds, True", "capability // 10 >= 9"),
        (
            "make_ttgir",
            2,
            "passes.tgpu.add_fuse_relayouts",
            "1, False",
            "not (capability // 10 >= 9) and capability // 10 == 8",
        ),
        ("make_ttgir", 3, "passes.tgpu.add_print_ir", "label", "for label in options.debug_labels"),
        ("make_llir", 0, "toyhw.passes.hw.add_lower_barriers", "options.capability", ""),
    ]
    assert {s.backend for s in facts.pipeline_steps} == {"toy"}
    assert facts.pipeline_steps[1].line == 23


def test_stage_keys_from_add_stages():
    facts = extract(REL, (CORPUS / "python" / REL).read_bytes())
    assert [(s.stage, s.method, s.condition) for s in facts.pipeline_stages] == [
        ("ttir", "make_ttir", "language == 'triton'"),
        ("ttgir", "make_ttgir", "language == 'triton'"),
        ("llir", "make_llir", ""),
    ]


def test_invalid_python_is_reported_not_raised():
    facts = extract("pkg/backends/broken/compiler.py", b"def make_ttgir(:\n")
    assert facts.parse_errors == 1 and "pkg/backends/broken/compiler.py:1" in facts.error
    assert facts.pipeline_steps == []
