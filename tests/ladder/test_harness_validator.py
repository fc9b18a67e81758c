"""The harness as the ladder's validator, on this CPU: small cases under the interpreter, in the sandbox."""

from ladder.validators import create
from suite.operator import get_operator


def test_initial_kernel_is_correct_and_untimed_on_cpu(tmp_path):
    op = get_operator("new_gelu")
    v = create("harness").validate(op, op.kernel_path, tmp_path)
    assert v.correct and not v.timed
    assert [c.case for c in v.cases] == [c.name for c in op.small_cases]
    assert (tmp_path / "harness.json").exists()


def test_wrong_candidate_is_rejected_with_a_reason(tmp_path):
    op = get_operator("new_gelu")
    bad = tmp_path / "bad.py"
    bad.write_text(op.initial_source().replace("0.5 * x * (1.0 + t)", "0.5 * x * (1.0 - t)"))
    v = create("harness").validate(op, bad, tmp_path / "w")
    assert not v.correct and "outside" in v.detail
