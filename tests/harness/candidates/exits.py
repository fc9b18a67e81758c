"""Adversarial candidate (new_gelu): ends the process from inside the forward (sys.exit without importing sys)."""

import torch


def forward(x: torch.Tensor) -> torch.Tensor:
    raise SystemExit(0)
