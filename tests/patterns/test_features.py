"""Source features read from real kernel modules with `ast`."""

import json
from pathlib import Path

import pytest

from patterns.features import FEATURES, TABLE, extract

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "irscope" / "examples" / "kernels.py"
KERNELS = Path(__file__).resolve().parent / "data" / "kernels"


def line_of(path: Path, text: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if text in ln)


def test_moe_argmax_and_value_kernels_differ_where_the_paper_says():
    src = EXAMPLES.read_text()
    argmax = extract(src, constexprs={"BLOCK": 128}, kernel="moe_group_top2_argmax")
    value = extract(src, constexprs={"BLOCK": 128}, kernel="moe_group_top2_value")
    assert argmax.values["uses_argmax"] and argmax.values["index_reductions"] == 1
    assert argmax.values["mask_from_index"] and not argmax.values["stores_index"]
    assert argmax.lines["uses_argmax"] == [line_of(EXAMPLES, "i1 = tl.argmax(x, axis=0)")]
    assert argmax.lines["mask_from_index"] == [line_of(EXAMPLES, "rest = tl.where(offs == i1")]
    assert not value.values["uses_argmax"] and value.values["index_reductions"] == 0
    assert value.values["counts_maxima"] and not value.values["value_equality_mask"]
    for f in (argmax, value):
        assert f.values["tile_rank"] == 1 and f.values["tile_elements"] == 128 and not f.values["has_loop"]
        assert f.values["reductions"] == 3 and f.kernels == [f.kernels[0]]


def test_without_a_kernel_name_the_whole_module_is_read():
    whole = extract(EXAMPLES.read_text())
    assert whole.values["uses_argmax"] and whole.values["has_dot"] and whole.values["num_kernels"] == 6
    assert "tile_elements" not in whole.values  # BLOCK values unknown without a specialization or launch


def test_new_gelu_host_code():
    f = extract((REPO / "suite" / "kernels" / "new_gelu.py").read_text())
    v = f.values
    assert (v["num_kernels"], v["num_launches"], v["host_allocations"]) == (1, 1, 1)
    assert v["host_block_literal"] and v["tile_elements"] == 256 and v["input_passes"] == 1
    assert not v["has_autotune"] and not v["has_hints"] and v["scalar_loads"] == 0
    assert "launch_num_warps" not in v  # no literal num_warps at the launch: unknown, not a default


def test_multi_pass_row_kernels_count_their_passes():
    three = extract((KERNELS / "softmax_3pass.py").read_text()).values
    online = extract((KERNELS / "softmax_online.py").read_text()).values
    assert three["input_passes"] == 3 and online["input_passes"] == 2
    assert three["uses_exp"] and three["loops"] == 3 and three["host_block_literal"]
    rms = extract((KERNELS / "rms_norm_div.py").read_text()).values
    assert rms["uses_sqrt"] and rms["input_passes"] == 2 and rms["program_id_axes"] == 2


def test_strided_loads_are_told_from_tiles_with_a_contiguous_axis():
    assert extract((REPO / "suite" / "kernels" / "sum_dim1.py").read_text()).values["strided_loads"] == 1
    matmul = extract((KERNELS / "matmul_2d.py").read_text()).values
    assert matmul["strided_loads"] == 0 and matmul["tile_rank"] == 2  # rows strided, columns contiguous
    assert extract((REPO / "suite" / "kernels" / "new_gelu.py").read_text()).values["strided_loads"] == 0


def test_scan_and_chain_features():
    naive = extract((KERNELS / "cumsum_reverse_naive.py").read_text()).values
    fused = extract((KERNELS / "cumsum_reverse_fused.py").read_text()).values
    assert naive["num_kernels"] == 2 and naive["num_launches"] == 3 and naive["host_allocations"] == 3
    assert naive["scan_in_loop"] and not naive["scan_reverse"]
    assert fused["num_kernels"] == 1 and fused["scan_reverse"]
    kl = extract((KERNELS / "kl_div_naive.py").read_text()).values
    assert kl["launch_grid_one"] and kl["num_kernels"] == 3


ZOO = """
import torch
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK_M": 64})], key=["M"])
@triton.jit
def zoo(a_ptr, b_ptr, c_ptr, idx_ptr, M, N, K, stride, G: tl.constexpr, BLOCK_M: tl.constexpr,
        BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_m = tl.max_contiguous(tl.multiple_of(offs_m, BLOCK_M), BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), tl.float32)
    a_blk = tl.make_block_ptr(a_ptr, (M, K), (stride, 1), (0, 0), (BLOCK_M, BLOCK_K), (1, 0))
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_blk, boundary_check=(0, 1), eviction_policy="evict_last")
        b = tl.load(b_ptr + k * N + offs_n[None, :], cache_modifier=".cg")
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_blk = tl.advance(a_blk, (0, BLOCK_K))
    for g in range(G):
        acc += tl.load(c_ptr + g)
    for h in tl.static_range(4):
        acc += h
    row_max, where = tl.max(acc, axis=1, return_indices=True)
    tl.store(idx_ptr + offs_m, where)
    tl.atomic_add(c_ptr, tl.sum(row_max, axis=0))
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], tl.cumsum(acc, axis=1))


def forward(a, b):
    c = torch.empty((a.shape[0], b.shape[1]), device=a.device)
    zoo[lambda META: (triton.cdiv(a.shape[0], META["BLOCK_M"]),)](a, b, c, c, a.shape[0], b.shape[1], a.shape[1],
                                                                  a.stride(0), G=4, BLOCK_N=64, BLOCK_K=32,
                                                                  GROUP_M=8, num_stages=3)
    return c
"""


def test_feature_zoo():
    v = extract(ZOO, filename="zoo.py").values
    expected_true = [
        "has_autotune",
        "int64_offsets",
        "has_hints",
        "uses_block_ptr",
        "uses_eviction_policy",
        "uses_cache_modifier",
        "has_dot",
        "dot_precision_explicit",
        "constexpr_trip_loop",
        "uses_static_range",
        "stores_index",
        "has_atomic",
        "has_scan",
        "has_grouped_order",
        "scalar_loads_in_loop",
        "has_loop",
        "has_reduce",
    ]
    assert [k for k in expected_true if not v[k]] == []
    assert v["index_reductions"] == 1 and not v["uses_argmax"]
    assert v["tile_rank"] == 2 and v["loops"] == 3 and v["launch_num_stages"] == 3
    assert "launch_num_warps" not in v and v["host_block_literal"]  # BLOCK_N=64: a literal at the launch


def test_every_feature_in_the_table_is_named_once_and_described():
    assert len({f.name for f in TABLE}) == len(TABLE) == len(FEATURES)
    assert [f.name for f in TABLE if not f.description.strip() or not f.name.isidentifier()] == []


# Values and lines of every frozen kernel module, whole and per kernel, as the extractor gave them before the
# feature table replaced its single pass (made by data/make_source_features.py; the comment names the commit).
GOLDEN = json.loads((Path(__file__).resolve().parent / "data" / "source_features.json").read_text())["cases"]


@pytest.mark.parametrize("case", GOLDEN, ids=lambda c: f"{Path(c['module']).stem}:{c['kernel'] or '*'}")
def test_features_of_the_frozen_kernels_match_the_golden(case):
    path = REPO / case["module"]
    f = extract(path.read_text(), filename=path.name, kernel=case["kernel"])
    assert f.values == case["values"]
    assert f.lines == case["lines"]


def test_the_documentation_table_is_the_feature_table():
    doc = (REPO / "docs" / "patterns.md").read_text().splitlines()
    rows = [ln for ln in doc if ln.startswith("| `src.")]
    assert rows == [f"| `src.{f.name}` | {f.description} |" for f in TABLE]


def test_bad_sources_are_reported_with_their_location():
    with pytest.raises(ValueError, match=r"k\.py:2: cannot parse"):
        extract("import triton\ndef f(:\n", filename="k.py")
    with pytest.raises(ValueError, match=r"no @triton\.jit function 'nope'"):
        extract(EXAMPLES.read_text(), kernel="nope")
