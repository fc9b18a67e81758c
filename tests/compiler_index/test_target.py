"""Does a gate apply to a target: guards evaluated on capability, MMA version and ISA family, unknown otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler_index import queries as q
from compiler_index.target import NO, UNKNOWN, YES, file_applies, guards_hold
from irscope.targets import Target, TargetError

SM90, SM100, SM80, MI300 = Target.parse("cuda:90"), Target.parse("sm_100a"), Target.parse("80"), Target.parse("gfx942")


@pytest.mark.parametrize(
    ("guards", "target", "expected"),
    [
        ([], SM90, YES),
        (["computeCapability < 80"], SM90, NO),
        (["computeCapability >= 80", "!(computeCapability >= 100)"], SM90, YES),
        (["(computeCapability) / 10 != 10"], SM100, NO),
        # sm_90 tries MMA v3 and falls back to v2: version 5 never, version 3 maybe
        (["version == 5"], SM90, NO),
        (["bits == 64", "version == 5"], SM90, NO),  # an unknown guard does not save a false one
        (["version == 3"], SM90, UNKNOWN),
        (["!(mmaResult.versionMajor >= 1 && mmaResult.versionMajor <= 3)"], SM90, NO),
        (["!(mmaResult.versionMajor >= 1 && mmaResult.versionMajor <= 3)"], SM100, UNKNOWN),
        (["nvmmaEnc.isHopper()"], SM80, NO),
        (["!nvmmaEnc || !nvmmaEnc.isHopper()"], SM80, YES),  # `nvmmaEnc` is unknown, the other side true
        (["!nvmmaEnc && !nvmmaEnc.isHopper()"], SM80, UNKNOWN),
        (["kWidth == 0 && (parentAttr.isAmpere() || parentAttr.isHopper())"], SM80, UNKNOWN),
        (["parentAttr.isAmpere() || parentAttr.isHopper()"], SM80, YES),
        # AMD ISA families
        (["isCDNA(targetInfo.getISAFamily())"], MI300, YES),
        (["targetInfo.getISAFamily() == AMD::ISAFamily::CDNA4"], MI300, NO),
        (["getISAFamily() != ISAFamily::CDNA4"], MI300, YES),
        (["isCDNA(getISAFamily())"], SM90, NO),
        (["targetInfo->getISAFamily() == ISAFamily::CDNA3"], MI300, YES),
        # what is not about the target stays unknown, templates and calls included
        (["llvm::isa<Float8E5M2Type, Float8E4M3FNType>(aElemTy)"], SM90, UNKNOWN),
        (["auto kind = matchReduxKind(op, computeCapability)"], SM90, UNKNOWN),
        (["x ? computeCapability : 0"], SM90, UNKNOWN),
    ],
)
def test_guards_hold(guards, target, expected):
    assert guards_hold(guards, target) == expected


def test_targets_and_files():
    assert (SM90.mma_versions, SM100.mma_versions, SM80.mma_versions) == ((3, 2), (5, 2), (2,))
    families = [Target.parse(a).isa_family for a in ("hip:gfx942", "gfx950", "gfx1100", "gfx1250", "gfx803")]
    assert families == ["CDNA3", "CDNA4", "RDNA3", "GFX1250", "Unknown"]
    assert str(SM100) == "cuda:100" and str(MI300) == "hip:gfx942"
    with pytest.raises(TargetError, match="expected cuda:CC"):
        Target.parse("volta")
    assert not file_applies("third_party/amd/lib/TritonAMDGPUToLLVM/LoadStoreOpToLLVM.cpp", SM90)
    assert not file_applies("third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/DotOpToLLVM.cpp", MI300)
    assert file_applies("lib/Dialect/TritonGPU/Transforms/AccelerateMatmul.cpp", MI300)


def test_conditions_for_a_target_on_the_corpus(corpus_db: Path):
    every = q.conditions(corpus_db, "checkTarget")
    sm90 = q.conditions(corpus_db, "checkTarget", target="cuda:90")
    kept = {(g.kind, g.condition, g.applies) for g in sm90.gates}
    # sm_80 and up, below sm_100, MMA v3/v2: only the loop's failure may fire
    assert kept == {("failure", "stage > 2", UNKNOWN)}
    assert sm90.notes == [f"{len(every.gates) - 1} gates left out: their guards contradict cuda:90"]
    sm100 = {(g.kind, g.condition) for g in q.conditions(corpus_db, "checkTarget", target="cuda:100").gates}
    assert sm100 == {("failure", "versionMajor != 5")}  # v2 fallback: it may fire
    mma = q.conditions(corpus_db, "supportMMA", target="sm_90")
    assert all("version == 5" not in g.guards for g in mma.gates)
    assert ("return-expr", "allowTf32 && version >= 2") in {(g.kind, g.expr) for g in mma.gates}
