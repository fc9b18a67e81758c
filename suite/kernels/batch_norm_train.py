"""Initial Triton kernels for batch_norm_train. Kernel A: one program per channel loops over the N samples and
the H·W plane in chunks of BLOCK=1024, two passes (mean, then biased variance of x - mean), and stores mean and
1/std. Kernel B: elementwise normalize over numel with BLOCK=1024. No autotune."""

import torch
import triton
import triton.language as tl


@triton.jit
def channel_stats_kernel(x_ptr, mean_ptr, rstd_ptr, N, C, HW, eps, BLOCK: tl.constexpr):
    c = tl.program_id(0)
    count = N * HW
    total = 0.0
    for n in range(0, N):
        plane = x_ptr + (n * C + c) * HW
        for start in range(0, HW, BLOCK):
            offs = start + tl.arange(0, BLOCK)
            x = tl.load(plane + offs, mask=offs < HW, other=0.0)
            total += tl.sum(x, axis=0)
    mean = total / count
    total_sq = 0.0
    for n in range(0, N):
        plane = x_ptr + (n * C + c) * HW
        for start in range(0, HW, BLOCK):
            offs = start + tl.arange(0, BLOCK)
            mask = offs < HW
            x = tl.load(plane + offs, mask=mask, other=0.0)
            d = tl.where(mask, x - mean, 0.0)
            total_sq += tl.sum(d * d, axis=0)
    tl.store(mean_ptr + c, mean)
    tl.store(rstd_ptr + c, 1.0 / tl.sqrt(total_sq / count + eps))


@triton.jit
def normalize_kernel(x_ptr, mean_ptr, rstd_ptr, w_ptr, b_ptr, out_ptr, n_elements, C, HW, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    c = (offs // HW) % C
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    mean = tl.load(mean_ptr + c, mask=mask, other=0.0)
    rstd = tl.load(rstd_ptr + c, mask=mask, other=0.0)
    w = tl.load(w_ptr + c, mask=mask, other=0.0)
    b = tl.load(b_ptr + c, mask=mask, other=0.0)
    tl.store(out_ptr + offs, (x - mean) * rstd * w + b, mask=mask)


def forward(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    x, w, b = x.contiguous(), w.contiguous(), b.contiguous()
    N, C, H, W = x.shape
    mean = torch.empty((C,), device=x.device, dtype=torch.float32)
    rstd = torch.empty((C,), device=x.device, dtype=torch.float32)
    channel_stats_kernel[(C,)](x, mean, rstd, N, C, H * W, 1e-5, BLOCK=1024)
    out = torch.empty_like(x)
    n = x.numel()
    BLOCK = 1024
    normalize_kernel[(triton.cdiv(n, BLOCK),)](x, mean, rstd, w, b, out, n, C, H * W, BLOCK=BLOCK)
    return out
