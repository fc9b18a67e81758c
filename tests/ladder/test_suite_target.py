"""`ladder suite --target`: the ladder diagnoses for the target it is given, here AMD's MI300 on this CPU (the
stand-in driver compiles for it; the interpreter validates), and refuses a target it cannot build for."""

from __future__ import annotations

import json

import irscope
from ladder.cli import main as ladder_main
from ladder.context import operator_context
from ladder.levels.ir import IRLevel
from ladder.levels.source import SourceLevel
from ladder.options import build_options
from ladder.records import History
from suite.operator import get_operator


def test_ladder_suite_diagnoses_for_the_mi300_on_a_cpu(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["suite", "--ops", "layer_norm", "--offline", "--rounds", "1", "--target", "hip:gfx942", "--quiet"]
    assert ladder_main([*args, "--out", str(out)]) == 0
    with History(out) as h:
        (round1,) = [r for r in h.rounds("layer_norm") if r.round == 1]
    assert round1.diagnosis is not None
    levels = {r.level: r for r in round1.diagnosis.results}
    # L1 matched the cards for AMD (its tuning knobs), L3 captured and read the AMDGCN of the gfx942 compile
    assert any("amd-tuning-knobs" in n for n in levels["L1"].notes)
    (traj_dir,) = levels["L3"].trajectories
    traj = irscope.load(traj_dir)
    assert str(traj.target) == "hip:gfx942" and traj.target.machine.part == "MI300X"
    assert "amdgcn" in {s.stage for s in traj.snapshots}
    finding = levels["L3"].hypotheses[0].finding
    assert finding is not None and finding.hazard.symptom == "cross-warp-reduction"
    assert finding.hazard.introduced_by is not None
    assert finding.hazard.introduced_by.pass_arg == "convert-triton-amdgpu-to-llvm"
    written = json.loads((out / "layer_norm" / "round-001" / "diagnosis.json").read_text())
    assert "for hip:gfx942" in written["results"][2]["notes"][0]


def test_a_target_the_compiler_cannot_build_for_is_refused(tmp_path, capsys):
    args = ["suite", "--ops", "layer_norm", "--offline", "--rounds", "1", "--target", "hip:gfx801"]
    assert ladder_main([*args, "--out", str(tmp_path / "run")]) == 2
    assert "Triton's AMD backend has no ISA family for gfx801" in capsys.readouterr().err


def test_l4_explains_the_trajectory_for_its_own_target(tmp_path, triton_db):
    """L3 compiled for the MI300; L4, asked with the default target, still reads the compiler's AMD code: the gates
    and classes of the compile L3 read, not of the target the round was started with."""
    op = get_operator("layer_norm")
    l3 = IRLevel().run(
        operator_context(op, op.kernel_path, tmp_path / "l3", options=build_options(target="hip:gfx942"))
    )
    options = build_options(index=triton_db, counterfactuals=0)
    l4 = SourceLevel().run(operator_context(op, op.kernel_path, tmp_path / "l4", options=options).extend(l3))
    implemented = next(e for e in l4.evidence if e.id.endswith(".pass"))
    assert implemented.source.path.startswith("third_party/amd/") and implemented.source.path.endswith(".cpp")
