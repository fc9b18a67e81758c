"""Adversarial candidate (static check only; new_gelu): runs its kernel on a side stream from a background thread,
so events on the default stream would miss the work (docs/suite-protocol.md#failure-modes-and-defences, failure
mode 3)."""

import threading

import torch
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x, mask=offs < n)


def forward(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    side = torch.cuda.Stream()

    def work():
        with torch.cuda.stream(side):
            gelu_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)

    threading.Thread(target=work).start()
    return out
