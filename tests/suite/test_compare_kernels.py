"""suite.compare_kernels against suite.compare's torch passes, element rule for element rule: run in Triton's
interpreter on the CPU (a child process, since the interpreter is chosen when the kernels are defined)."""

import json
import subprocess
import sys

import pytest

from irscope.childproc import REPO_ROOT

SCRIPT = r"""
import json, math, torch
from suite import compare, compare_kernels

BLOCK = compare_kernels.BLOCK
cases = {}

def case(name, o, r, atol=1e-5, rtol=1e-4):
    fused = compare_kernels.finite_stats(o, r), compare_kernels.tolerance_stats(o, r, atol, rtol)
    plain = compare._finite_stats(o, r), compare._tolerance_stats(o, r, atol, rtol)
    cases[name] = {"fused": fused, "plain": plain}

g = torch.Generator().manual_seed(0)
r = torch.randn(7 * BLOCK + 13, generator=g)  # several blocks per program, and a ragged tail
case("identical", r.clone(), r)
o = r.clone(); o[5] += 1e-2; o[6 * BLOCK + 2] -= 5e-2; o[BLOCK] += 1e-6
case("two over the limit, one under", o, r)
o = r.clone(); o[3] = float("nan"); o[4000] = float("nan")
rn = r.clone(); rn[3] = float("nan")
case("a NaN where the reference has none", o, rn)
ri = r.clone(); ri[10] = float("inf"); ri[11] = -float("inf")
oi = ri.clone(); oi[11] = float("inf"); oi[12] = float("inf")
case("infinities in the wrong sign and place", oi, ri)
case("infinities that match", ri.clone(), ri)
case("bf16 output, fp32 oracle", r.to(torch.bfloat16), r, atol=2e-2, rtol=2e-2)
case("fp16 output, fp64 oracle", r.to(torch.float16), r.double(), atol=1e-3, rtol=1e-3)
case("shorter than a block", r[:100].clone() * 1.001, r[:100])
case("all non-finite", torch.full((50,), float("nan")), torch.full((50,), float("nan")))
print(json.dumps(cases))
"""


def test_the_fused_passes_give_the_torch_passes_figures():
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO_ROOT,
        env={"TRITON_INTERPRET": "1", "PATH": "/usr/bin:/bin", "HOME": "/tmp"},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    cases = json.loads(out.stdout)
    for name, got in cases.items():
        (f_nan, f_inf, f_scale, f_count), f_tol = got["fused"]
        (p_nan, p_inf, p_scale, p_count), p_tol = got["plain"]
        assert (f_nan, f_inf, f_scale, f_count) == (p_nan, p_inf, p_scale, p_count), name
        if f_nan or f_inf:  # suite.compare stops after the first pass: the second never sees such outputs
            continue
        bad, max_diff, err_sq, ref_sq, top, value, expected = f_tol
        assert (bad, max_diff, top) == (p_tol[0], p_tol[1], p_tol[4]), name
        assert abs(err_sq - p_tol[2]) <= 1e-9 * max(p_tol[2], 1e-300) and abs(ref_sq - p_tol[3]) <= 1e-9 * p_tol[3], (
            name
        )
        if bad:  # the worst element's values (ties aside, the same element)
            assert (value, expected) == (p_tol[5], p_tol[6]), name
    assert cases["two over the limit, one under"]["fused"][1][0] == 2
    assert cases["a NaN where the reference has none"]["fused"][0][0] == 1
    assert cases["infinities in the wrong sign and place"]["fused"][0][1] == 2
    assert cases["all non-finite"]["fused"][0][3] == 0


@pytest.mark.parametrize(
    ("out", "ref", "n"), [("fp32", "fp32", "i32"), ("bf16", "fp32", "i64"), ("fp16", "fp64", "i32")]
)
def test_the_kernels_compile_for_the_h100_and_h200(out, ref, n):
    """Triton's real compiler for cuda:90, through ptxas: what the GPU judge launches (no GPU needed to compile)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from suite import compare_kernels as ck

    target = GPUTarget("cuda", 90, 32)
    common = {"o_ptr": f"*{out}", "r_ptr": f"*{ref}", "n": n}
    finite = {**common, "out_ptr": "*fp64", "BLOCK": "constexpr"}
    tolerance = {**common, "limits_ptr": "*fp64", "out_ptr": "*fp64", "index_ptr": "*i64", "BLOCK": "constexpr"}
    for kernel, signature in ((ck._finite_pass, finite), (ck._tolerance_pass, tolerance)):
        compiled = triton.compile(ASTSource(kernel, signature, constexprs={"BLOCK": ck.BLOCK}), target=target)
        assert compiled.asm["cubin"] and "f64" in compiled.asm["ptx"]
