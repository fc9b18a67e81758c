"""Initial Triton kernels for triplet_margin: one program per row with two looped distance passes
(anchor–positive, then anchor–negative, re-reading the anchor; BLOCK=1024), eps=1e-6 added to each difference
as pairwise_distance does, the hinge max(d_ap − d_an + 1, 0) to a per-row buffer; a single program averages it."""

import torch
import triton
import triton.language as tl


@triton.jit
def row_triplet_kernel(a_ptr, p_ptr, n_ptr, loss_ptr, D, margin, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row * D
    acc_ap = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, D, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < D
        a = tl.load(a_ptr + base + offs, mask=mask, other=0.0)
        p = tl.load(p_ptr + base + offs, mask=mask, other=0.0)
        diff = tl.where(mask, a - p + eps, 0.0)
        acc_ap += diff * diff
    acc_an = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, D, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < D
        a = tl.load(a_ptr + base + offs, mask=mask, other=0.0)
        n = tl.load(n_ptr + base + offs, mask=mask, other=0.0)
        diff = tl.where(mask, a - n + eps, 0.0)
        acc_an += diff * diff
    d_ap = tl.sqrt(tl.sum(acc_ap, axis=0))
    d_an = tl.sqrt(tl.sum(acc_an, axis=0))
    tl.store(loss_ptr + row, tl.maximum(d_ap - d_an + margin, 0.0))


@triton.jit
def mean_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / n)


def forward(anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> torch.Tensor:
    anchor = anchor.contiguous()
    positive = positive.contiguous()
    negative = negative.contiguous()
    B, D = anchor.shape
    losses = torch.empty(B, device=anchor.device, dtype=torch.float32)
    out = torch.empty((), device=anchor.device, dtype=torch.float32)
    row_triplet_kernel[(B,)](anchor, positive, negative, losses, D, 1.0, 1e-6, BLOCK=1024)
    mean_kernel[(1,)](losses, out, B, BLOCK=1024)
    return out
