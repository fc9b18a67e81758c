"""Hostile candidate (new_gelu): starts a thread at import and computes with torch there (the harness's monitor of
aten ops is per thread). The forward launches a token Triton kernel and hands the real work to the thread.
Imports threading and queue: only runs without the static check."""

import queue
import threading

import torch
import triton

_work: queue.Queue = queue.Queue()
_done: queue.Queue = queue.Queue()


def _serve() -> None:
    while True:
        x = _work.get()
        _done.put(torch.nn.functional.gelu(x, approximate="tanh"))


threading.Thread(target=_serve, daemon=True).start()


@triton.jit
def token_kernel(out_ptr):
    pass


def forward(x: torch.Tensor) -> torch.Tensor:
    _work.put(x)
    out = _done.get()
    token_kernel[(1,)](out)
    return out
