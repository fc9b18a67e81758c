"""The initial kernels of operators #2–#9 compile for sm90 with Triton's real compiler (no GPU needed). The
interpreter does not type-check loop-carried values or lower anything, so this catches what it cannot."""

import importlib

import pytest
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

MINE = ["softplus", "softmax", "log_softmax", "l2_norm", "layer_norm", "rms_norm_ch", "group_norm", "batch_norm_train"]
CONSTEXPRS = {"BLOCK": 1024, "BLOCK_C": 64}


def jit_functions(name):
    module = importlib.import_module(f"suite.kernels.{name}")
    return [v for v in vars(module).values() if isinstance(v, triton.runtime.JITFunction)]


def signature(kernel):
    sig, consts = {}, {}
    for p in kernel.params:
        if p.is_constexpr:
            sig[p.name], consts[p.name] = "constexpr", CONSTEXPRS[p.name]
        elif p.name.endswith("_ptr"):
            sig[p.name] = "*fp32"
        else:
            sig[p.name] = "fp32" if p.name == "eps" else "i32"
    return sig, consts


@pytest.mark.parametrize("name", MINE)
def test_initial_kernels_compile_for_sm90(name):
    kernels = jit_functions(name)
    assert kernels, f"suite/kernels/{name}.py defines no @triton.jit kernel"
    for kernel in kernels:
        sig, consts = signature(kernel)
        compiled = triton.compile(ASTSource(kernel, sig, consts), target=GPUTarget("cuda", 90, 32))
        assert ".entry" in compiled.asm["ptx"] and compiled.asm["cubin"], kernel.__name__
