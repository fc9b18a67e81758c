"""row_in_registers: a multi-pass row kernel gets a one-pass twin for rows that fit in registers. Detection and
refusals, the exact shape of the rewrite, and correctness under the interpreter on both sides of LIMIT (own
kernels: against the original module on odd sizes with NaN and -inf rows; suite kernels: check_candidates, which
also compiles every launch for cuda:90)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import triton

from irscope.capture import TensorSpec, build_request
from irscope.capture.loader import load_module
from patterns.appliers import APPLIERS, generate
from patterns.appliers.check import check_many
from patterns.appliers.row_in_registers import LIMITS, RowInRegisters, rewrite
from patterns.appliers.source import SourceModule

REPO = Path(__file__).resolve().parents[2]
KERNELS = Path(__file__).resolve().parent / "data" / "kernels"
APPLIER = RowInRegisters()
OWN = ["row_meanvar_two_pass", "softmax_renamed", "rms_norm_two_pass", "softmax_online_scalar"]
SMALL_LIMIT = 40  # below the 300-wide rows of the interpreter check: those take the looped launch


def module(name: str) -> SourceModule:
    return SourceModule((KERNELS / f"{name}.py").read_text(), f"{name}.py")


def test_registered_and_named_by_the_one_pass_cards():
    assert APPLIERS["row_in_registers"] is not None
    for card in ("row-in-registers", "online-softmax", "welford-one-pass"):
        text = (REPO / "patterns" / "cards" / f"{card}.md").read_text()
        assert "appliers: [row_in_registers]" in text, card


@pytest.mark.parametrize("name", OWN)
def test_applies_to_multi_pass_row_kernels(name):
    mod = module(name)
    assert APPLIER.why_not(mod) is None
    cands = APPLIER.candidates(mod)
    assert [c.params["LIMIT"] for c in cands] == list(LIMITS)
    assert len(generate(mod.text, name, ["row_in_registers"], max_candidates=1)) == 1


@pytest.mark.parametrize(
    "name, reason",
    [
        ("scratch_readback", "center_scale_kernel (line 20): a store before the last pass is read back (line 24)"),
        # the vector online softmax rescales lane-wise: its lanes depend on BLOCK
        ("softmax_online", "softmax_kernel (line 18): carried `s` is not a sum, max/min or online-softmax accumulator"),
        ("rms_norm_div", "rms_kernel (line 13): a loop that is not a top-level `for start in range(0, N, BLOCK)` pass"),
        ("kl_div_naive", "sum_kernel: 1 loop(s); a multi-pass row kernel loops over the row 2 or more times"),
    ],
)
def test_near_misses_are_refused_with_the_failed_precondition(name, reason):
    mod = module(name)
    assert not APPLIER.applies(mod)
    assert reason in (APPLIER.why_not(mod) or "")


def test_refuses_a_carried_value_used_inside_the_pass():
    # a running sum stored lane by lane: the stored prefix depends on how the row is chunked
    src = (KERNELS / "rms_norm_two_pass.py").read_text()
    bad = src.replace(
        "        acc += x * x\n", "        acc += x * x\n        tl.store(y_ptr + cols, acc, mask=cols < n_cols)\n"
    )
    why = APPLIER.why_not(SourceModule(bad))
    assert why is not None and "`acc` (carried) is read outside an accumulator update" in why
    chunky = src.replace("acc += x * x", "acc = acc * 0.5 + x * x")
    why = APPLIER.why_not(SourceModule(chunky))
    assert why is not None and "carried `acc` is not a sum, max/min or online-softmax accumulator" in why


def test_the_rewrite_of_the_suite_softmax():
    src = (REPO / "suite" / "kernels" / "softmax.py").read_text()
    out, desc, params = rewrite(SourceModule(src), 16384)
    assert src.split("\n\n\ndef forward")[0] in out  # the looped kernel is unchanged
    twin = out.split("@triton.jit\ndef softmax_kernel_one_pass")[1].split("\n\n\n")[0]
    body = [ln.strip() for ln in twin.splitlines()[1:]]
    assert "for " not in twin and "BLOCK_N: tl.constexpr" in twin
    # one load of the row; the later passes use the tile (same other=, so no tl.where)
    assert body.count('_row_tile0 = tl.load(x_row + offs, mask=offs < n_cols, other=-float("inf"))') == 1
    assert twin.count("tl.load") == 1 and body.count("x = _row_tile0") == 3
    assert body.count("start = 0  # the row is one tile of BLOCK_N >= N lanes: this pass runs once") == 3
    assert "row_max = tl.maximum(row_max, tl.max(x, axis=0))" in body  # accumulators verbatim
    host = out.split("def forward")[1]
    assert "    _n_row = N\n    if 0 < _n_row <= 16384:" in host
    assert "softmax_kernel_one_pass[(M,)](x, out, N, BLOCK_N=_block_n, num_warps=4 if _block_n <= 2048" in host
    assert "    else:\n        softmax_kernel[(M,)](x, out, N, BLOCK=1024)\n" in host
    assert params == {"LIMIT": 16384, "reused_loads": [22, 27]} and "lines 15, 20, 24" in desc


def test_a_reload_with_another_other_is_a_where_on_the_tile():
    out, _, _ = rewrite(module("softmax_renamed"), 8192)
    assert "    v = tl.where(keep, _row_tile0, 0.0).to(tl.float32)\n" in out  # pass 3 loaded with other=0.0
    assert "    v = _row_tile0.to(tl.float32)\n" in out  # the dtype cast of each pass stays
    assert "num_warps=4 if _block_n <= 2048 else 8)" in out  # LIMIT 8192 never needs 16 warps
    host = rewrite(SourceModule((REPO / "suite" / "kernels" / "group_norm.py").read_text()), 16384)[0]
    assert "    _n_row = C // groups * (H * W)\n" in host  # the kernel's group_len = (C // G) * HW on the host


def test_the_twin_of_an_autotuned_kernel_leaves_its_warps_to_the_configs():
    """A launch of an autotuned kernel that names num_warps raises TypeError (the autotuner passes its config's
    too): every such candidate was rejected on an H100 after a tuning round had added @triton.autotune."""
    src = (REPO / "suite" / "kernels" / "softmax.py").read_text()
    tuned = src.replace(
        "@triton.jit\ndef softmax_kernel",
        '@triton.autotune(configs=[triton.Config({}, num_warps=4), triton.Config({}, num_warps=8)], key=["n_cols"])\n'
        "@triton.jit\ndef softmax_kernel",
    )
    assert tuned != src
    out, _, _ = rewrite(SourceModule(tuned), 16384)
    host = out.split("def forward")[1]
    assert "softmax_kernel_one_pass[(M,)](x, out, N, BLOCK_N=_block_n)\n" in host and "num_warps" not in host
    twin = out.split("def softmax_kernel_one_pass")[0].rsplit("\n\n\n", 1)[1]
    assert twin.startswith("@triton.autotune(")  # the twin keeps the configs that now give its warps
    untuned, _, _ = rewrite(SourceModule(src), 16384)
    assert "num_warps=4 if _block_n <= 2048" in untuned.split("def forward")[1]


INTERPRET = r"""
import sys, torch
from irscope.capture.loader import load_module
for job in sys.argv[1:]:
    name, *paths = job.split(",")
    base, cands = load_module(paths[0], "base"), [load_module(p, f"c{i}") for i, p in enumerate(paths[1:])]
    torch.manual_seed(0)
    for rows, n in [(3, 7), (4, 33), (3, 300)]:
        x = torch.randn(rows, n) * 3
        x[0, n // 2] = float("nan")
        if "softmax" in name:
            x[1] = float("-inf")
            x[2, 1] = float("-inf")
        args = {"row_meanvar_two_pass": [x.half()], "softmax_renamed": [x.bfloat16()]}.get(name, [x])
        if name == "rms_norm_two_pass":
            args.append(torch.randn(n))
        want = base.forward(*args)
        for c in cands:
            got = c.forward(*args)
            assert got.dtype == want.dtype and got.shape == want.shape, name
            tol = 2e-2 if got.dtype == torch.bfloat16 else 1e-5
            torch.testing.assert_close(got.float(), want.float(), rtol=tol, atol=1e-5, equal_nan=True, msg=name)
print("ok")
"""


def test_own_kernels_agree_with_the_original_on_both_paths(tmp_path):
    """Rows of 7 and 33 take the twin; rows of 300 take it at LIMIT 16384 and the looped launch at SMALL_LIMIT.
    One interpreter process for all kernels (torch and triton import once)."""
    jobs = []
    for name in OWN:
        paths = [str(KERNELS / f"{name}.py")]
        for limit in (LIMITS[0], SMALL_LIMIT):
            p = tmp_path / f"{name}_{limit}.py"
            p.write_text(rewrite(module(name), limit)[0])
            paths.append(str(p))
        jobs.append(",".join([name, *paths]))
    env = {"PATH": os.environ["PATH"], "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO)}
    run = subprocess.run([sys.executable, "-c", INTERPRET, *jobs], env=env, capture_output=True, text=True, timeout=300)
    assert run.stdout.strip() == "ok", run.stderr[-3000:]


def test_own_twin_compiles_for_cuda90(tmp_path):
    p = tmp_path / "online.py"
    p.write_text(rewrite(module("softmax_online_scalar"), LIMITS[0])[0])
    mod = load_module(p, "online_twin")
    req = build_request(
        mod.online_softmax_kernel_one_pass,
        [TensorSpec("fp32"), TensorSpec("fp32"), 3000],
        {"BLOCK_N": 4096, "num_warps": 8},
        "cuda:90",
    )
    compiled = triton.compile(req.source, target=req.target.to_gpu_target(), options=req.options)
    assert "ptx" in compiled.asm and compiled.asm["ptx"].count("ld.global") >= 1


# LIMIT 1100 splits every one of these operators' two small cases between the twin and the looped launch
SUITE_OPS = ["softmax", "log_softmax", "layer_norm", "l2_norm", "cross_entropy", "group_norm", "triplet_margin"]


def test_suite_kernels_are_correct_and_compile_on_both_paths(tmp_path):
    items = []
    for op in SUITE_OPS:
        mod = SourceModule((REPO / "suite" / "kernels" / f"{op}.py").read_text(), f"{op}.py")
        assert APPLIER.applies(mod), op
        items.append((op, op, rewrite(mod, 1100)[0]))
    results = check_many(items, cache_dir=tmp_path / "triton-cache")
    assert {cid: r.failures()[:2] for cid, r in results.items() if not r.ok} == {}
    for op, r in results.items():
        kernels = {c["kernel"] for c in r.compiled}
        assert any(k.endswith("_one_pass") for k in kernels) and any(not k.endswith("_one_pass") for k in kernels), op
