"""Adversarial candidate (new_gelu): a correct Triton kernel behind a result cache keyed on the input's data_ptr,
shape and dtype. Repeated timed calls on the same buffer hit the cache; the re-check after timing writes new
contents into that buffer and catches the stale result (docs/suite-protocol.md#failure-modes-and-defences, failure
mode 2)."""

import torch
import triton
import triton.language as tl

_CACHE: dict = {}


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    t = 2.0 * tl.sigmoid(2.0 * 0.7978845608028654 * (x + 0.044715 * x * x * x)) - 1.0
    tl.store(out_ptr + offs, 0.5 * x * (1.0 + t), mask=mask)


def forward(x: torch.Tensor) -> torch.Tensor:
    key = (x.data_ptr(), tuple(x.shape), x.dtype)
    if key not in _CACHE:
        out = torch.empty_like(x)
        gelu_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
        _CACHE[key] = out
    return _CACHE[key]
