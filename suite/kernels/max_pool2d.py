"""Initial Triton kernel for max_pool2d: flattened outputs, BLOCK=256, div/mod index math, k² masked gathers with
−inf padding and no window reuse; NaN propagates as in torch (the default tl.maximum would drop it on the GPU)."""

import torch
import triton
import triton.language as tl


@triton.jit
def max_pool2d_kernel(x_ptr, out_ptr, n_out, H, W, OH, OW, KSIZE: tl.constexpr, STRIDE: tl.constexpr,
                      PAD: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_out
    ow = offs % OW
    oh = (offs // OW) % OH
    nc = offs // (OW * OH)
    base = x_ptr + nc * H * W
    acc = tl.full([BLOCK], float("-inf"), dtype=tl.float32)
    for kh in tl.static_range(KSIZE):
        ih = oh * STRIDE - PAD + kh
        for kw in tl.static_range(KSIZE):
            iw = ow * STRIDE - PAD + kw
            inside = mask & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
            v = tl.load(base + ih * W + iw, mask=inside, other=float("-inf"))
            acc = tl.maximum(acc, v, propagate_nan=tl.PropagateNan.ALL)
    tl.store(out_ptr + offs, acc, mask=mask)


def forward(x: torch.Tensor, kernel_size: int, stride: int, padding: int) -> torch.Tensor:
    x = x.contiguous()
    N, C, H, W = x.shape
    OH = (H + 2 * padding - kernel_size) // stride + 1
    OW = (W + 2 * padding - kernel_size) // stride + 1
    out = torch.empty((N, C, OH, OW), device=x.device, dtype=x.dtype)
    n_out = out.numel()
    BLOCK = 256
    max_pool2d_kernel[(triton.cdiv(n_out, BLOCK),)](x, out, n_out, H, W, OH, OW, KSIZE=kernel_size, STRIDE=stride,
                                                    PAD=padding, BLOCK=BLOCK)
    return out
