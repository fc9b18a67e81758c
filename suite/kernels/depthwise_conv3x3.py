"""Initial Triton kernel for depthwise_conv3x3: flattened outputs, BLOCK=256, div/mod index math, 9 input gathers
plus 9 weight loads per output element, fp32 accumulation (stride 1, no padding)."""

import torch
import triton
import triton.language as tl


@triton.jit
def depthwise_conv3x3_kernel(x_ptr, w_ptr, out_ptr, n_out, C, H, W, OH, OW, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_out
    ow = offs % OW
    oh = (offs // OW) % OH
    nc = offs // (OW * OH)
    c = nc % C
    x_base = x_ptr + nc * H * W + oh * W + ow
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for kh in tl.static_range(3):
        for kw in tl.static_range(3):
            xv = tl.load(x_base + kh * W + kw, mask=mask, other=0.0)
            wv = tl.load(w_ptr + c * 9 + kh * 3 + kw, mask=mask, other=0.0)
            acc += xv * wv
    tl.store(out_ptr + offs, acc, mask=mask)


def forward(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    w = w.contiguous()
    N, C, H, W = x.shape
    OH, OW = H - 2, W - 2
    out = torch.empty((N, C, OH, OW), device=x.device, dtype=x.dtype)
    n_out = out.numel()
    BLOCK = 256
    depthwise_conv3x3_kernel[(triton.cdiv(n_out, BLOCK),)](x, w, out, n_out, C, H, W, OH, OW, BLOCK=BLOCK)
    return out
