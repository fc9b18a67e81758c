"""Initial Triton kernels for huber_loss (smooth L1, beta=1): one partial sum per BLOCK=1024 elements into a
buffer, then a single program sums the partials and divides by the element count."""

import torch
import triton
import triton.language as tl


@triton.jit
def smooth_l1_partial_kernel(pred_ptr, target_ptr, partial_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    p = tl.load(pred_ptr + offs, mask=mask, other=0.0)
    t = tl.load(target_ptr + offs, mask=mask, other=0.0)
    d = p - t
    ad = tl.abs(d)
    loss = tl.where(ad < 1.0, 0.5 * d * d, ad - 0.5)
    tl.store(partial_ptr + pid, tl.sum(loss, axis=0))


@triton.jit
def mean_of_partials_kernel(partial_ptr, out_ptr, n_partials, n_elements, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_partials, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(partial_ptr + offs, mask=offs < n_partials, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / n_elements)


def forward(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    pred = pred.contiguous()
    target = target.contiguous()
    n = pred.numel()
    BLOCK = 1024
    n_partials = triton.cdiv(n, BLOCK)
    partials = torch.empty(n_partials, device=pred.device, dtype=torch.float32)
    out = torch.empty((), device=pred.device, dtype=torch.float32)
    smooth_l1_partial_kernel[(n_partials,)](pred, target, partials, n, BLOCK=BLOCK)
    mean_of_partials_kernel[(1,)](partials, out, n_partials, n, BLOCK=BLOCK)
    return out
