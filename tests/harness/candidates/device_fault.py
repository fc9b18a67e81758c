"""Adversarial candidate (new_gelu): fails the way a kernel that corrupted the CUDA context does — with the sticky
"illegal memory access" error — so the worker must end and the harness continue in a fresh one."""

import torch


def forward(x: torch.Tensor) -> torch.Tensor:
    raise RuntimeError("CUDA error: an illegal memory access was encountered")
