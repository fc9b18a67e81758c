"""Initial Triton kernels for kl_div (batchmean): a separate elementwise kernel writes log(p) to a temporary
(the extra pass), a partial-sum kernel adds q·(log q − log p) per BLOCK=1024 elements (0 where q = 0, as
torch's xlogy does), and a single program sums the partials and divides by the batch size."""

import torch
import triton
import triton.language as tl


@triton.jit
def log_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(out_ptr + offs, tl.log(tl.load(x_ptr + offs, mask=mask, other=1.0)), mask=mask)


@triton.jit
def kl_partial_kernel(log_p_ptr, q_ptr, partial_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    log_p = tl.load(log_p_ptr + offs, mask=mask, other=0.0)
    q = tl.load(q_ptr + offs, mask=mask, other=1.0)  # padding lanes: 1·log 1 − 1·0 = 0
    q_log_q = tl.where(q > 0.0, q * tl.log(q), 0.0)
    tl.store(partial_ptr + pid, tl.sum(q_log_q - q * log_p, axis=0))


@triton.jit
def batchmean_kernel(partial_ptr, out_ptr, n_partials, batch, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_partials, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(partial_ptr + offs, mask=offs < n_partials, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / batch)


def forward(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    p = p.contiguous()
    q = q.contiguous()
    n = p.numel()
    BLOCK = 1024
    n_partials = triton.cdiv(n, BLOCK)
    log_p = torch.empty_like(p)
    partials = torch.empty(n_partials, device=p.device, dtype=torch.float32)
    out = torch.empty((), device=p.device, dtype=torch.float32)
    log_kernel[(n_partials,)](p, log_p, n, BLOCK=BLOCK)
    kl_partial_kernel[(n_partials,)](log_p, q, partials, n, BLOCK=BLOCK)
    batchmean_kernel[(1,)](partials, out, n_partials, p.shape[0], BLOCK=BLOCK)
    return out
