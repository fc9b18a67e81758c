"""Adversarial candidate (static check; new_gelu): replaces the benchmark clock through a dunder escape hatch
(docs/suite-protocol.md#failure-modes-and-defences, failure mode 5)."""

import torch
import triton

triton.testing.do_bench = lambda *args, **kwargs: 1e-6
torch.cuda.Event.__init__.__globals__["time"] = None


def forward(x: torch.Tensor) -> torch.Tensor:
    make = getattr(torch, "".join(["empty", "_like"]))
    return make(x)
