"""Initial Triton kernel for gemv (A @ b, b of shape (K, 1)): one program per output row, a loop over K with
BLOCK=128 bf16 loads and an fp32 accumulator vector, one reduction at the end; M=1 runs on a single SM."""

import torch
import triton
import triton.language as tl

# Triton 3.6's interpreter (TRITON_INTERPRET=1, CPU CI) truncates fp32→bf16 where the GPU rounds to nearest even;
# under the interpreter only, the output is rounded explicitly. On the GPU the branch vanishes.
INTERPRETED = tl.constexpr(triton.knobs.runtime.interpret)


@triton.jit
def to_bf16(x):
    if INTERPRETED:
        bits = x.to(tl.uint32, bitcast=True)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        x = bits.to(tl.float32, bitcast=True)
    return x.to(tl.bfloat16)


@triton.jit
def gemv_kernel(a_ptr, x_ptr, out_ptr, K, stride_am, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in range(0, K, BLOCK):
        mask = k + offs < K
        a = tl.load(a_ptr + row * stride_am + k + offs, mask=mask, other=0.0).to(tl.float32)
        x = tl.load(x_ptr + k + offs, mask=mask, other=0.0).to(tl.float32)
        acc += a * x
    tl.store(out_ptr + row, to_bf16(tl.sum(acc, axis=0)))


def forward(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    a = a.contiguous()
    b = b.contiguous()
    M, K = a.shape
    out = torch.empty((M, 1), device=a.device, dtype=torch.bfloat16)
    gemv_kernel[(M,)](a, b, out, K, a.stride(0), BLOCK=128)
    return out
