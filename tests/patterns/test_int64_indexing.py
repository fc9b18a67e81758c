"""int64_indexing: the program ids whose values a pointer offset multiplies by a run-time size become int64; the
candidates agree with the originals under the interpreter on odd, strided shapes and compile for cuda:90 with
64-bit offsets."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import triton

from irscope.capture import build_request
from irscope.capture.loader import load_module
from patterns.appliers import APPLIERS, generate
from patterns.appliers.check import check_many
from patterns.appliers.source import SourceModule
from tests.patterns.test_appliers import touched

REPO = Path(__file__).resolve().parents[2]
KERNELS = Path(__file__).resolve().parent / "data" / "kernels"
TRANSPOSE = (KERNELS / "transpose_tiles.py").read_text()
APPLIER = APPLIERS["int64_indexing"]


def test_each_program_id_scaled_by_a_stride_is_cast_where_it_is_bound():
    (c,) = generate(TRANSPOSE, "transpose_tiles.py", ["int64_indexing"])
    assert touched(TRANSPOSE, c.source) == (
        ["    pid_m = tl.program_id(0)", "    pid_n = tl.program_id(1)"],
        ["    pid_m = tl.program_id(0).to(tl.int64)", "    pid_n = tl.program_id(1).to(tl.int64)"],
    )
    assert "`rm[:, None] * stride_xm` at line 15" in c.description and c.params == {"int64_program_ids": 2}
    rows = (KERNELS / "row_l2_normalize.py").read_text()
    (c,) = generate(rows, "row_l2_normalize.py", ["int64_indexing"])
    assert touched(rows, c.source) == (["    row = tl.program_id(0)"], ["    row = tl.program_id(0).to(tl.int64)"])
    # a dot kernel: only pid_m reaches a stride (B and C are read with unit column stride, N is never a factor)
    (c,) = generate((KERNELS / "matmul_fp32_ieee.py").read_text(), "m.py", ["int64_indexing"])
    assert "pid_m = tl.program_id(0).to(tl.int64)" in c.source and "pid_n = tl.program_id(1)\n" in c.source


GATHER = """
import triton
import triton.language as tl


@triton.jit
def gather_rows_kernel(idx_ptr, x_ptr, out_ptr, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    src = tl.load(idx_ptr + row)
    cols = tl.arange(0, BLOCK)
    tl.store(out_ptr + row * BLOCK + cols, tl.load(x_ptr + src * stride + cols))
"""


@pytest.mark.parametrize(
    "source, reason",
    [
        (
            (REPO / "suite" / "kernels" / "new_gelu.py").read_text(),
            "no load/store address of new_gelu_kernel multiplies its program id (pid) or a value derived from it by "
            "a run-time size argument",
        ),
        (GATHER, "no load/store address of gather_rows_kernel multiplies its program id (row)"),  # only via a load
        (
            TRANSPOSE.replace("tl.program_id(0)", "tl.program_id(0).to(tl.int64)").replace(
                "tl.program_id(1)", "tl.program_id(1).to(tl.int64)"
            ),
            "transpose_kernel already binds an int64 program id (line 10)",
        ),
        (
            TRANSPOSE.replace("rm[:, None] * stride_xm", "rm[:, None].to(tl.int64) * stride_xm")
            .replace("rn[None, :] * stride_xn", "rn[None, :].to(tl.int64) * stride_xn")
            .replace("rn[None, :] * stride_om", "rn[None, :].to(tl.int64) * stride_om"),
            "(products by constexprs only, or already int64)",
        ),
    ],
)
def test_kernels_without_a_program_id_times_a_runtime_size_are_refused(source, reason):
    mod = SourceModule(source)
    assert not APPLIER.applies(mod)
    why = APPLIER.why_not(mod)
    assert why.startswith("int64_indexing: ") and reason in why, why


CHECK = """
import sys, torch
from irscope.capture.loader import load_module
torch.manual_seed(0)
x = torch.randn(45, 37).t()  # 37 × 45, strided
original, candidate = load_module(sys.argv[1], "orig"), load_module(sys.argv[2], "cand")
print(torch.equal(candidate.forward(x), original.forward(x)) and torch.equal(candidate.forward(x), x.t()))
"""


def test_the_transpose_candidate_agrees_under_the_interpreter_and_compiles_with_64_bit_offsets(tmp_path):
    (orig := tmp_path / "original.py").write_text(TRANSPOSE)
    (cand := tmp_path / "candidate.py").write_text(generate(TRANSPOSE, "t.py", ["int64_indexing"])[0].source)
    env = {"PATH": os.environ["PATH"], "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO)}
    run = subprocess.run(
        [sys.executable, "-c", CHECK, str(orig), str(cand)], env=env, capture_output=True, text=True, timeout=300
    )
    assert run.stdout.split() == ["True"], run.stderr[-2000:]
    ttir = {}
    for path in (orig, cand):
        kernel = load_module(path, f"int64_{path.stem}").transpose_kernel
        req = build_request(kernel, ["*fp32", "*fp32", 4097, 4099, 4099, 1, 4097], {"BLOCK": 16}, "cuda:90")
        ttir[path.stem] = triton.compile(req.source, target=req.target.to_gpu_target(), options=req.options).asm["ttir"]
    # the program id is sign-extended and the row offsets multiply in 64 bits only in the candidate
    assert "arith.extsi" not in ttir["original"] and "arith.muli" in ttir["original"]
    assert "tensor<16x1xi64>" in ttir["candidate"] and "tensor<16x1xi64>" not in ttir["original"]


def test_suite_candidates_are_correct_and_compile_for_cuda90(tmp_path):
    items = [
        (op, op, generate((REPO / "suite" / "kernels" / f"{op}.py").read_text(), op, ["int64_indexing"])[0].source)
        for op in ("softmax", "matmul_irregular", "gemv", "moe_grouped_topk")
    ]
    results = check_many(items, cache_dir=tmp_path / "triton-cache")
    assert {cid: r.failures()[:1] for cid, r in results.items() if not r.ok} == {}
    assert all(r.correct and r.compiles for r in results.values())
