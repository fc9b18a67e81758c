"""On a GPU machine: `irscope.record()` around a live program records every kernel the JIT compiles, the
kernels still run correctly, and the recorded stage outputs are the ones the JIT loaded."""

import pytest
import torch

import irscope
from irscope.examples.kernels import add_kernel, matmul_kernel

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]


def test_record_live_program(tmp_path):
    x = torch.randn(98432, device="cuda")
    y = torch.randn_like(x)
    out = torch.empty_like(x)
    a = torch.randn(512, 512, device="cuda", dtype=torch.float16)
    b = torch.randn(512, 512, device="cuda", dtype=torch.float16)
    c = torch.empty(512, 512, device="cuda", dtype=torch.float16)
    with irscope.record(tmp_path) as rec:
        k1 = add_kernel[(triton_cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
        k2 = matmul_kernel[(4, 4)](
            a,
            b,
            c,
            512,
            512,
            512,
            a.stride(0),
            a.stride(1),
            b.stride(0),
            b.stride(1),
            c.stride(0),
            c.stride(1),
            BLOCK_M=128,
            BLOCK_N=128,
            BLOCK_K=64,
            num_warps=4,
            num_stages=3,
        )
        add_kernel[(triton_cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)  # cached: not again
    torch.cuda.synchronize()
    assert torch.allclose(out, x + y)
    assert torch.allclose(c.float(), a.float() @ b.float(), rtol=2e-2, atol=2e-1)
    assert [t.kernel.name for t in rec] == ["add_kernel", "matmul_kernel"]
    for traj, kernel in zip(rec, (k1, k2)):
        assert traj.stage_output("ttgir").text == kernel.asm["ttgir"]
        assert traj.stage_output("ptx").text == kernel.asm["ptx"]
        assert traj.artifacts["cubin"].data == kernel.asm["cubin"]
        assert len(list(traj.passes())) >= 60
        assert traj.resources["registers"] == kernel.n_regs
    dumps = sorted(p for p in tmp_path.iterdir() if p.is_dir())  # beside each: its hidden .NAME.lock file
    mm = irscope.load(dumps[1])
    assert mm.kernel.name == "matmul_kernel" and "wgmma.mma_async" in mm.stage_output("ptx").text


def triton_cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b
