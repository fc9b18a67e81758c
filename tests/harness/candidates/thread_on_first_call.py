"""Adversarial candidate (new_gelu; imports threading: runs only without the static check): an honest kernel whose
first forward call starts a thread that stays. The first call is the runner's compile-only call, made before any
validation run, whose monitor then sees no new thread: the compile-only call is watched for threads too."""

import threading
import time

import torch
import triton
import triton.language as tl

_started: list[threading.Thread] = []


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    z = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    t = 2.0 * tl.sigmoid(2.0 * z) - 1.0
    tl.store(out_ptr + offs, 0.5 * x * (1.0 + t), mask=mask)


def _linger() -> None:
    while True:
        time.sleep(1)


def forward(x: torch.Tensor) -> torch.Tensor:
    if not _started:
        _started.append(threading.Thread(target=_linger, daemon=True))
        _started[0].start()
    out = torch.empty_like(x)
    n = x.numel()
    gelu_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out
