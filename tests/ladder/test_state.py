"""The ladder's typed state: options built once from arguments, a subject of one of two kinds, one state that each
level's result extends (L4 reads L3's findings from it directly), and the explicit table of levels."""

from __future__ import annotations

import dataclasses

import pytest

from irscope.hazards import Hazard, PassRef
from irscope.targets import TargetError
from ladder.context import Context, KernelSubject, operator_context
from ladder.evidence import RAN, SNAPSHOT, Evidence, Finding, Hypothesis, LevelResult, RewriteFamily, SourceRef
from ladder.kernel_spec import CASE, KernelSpec
from ladder.levels import LEVELS, Level
from ladder.levels.ir import IRLevel
from ladder.levels.patterns import PatternLevel
from ladder.levels.profile import ProfileLevel
from ladder.levels.source import SourceLevel
from ladder.options import MAX_COUNTERFACTUALS, Options, build_options
from ladder.policy import climb
from suite.operator import get_operator


def test_options_are_parsed_and_defaulted_in_one_place(tmp_path):
    opts = build_options(target="hip:gfx942", index=str(tmp_path / "i.db"), counterfactuals=0)
    assert opts.target.machine.isa_family == "CDNA3" and opts.index_db == tmp_path / "i.db"
    assert opts.counterfactuals == 0 and opts.invariants is None and opts.ncu == "ncu"
    assert build_options() == Options() and Options().counterfactuals == MAX_COUNTERFACTUALS
    assert str(Options().target) == "cuda:90"  # irscope.targets.DEFAULT_TARGET
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.ncu = "other"  # type: ignore[misc]
    with pytest.raises(TargetError, match="cannot build for sm_999"):
        build_options(target="cuda:999")


def test_the_levels_are_an_explicit_table_in_climbing_order():
    assert {n: type(lv) for n, lv in LEVELS.items()} == {
        "L1": PatternLevel,
        "L2": ProfileLevel,
        "L3": IRLevel,
        "L4": SourceLevel,
    }


def test_a_subject_is_an_operator_or_a_kernel_spec(tmp_path):
    gelu = get_operator("new_gelu")
    op_state = operator_context(gelu, gelu.kernel_path, tmp_path)
    assert op_state.subject.name == "new_gelu" and op_state.kernel_path == gelu.kernel_path
    assert set(op_state.case_weights()) == {c.name for c in gelu.cases}
    spec = KernelSpec.from_ref(f"{gelu.kernel_path}:new_gelu_kernel", {}, {}, "hip:gfx942")
    spec_state = Context(KernelSubject(spec), tmp_path, options=build_options(target=spec.target))
    assert spec_state.subject.name == "new_gelu_kernel" and spec_state.case_weights() == {CASE: 1.0}
    assert spec_state.options.target == spec.target


class _Finds(Level):
    """L3 as far as the state is concerned: a hypothesis with its typed finding."""

    name = "L3"

    def gather(self, ctx: Context) -> LevelResult:
        hazard = Hazard("cross-warp-reduction", "k", (5,), "line 5: barriers", 10.0, introduced_by=PassRef(3, "x", "p"))
        snap = Evidence("L3.e", "L3", "pass p introduced it", SourceRef(SNAPSHOT, "traj", snapshot=3, pass_arg="p"))
        hyp = Hypothesis("cross-warp-reduction", "k line 5", (), (snap.id,), Finding(hazard, "traj", 1.0))
        return LevelResult(self.name, RAN, evidence=(snap,), hypotheses=(hyp,))


class _Reads(Level):
    """L4 as far as the state is concerned: it stops on what the state hands it, and keeps what it saw."""

    name = "L4"
    seen: tuple[Hypothesis, ...] = ()

    def gather(self, ctx: Context) -> LevelResult:
        type(self).seen = ctx.findings
        ev = Evidence("L4.e", "L4", "compiler source", SourceRef(SNAPSHOT, "traj", snapshot=3, pass_arg="p"))
        hyp = dataclasses.replace(ctx.findings[0], evidence=(ev.id,))
        fam = RewriteFamily("reduction-layout", "keep the reduction in a warp", (ev.id,))
        return LevelResult(self.name, RAN, evidence=(ev,), hypotheses=(hyp,), families=(fam,))


def test_l4_reads_the_findings_l3_handed_up(tmp_path):
    gelu = get_operator("new_gelu")
    d = climb(operator_context(gelu, gelu.kernel_path, tmp_path), {"L3": _Finds(), "L4": _Reads()})
    (l3_hypothesis,) = d.results[2].hypotheses
    assert _Reads.seen == (l3_hypothesis,) and _Reads.seen[0].finding is l3_hypothesis.finding
    assert d.outcome == "actionable" and d.level == "L4"
