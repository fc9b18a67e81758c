"""Initial Triton kernel for layer_norm: one program per row (first dim); three looped passes in chunks of
BLOCK=1024: mean, variance of (x - mean), then normalize with weight and bias; no autotune. The 4-row case runs
on 4 SMs."""

import torch
import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * n_cols
    out_row = out_ptr + row * n_cols
    total = 0.0
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + offs, mask=offs < n_cols, other=0.0)
        total += tl.sum(x, axis=0)
    mean = total / n_cols
    total_sq = 0.0
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_cols
        x = tl.load(x_row + offs, mask=mask, other=0.0)
        d = tl.where(mask, x - mean, 0.0)
        total_sq += tl.sum(d * d, axis=0)
    rstd = 1.0 / tl.sqrt(total_sq / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_cols
        x = tl.load(x_row + offs, mask=mask, other=0.0)
        w = tl.load(w_ptr + offs, mask=mask, other=0.0)
        b = tl.load(b_ptr + offs, mask=mask, other=0.0)
        tl.store(out_row + offs, (x - mean) * rstd * w + b, mask=mask)


def forward(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    x, w, b = x.contiguous(), w.contiguous(), b.contiguous()
    rows = x.shape[0]
    n_cols = x.numel() // rows
    out = torch.empty_like(x)
    layer_norm_kernel[(rows,)](x, w, b, out, n_cols, 1e-5, BLOCK=1024)
    return out
