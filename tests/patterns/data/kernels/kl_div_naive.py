"""KL divergence (naive): a log kernel, then block partials, then a one-program sum."""

import torch
import triton
import triton.language as tl


@triton.jit
def log_kernel(p_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.log(tl.load(p_ptr + offs, mask=offs < n, other=1.0)), mask=offs < n)


@triton.jit
def kl_partial_kernel(logp_ptr, q_ptr, partial_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    logp = tl.load(logp_ptr + offs, mask=offs < n, other=0.0)
    q = tl.load(q_ptr + offs, mask=offs < n, other=0.0)
    contrib = tl.where(q > 0, q * (tl.log(q) - logp), 0.0)
    tl.store(partial_ptr + tl.program_id(0), tl.sum(contrib, axis=0))


@triton.jit
def sum_kernel(partial_ptr, out_ptr, n_partials, scale, BLOCK: tl.constexpr):
    acc = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, n_partials, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(partial_ptr + offs, mask=offs < n_partials, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) * scale)


def forward(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    n = p.numel()
    BLOCK = 1024
    logp = torch.empty_like(p)
    partial = torch.empty(triton.cdiv(n, BLOCK), device=p.device, dtype=torch.float32)
    out = torch.empty((), device=p.device, dtype=torch.float32)
    log_kernel[(triton.cdiv(n, BLOCK),)](p, logp, n, BLOCK=BLOCK)
    kl_partial_kernel[(triton.cdiv(n, BLOCK),)](logp, q, partial, n, BLOCK=BLOCK)
    sum_kernel[(1,)](partial, out, partial.numel(), 1.0 / p.shape[0], BLOCK=BLOCK)
    return out
