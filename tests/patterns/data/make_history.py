"""Regenerates history.jsonl: a recorded ladder round history for the synthesis tests.

    .venv/bin/python tests/patterns/data/make_history.py

The kernel sources are the real modules in kernels/ (each behaves as its round says under TRITON_INTERPRET=1:
the accepted candidates match the PyTorch reference, the failed kl_div candidate returns inf); the new_gelu rounds
are the appliers' own candidates. Speedups and profile facts are illustrative test data, not measurements.
"""

import difflib
import json
from pathlib import Path

from patterns.appliers import generate

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]


def kernel(name: str) -> str:
    return (HERE / "kernels" / f"{name}.py").read_text()


MOE_NAIVE, MOE_VALUE, MOE_BLOCKED = kernel("moe_top2_naive"), kernel("moe_top2_value"), kernel("moe_top2_blocked")
SOFTMAX_3PASS, SOFTMAX_ONLINE = kernel("softmax_3pass"), kernel("softmax_online")
CUMREV_NAIVE, CUMREV_FUSED = kernel("cumsum_reverse_naive"), kernel("cumsum_reverse_fused")
KL_TWO, KL_FUSED = kernel("kl_div_naive"), kernel("kl_div_fused")
RMS_DIV, RMS_RSQRT = kernel("rms_norm_div"), kernel("rms_norm_rsqrt")
NEW_GELU = (REPO / "suite" / "kernels" / "new_gelu.py").read_text()


def diff(a, b, name):
    return "".join(difflib.unified_diff(a.splitlines(True), b.splitlines(True), f"a/{name}", f"b/{name}"))


sweep = next(c for c in generate(NEW_GELU, "new_gelu.py", ["launch_config_sweep"], 8) if c.params.get("BLOCK") == 1024)
auto = generate(sweep.source, "new_gelu.py", ["autotune"])[0]
WS_DIFF = """--- a/matmul_irregular.py
+++ b/matmul_irregular.py
@@ -31,7 +31,7 @@
     acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
-    for k in range(0, tl.cdiv(K, BLOCK_K)):
+    for k in tl.range(0, tl.cdiv(K, BLOCK_K), warp_specialize=True):
         a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
         b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])
         acc = tl.dot(a, b, acc)
"""
EVICT_DIFF = """--- a/softmax.py
+++ b/softmax.py
@@ -13,7 +13,8 @@
     for start in range(0, n_cols, BLOCK):
-        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=-float("inf"))
+        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=-float("inf"),
+                    eviction_policy="evict_last")
         m_new = tl.maximum(m, x)
"""
rounds = [
    dict(
        op="moe_group_top2",
        round=1,
        level="L3",
        rewriter="llm",
        description="Replace tl.argmax plus index mask by max, count of maxima and masked second max "
        "(value-only, tie-correct)",
        parent_source=MOE_NAIVE,
        candidate_source=MOE_VALUE,
        diff=diff(MOE_NAIVE, MOE_VALUE, "moe_group_top2.py"),
        evidence={
            "ttir.compute.reduce_index": 1,
            "ttgir.compute.reduce_index": 1,
            "ptx.sync.shuffle": 28,
            "src.uses_argmax": True,
            "l2.bottleneck": "latency",
            "l2.sol_fraction": 0.05,
        },
        speedup=1.42,
        speedup_vs_initial=1.42,
        correct=True,
        decision="accepted",
        timestamp="2026-01-12T10:02:11Z",
    ),
    dict(
        op="moe_group_top2",
        round=2,
        level="L2",
        rewriter="llm",
        description="Process BLOCK_T=8 tokens and all groups per program on a 3-D tile instead of one program "
        "per (token, group)",
        parent_source=MOE_VALUE,
        candidate_source=MOE_BLOCKED,
        diff=diff(MOE_VALUE, MOE_BLOCKED, "moe_group_top2.py"),
        evidence={
            "l2.launch_bound": False,
            "l2.bottleneck": "latency",
            "l2.num_programs": 8388608,
            "l2.sm_count": 132,
            "src.tile_elements": 32,
        },
        speedup=11.3,
        speedup_vs_initial=16.0,
        correct=True,
        decision="accepted",
        timestamp="2026-01-12T10:19:40Z",
    ),
    dict(
        op="new_gelu",
        round=1,
        level="L1",
        rewriter="mechanical",
        applier="launch_config_sweep",
        description=sweep.description,
        parent_source=NEW_GELU,
        candidate_source=sweep.source,
        diff=diff(NEW_GELU, sweep.source, "new_gelu.py"),
        evidence={"l2.bottleneck": "memory", "l2.sol_fraction": 0.61, "ptx.mem.load_vec1": 1, "ptx.mem.load_vec4": 0},
        speedup=1.27,
        speedup_vs_initial=1.27,
        correct=True,
        decision="accepted",
        timestamp="2026-01-12T11:00:05Z",
    ),
    dict(
        op="new_gelu",
        round=2,
        level="L1",
        rewriter="mechanical",
        applier="autotune",
        description=auto.description,
        parent_source=sweep.source,
        candidate_source=auto.source,
        diff=diff(sweep.source, auto.source, "new_gelu.py"),
        evidence={"l2.bottleneck": "memory", "l2.sol_fraction": 0.78},
        speedup=1.04,
        speedup_vs_initial=1.32,
        correct=True,
        decision="accepted",
        timestamp="2026-01-12T11:07:51Z",
    ),
    dict(
        op="softmax",
        round=1,
        level="L1",
        rewriter="llm",
        description="Compute the row max and the sum of exponentials in one pass with a running rescale "
        "(online softmax), keeping the write pass",
        parent_source=SOFTMAX_3PASS,
        candidate_source=SOFTMAX_ONLINE,
        diff=diff(SOFTMAX_3PASS, SOFTMAX_ONLINE, "softmax.py"),
        evidence={"src.input_passes": 3, "l2.bottleneck": "memory", "l2.sol_fraction": 0.44},
        speedup=1.31,
        speedup_vs_initial=1.31,
        correct=True,
        decision="accepted",
        timestamp="2026-01-12T12:30:00Z",
    ),
    dict(
        op="softmax",
        round=2,
        level="L2",
        rewriter="llm",
        description="Keep the first pass's row in L2 with eviction_policy=evict_last so the write pass hits L2",
        diff=EVICT_DIFF,
        evidence={"l2.bottleneck": "memory", "l2.sol_fraction": 0.58},
        speedup=0.98,
        speedup_vs_initial=1.28,
        correct=True,
        decision="rejected",
        timestamp="2026-01-12T12:41:12Z",
    ),
    dict(
        op="layer_norm",
        round=1,
        level="L2",
        rewriter="llm",
        family="split-work-across-programs",
        description="Split each of the 4 rows across 128 programs writing partial sums and sums of squares; "
        "combine them in a second kernel, normalize on the full grid",
        evidence={"l2.num_rows": 4, "l2.sm_count": 132, "l2.sol_fraction": 0.02, "l2.bottleneck": "latency"},
        speedup=24.5,
        speedup_vs_initial=24.5,
        correct=True,
        decision="accepted",
        timestamp="2026-01-13T09:12:44Z",
    ),
    dict(
        op="cumsum_reverse",
        round=1,
        level="L1",
        rewriter="llm",
        description="One kernel scanning chunks from the end of the row with tl.cumsum(reverse=True) and a "
        "carried suffix sum; no flip kernels or temporaries",
        parent_source=CUMREV_NAIVE,
        candidate_source=CUMREV_FUSED,
        diff=diff(CUMREV_NAIVE, CUMREV_FUSED, "cumsum_reverse.py"),
        evidence={"src.num_kernels": 2, "src.host_allocations": 3, "l2.bottleneck": "memory"},
        speedup=2.6,
        speedup_vs_initial=2.6,
        correct=True,
        decision="accepted",
        timestamp="2026-01-13T10:40:02Z",
    ),
    dict(
        op="kl_div",
        round=1,
        level="L1",
        rewriter="llm",
        description="Fuse the log into the partial-sum kernel and drop the log temporary",
        parent_source=KL_TWO,
        candidate_source=KL_FUSED,
        diff=diff(KL_TWO, KL_FUSED, "kl_div.py"),
        evidence={"src.num_kernels": 3, "l2.bottleneck": "memory"},
        speedup=None,
        correct=False,
        decision="failed",
        timestamp="2026-01-13T11:15:27Z",
    ),
    dict(
        op="matmul_irregular",
        round=3,
        level="L4",
        rewriter="llm",
        description="Warp-specialize the K loop (tl.range warp_specialize=True) so producer warps issue TMA "
        "loads while consumer warps run wgmma",
        diff=WS_DIFF,
        evidence={
            "ttgir.mem.tma": 2,
            "ttgir.compute.mma_wgmma": 1,
            "ttgir.control.warp_specialize": 0,
            "l2.bottleneck": "compute",
            "l2.sol_fraction": 0.42,
        },
        speedup=1.12,
        speedup_vs_initial=3.9,
        correct=True,
        decision="accepted",
        timestamp="2026-01-14T08:03:59Z",
    ),
    dict(
        op="rms_norm_ch",
        round=2,
        level="L3",
        rewriter="llm",
        description="Multiply by tl.rsqrt of the mean square instead of dividing by tl.sqrt",
        parent_source=RMS_DIV,
        candidate_source=RMS_RSQRT,
        diff=diff(RMS_DIV, RMS_RSQRT, "rms_norm_ch.py"),
        evidence={"l2.bottleneck": "memory", "l2.sol_fraction": 0.81, "ptx.compute.special": 2},
        speedup=1.0,
        speedup_vs_initial=3.1,
        correct=True,
        decision="rejected",
        timestamp="2026-01-14T09:27:31Z",
    ),
    dict(
        op="softmax",
        round=3,
        level="L1",
        rewriter="human",
        card="cache-hints",
        description="evict_first on the write pass's loads (read once) and evict_last on the first pass",
        evidence={"l2.bottleneck": "memory"},
        speedup=1.03,
        speedup_vs_initial=1.35,
        correct=True,
        decision="accepted",
        timestamp="2026-01-14T10:00:00Z",
    ),
]
with open(HERE / "history.jsonl", "w") as f:
    for r in rounds:
        f.write(json.dumps({"format": "irscope-round", "format_version": 1, **r}) + "\n")
