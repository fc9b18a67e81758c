"""Initial Triton kernel for pointwise_conv (1×1 convolution, NCHW): per batch image, out (Cout × HW) =
W (Cout × Cin) @ X (Cin × HW) with tl.dot on fixed 32×32×32 tiles, reading X as (Cin, HW); no swizzle,
num_stages=1, masks on every edge, fp32 accumulation, bf16 output."""

import torch
import triton
import triton.language as tl

# Triton 3.6's interpreter (TRITON_INTERPRET=1, CPU CI) multiplies the raw bit patterns of bf16 tl.dot operands
# (triton-lang/triton#11584) and truncates fp32→bf16 where the GPU rounds to nearest even. Under the interpreter
# only, the operands are upcast (exactly) and the output is rounded explicitly; on the GPU both branches vanish.
INTERPRETED = tl.constexpr(triton.knobs.runtime.interpret)


@triton.jit
def to_bf16(x):
    if INTERPRETED:
        bits = x.to(tl.uint32, bitcast=True)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        x = bits.to(tl.float32, bitcast=True)
    return x.to(tl.bfloat16)


@triton.jit
def pointwise_conv_kernel(x_ptr, w_ptr, out_ptr, C_IN, C_OUT, HW,
                          BLOCK_CO: tl.constexpr, BLOCK_HW: tl.constexpr, BLOCK_CI: tl.constexpr):
    pid = tl.program_id(0)
    n = tl.program_id(1)
    num_pid_hw = tl.cdiv(HW, BLOCK_HW)
    pid_co = pid // num_pid_hw
    pid_hw = pid % num_pid_hw
    offs_co = pid_co * BLOCK_CO + tl.arange(0, BLOCK_CO)
    offs_hw = pid_hw * BLOCK_HW + tl.arange(0, BLOCK_HW)
    offs_ci = tl.arange(0, BLOCK_CI)
    w_ptrs = w_ptr + offs_co[:, None] * C_IN + offs_ci[None, :]
    x_ptrs = x_ptr + n * C_IN * HW + offs_ci[:, None] * HW + offs_hw[None, :]
    acc = tl.zeros((BLOCK_CO, BLOCK_HW), dtype=tl.float32)
    for ci in range(0, C_IN, BLOCK_CI):
        ci_left = C_IN - ci
        w = tl.load(w_ptrs, mask=(offs_co[:, None] < C_OUT) & (offs_ci[None, :] < ci_left), other=0.0)
        x = tl.load(x_ptrs, mask=(offs_ci[:, None] < ci_left) & (offs_hw[None, :] < HW), other=0.0)
        if INTERPRETED:
            w = w.to(tl.float32)
            x = x.to(tl.float32)
        acc = tl.dot(w, x, acc)
        w_ptrs += BLOCK_CI
        x_ptrs += BLOCK_CI * HW
    out_ptrs = out_ptr + n * C_OUT * HW + offs_co[:, None] * HW + offs_hw[None, :]
    tl.store(out_ptrs, to_bf16(acc), mask=(offs_co[:, None] < C_OUT) & (offs_hw[None, :] < HW))


def forward(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    w = w.contiguous()
    N, C_IN, H, W = x.shape
    C_OUT = w.shape[0]
    HW = H * W
    out = torch.empty((N, C_OUT, H, W), device=x.device, dtype=torch.bfloat16)
    BLOCK = 32
    grid = (triton.cdiv(C_OUT, BLOCK) * triton.cdiv(HW, BLOCK), N)
    pointwise_conv_kernel[grid](x, w, out, C_IN, C_OUT, HW, BLOCK_CO=BLOCK, BLOCK_HW=BLOCK, BLOCK_CI=BLOCK,
                                num_stages=1)
    return out
