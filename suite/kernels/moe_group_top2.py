"""Initial Triton kernel for moe_group_top2, the seed paper's argmax-and-mask form: one program per
(token, group), BLOCK = next_pow2(E/G); tl.argmax → mask that one index with -inf → tl.max. Masking by index
(not by value) keeps a duplicated maximum, so ties are handled."""

import torch
import triton
import triton.language as tl


@triton.jit
def top2_sum_kernel(x_ptr, out_ptr, E, G, GS, BLOCK: tl.constexpr):
    t = tl.program_id(0)
    gi = tl.program_id(1)
    offs = tl.arange(0, BLOCK)
    mask = offs < GS
    x = tl.load(x_ptr + t * E + gi * GS + offs, mask=mask, other=float("-inf"))
    i1 = tl.argmax(x, axis=0)
    v1 = tl.max(x, axis=0)
    x2 = tl.where(offs == i1, float("-inf"), x)
    v2 = tl.max(x2, axis=0)
    tl.store(out_ptr + t * G + gi, v1 + v2)


def forward(s: torch.Tensor, G: int) -> torch.Tensor:
    s = s.contiguous()
    T, E = s.shape
    GS = E // G
    out = torch.empty((T, G), device=s.device, dtype=s.dtype)
    top2_sum_kernel[(T, G)](s, out, E, G, GS, BLOCK=triton.next_power_of_2(GS))
    return out
