"""Adversarial candidate (new_gelu): says it ran out of device memory on every call, as a kernel too large for the
GPU would, or one hoping that a failure blamed on the shared GPU is forgiven. It is evaluated again alone, and a
shortfall alone counts against it."""

import torch


class OutOfMemoryError(RuntimeError):
    """Named as torch's allocation failure is: the name is all the harness reads of it."""


def forward(x: torch.Tensor) -> torch.Tensor:
    raise OutOfMemoryError("CUDA out of memory. Tried to allocate 4.00 GiB")
