"""dot_precision: a tl.dot held to "ieee" on fp32 operands gets "tf32" / "tf32x3" in place of the keyword; the
candidates agree with the original under the interpreter (which multiplies in fp32 whatever the keyword) and
compile for cuda:90, where the original dot stays on the FMA path and the candidates' reach the tensor cores."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import triton

from irscope.capture import build_request
from irscope.capture.loader import load_module
from patterns.appliers import APPLIERS, generate
from patterns.appliers.dot_precision import set_precision
from patterns.appliers.source import SourceModule
from tests.patterns.test_appliers import touched

REPO = Path(__file__).resolve().parents[2]
KERNELS = Path(__file__).resolve().parent / "data" / "kernels"
IEEE = (KERNELS / "matmul_fp32_ieee.py").read_text()
DOT_LINE = '        acc = tl.dot(a, b, acc, input_precision="ieee")'
APPLIER = APPLIERS["dot_precision"]


def test_an_ieee_dot_gets_tf32_then_tf32x3_in_place_of_its_keyword():
    cands = generate(IEEE, "matmul_fp32_ieee.py", ["dot_precision"])
    assert [c.params for c in cands] == [{"input_precision": "tf32"}, {"input_precision": "tf32x3"}]
    for c in cands:
        p = c.params["input_precision"]
        assert touched(IEEE, c.source) == ([DOT_LINE], [DOT_LINE.replace('"ieee"', f'"{p}"')])
        assert c.card == "dot-input-precision" and "line(s) 40" in c.description
    old = IEEE.replace('input_precision="ieee"', "allow_tf32=False")
    (tf32, _) = generate(old, "x.py", ["dot_precision"])
    assert touched(old, tf32.source)[1] == ['        acc = tl.dot(a, b, acc, input_precision="tf32")']


@pytest.mark.parametrize(
    "change, reason",
    [
        ((', input_precision="ieee")', ")"), "the tl.dot at line 40 of matmul_ieee_kernel states no precision (TF32"),
        (('"ieee"', '"tf32"'), 'already asks for input_precision="tf32"'),
        (('input_precision="ieee"', "input_precision=PRECISION"), "states its precision with an expression"),
        (
            ("tl.dot(a, b, acc", "tl.dot(a.to(tl.bfloat16), b.to(tl.bfloat16), acc"),
            "its operand `a.to(tl.bfloat16)` is bfloat16, which the precision keyword does not affect",
        ),
    ],
)
def test_dots_the_keyword_would_not_speed_up_are_refused_with_the_reason(change, reason):
    mod = SourceModule(IEEE.replace(*change))
    assert not APPLIER.applies(mod)
    why = APPLIER.why_not(mod)
    assert why.startswith("dot_precision: no tl.dot asks for ieee precision on fp32 operands: ") and reason in why
    gelu = SourceModule((REPO / "suite" / "kernels" / "new_gelu.py").read_text())
    assert APPLIER.why_not(gelu) == "dot_precision: the module has no tl.dot call"


def test_set_precision_rewrites_the_dots_at_the_given_lines_only():
    mod = SourceModule(IEEE)
    assert set_precision(mod, "matmul_ieee_kernel", [12], "tf32") == (
        "input_precision='tf32' not applied: no tl.dot call of matmul_ieee_kernel at lines [12]"
    )
    assert set_precision(mod, "nope", [], "tf32").startswith("input_precision='tf32' not applied: no @triton.jit")
    made = set_precision(mod, "matmul_ieee_kernel", [40], "tf32x3")
    assert touched(IEEE, made.source)[1] == [DOT_LINE.replace('"ieee"', '"tf32x3"')]


CHECK = """
import sys, torch
from irscope.capture.loader import load_module
torch.manual_seed(0)
a, b = torch.randn(70, 45), torch.randn(45, 50)
for i, path in enumerate(sys.argv[1:]):
    c = load_module(path, f"m{i}").forward(a, b)
    print(torch.allclose(c, a @ b, rtol=1e-5, atol=1e-4))
"""


def test_the_candidates_agree_under_the_interpreter_and_reach_the_tensor_cores_on_cuda90(tmp_path):
    paths = [tmp_path / "original.py"]
    paths[0].write_text(IEEE)
    for c in generate(IEEE, "matmul_fp32_ieee.py", ["dot_precision"]):
        paths.append(tmp_path / f"{c.params['input_precision']}.py")
        paths[-1].write_text(c.source)
    env = {"PATH": os.environ["PATH"], "TRITON_INTERPRET": "1", "PYTHONPATH": str(REPO)}
    run = subprocess.run(
        [sys.executable, "-c", CHECK, *map(str, paths)], env=env, capture_output=True, text=True, timeout=300
    )
    assert run.stdout.split() == ["True"] * 3, run.stderr[-2000:]
    dots = {}
    for path in paths:
        kernel = load_module(path, f"dot_precision_{path.stem}").matmul_ieee_kernel
        args = ["*fp32", "*fp32", "*fp32", 4096, 4096, 4096, 4096, 4096, 4096]
        req = build_request(kernel, args, {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, "cuda:90")
        ttgir = triton.compile(req.source, target=req.target.to_gpu_target(), options=req.options).asm["ttgir"]
        dots[path.stem] = "warp_group_dot" in ttgir or "#mma" in ttgir
    assert dots == {"original": False, "tf32": True, "tf32x3": True}
