"""Hostile candidate (new_gelu): caches its output keyed on the input tensor and its version counter. Validation
and the re-checks hand it fresh or rewritten buffers (a miss: it computes), timed calls repeat the same unmodified
buffers (a hit: a copy-free return after a token launch). Reads a private attribute: only runs without the static
check (as tests of the layers behind it do)."""

import torch
import triton
import triton.language as tl

_cache: list = []  # [(the input tensor itself, its version then, the output)]: identity, not address


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    z = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    t = 2.0 * tl.sigmoid(2.0 * z) - 1.0
    tl.store(out_ptr + offs, 0.5 * x * (1.0 + t), mask=mask)


@triton.jit
def token_kernel(out_ptr):
    pass


def forward(x: torch.Tensor) -> torch.Tensor:
    for seen, version, out in _cache:
        if seen is x and version == x._version:
            token_kernel[(1,)](out)
            return out
    out = torch.empty_like(x)
    n = x.numel()
    gelu_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    _cache.append((x, x._version, out))
    del _cache[:-4]
    return out
