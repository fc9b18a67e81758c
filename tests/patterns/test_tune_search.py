"""The tuning search's static space: every knob of the launch, a shared BLOCK split per grid extent only where the
kernel proves the pairing, the GEMM space for role-named dot tiles; correct candidates that compile."""

from pathlib import Path

import pytest

from patterns.appliers import APPLIERS
from patterns.appliers.check import check_candidates
from patterns.appliers.source import SourceModule
from patterns.appliers.tune_search import DOT_SPACE, MAX_SPACE, TuneSearch, tune_module

REPO = Path(__file__).resolve().parents[2]
KERNELS = Path(__file__).resolve().parent / "data" / "kernels"


def search(path: Path):
    [cand] = TuneSearch().candidates(SourceModule(path.read_text()))
    return cand


def meta_lines(source: str) -> list[str]:
    return [ln.strip() for ln in source.splitlines() if "META[" in ln]


def test_a_block_shared_by_three_gemm_tiles_is_split_where_the_kernel_pairs_each_with_its_extent():
    cand = search(KERNELS / "matmul_one_block.py")
    space = cand.params["space"]
    # the base's own config first: BLOCK=32 for all three, the launch's default warps and stages
    assert space[0] == {"kwargs": {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}, "num_warps": 4, "num_stages": 3}
    # then the GEMM space, in its order: the tile roles come from the names, the pairing from `rows < M`
    m, n, k, w, s = DOT_SPACE[0]
    assert space[1] == {"kwargs": {"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k}, "num_warps": w, "num_stages": s}
    assert len(space) == 1 + len(DOT_SPACE)
    assert meta_lines(cand.source)[-1].startswith(
        'mm_kernel[lambda META: ((triton.cdiv(M, META["BLOCK_M"]) * triton.cdiv(N, META["BLOCK_N"]),))]'
    )
    assert cand.params["grouped"] and "_g_group_id" in cand.source  # the dot kernel in grouped program order
    assert "BLOCK = 32" not in cand.source and "BLOCK_M=BLOCK" not in cand.source
    assert cand.params["key"] == ["M", "N", "K", "sxm", "syk", "szm"]


def test_a_flat_tile_count_keeps_a_shared_block_tied():
    cand = search(KERNELS / "tile_add_flat_grid.py")
    space = cand.params["space"]
    assert all(c["kwargs"]["BLOCK_R"] == c["kwargs"]["BLOCK_C"] for c in space)
    assert {c["kwargs"]["BLOCK_R"] for c in space} > {32}  # the tied knob still moves
    # a tied 32×32 tile holds 1024 elements: 16 warps would leave half the lanes idle, so it is not in the space
    assert all(32 * c["num_warps"] <= c["kwargs"]["BLOCK_R"] ** 2 for c in space)
    assert not cand.params["grouped"]
    assert meta_lines(cand.source) == [
        'add_kernel[lambda META: ((triton.cdiv(R * C, META["BLOCK_R"] * META["BLOCK_R"]) + '
        'triton.cdiv(R + C, META["BLOCK_R"]),))]('
    ]


def test_a_kernel_without_block_knobs_still_searches_warps_and_stages():
    src = (REPO / "suite" / "kernels" / "sum_dim1.py").read_text()  # BLOCK computed from D1 at run time
    [cand] = TuneSearch().candidates(SourceModule(src))
    assert all(c["kwargs"] == {} for c in cand.params["space"])
    assert {c["num_warps"] for c in cand.params["space"]} == {1, 2, 4, 8, 16}
    assert {c["num_stages"] for c in cand.params["space"]} == {1, 2, 3, 4}
    assert len(cand.params["space"]) <= MAX_SPACE


def test_why_not_names_the_launch_and_the_reason():
    src = (REPO / "suite" / "kernels" / "new_gelu.py").read_text()
    tuned = APPLIERS["autotune"].candidates(SourceModule(src))[0].source
    why = TuneSearch().why_not(SourceModule(tuned))
    assert why is not None and why.startswith("tune_search: no launch to search: new_gelu_kernel (line")
    assert why.endswith("): already autotuned")
    twice = src.replace("    return out", "    new_gelu_kernel[(1,)](x, out, n, BLOCK=BLOCK)\n    return out")
    why = TuneSearch().why_not(SourceModule(twice))
    assert why is not None and "the kernel is launched more than once" in why and "(line 24)" in why


def test_tune_module_renders_a_subset_and_refuses_an_unknown_kernel():
    src = (KERNELS / "matmul_one_block.py").read_text()
    space = search(KERNELS / "matmul_one_block.py").params["space"]
    one = tune_module(src, "mm_kernel", space[1:2])
    assert one.count("triton.Config(") == 1 and '"BLOCK_N": 256' in one
    with pytest.raises(ValueError, match="no_such_kernel has no launch the search can tune"):
        tune_module(src, "no_such_kernel", space)


def test_a_searched_suite_gemm_is_correct_under_the_interpreter_and_compiles_every_config():
    src = (REPO / "suite" / "kernels" / "matmul_transposed_b.py").read_text()
    [cand] = TuneSearch().candidates(SourceModule(src))
    # the base config and a non-square wgmma tile (BLOCK_N ≠ BLOCK_M): the split grid must still cover C
    configs = [cand.params["space"][0], {"kwargs": {"BLOCK_M": 32, "BLOCK_N": 64, "BLOCK_K": 16}, "num_warps": 4}]
    result = check_candidates("matmul_transposed_b", [("search", tune_module(src, "matmul_kernel", configs))])
    assert result["search"].ok, result["search"].failures()
    assert len(result["search"].compiled) == 2


def test_a_knob_read_by_another_launch_keyword_is_not_autotuned_away():
    """A program-axis-tiled kernel passes `BLOCK=max(min(BLOCK, 16), BLOCK // _pa_lift)` beside `BLOCK_COL=_pa_lift`:
    autotuning BLOCK_COL would drop `_pa_lift = 32` while that keyword still reads it (a NameError on the GPU)."""
    src = (REPO / "suite" / "kernels" / "sum_dim1.py").read_text()
    [tiled] = [c for c in APPLIERS["program_axis_tile_cols"].candidates(SourceModule(src)) if "= 32" in c.source]
    mod = SourceModule(tiled.source)
    assert "BLOCK // _pa_lift" in tiled.source.replace("(BLOCK) // _pa_lift", "BLOCK // _pa_lift")
    for name in ("autotune", "tune_search"):
        for cand in APPLIERS[name].candidates(mod):
            assert "_pa_lift = 32" in cand.source or "_pa_lift" not in cand.source.split("def forward")[1]
    why = APPLIERS["autotune"].why_not(mod)
    assert why is not None and "_pa_lift is used outside the grid and its BLOCK keywords" in why
