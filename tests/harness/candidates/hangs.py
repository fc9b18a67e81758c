"""Adversarial candidate (new_gelu): the forward never returns."""

import torch


def forward(x: torch.Tensor) -> torch.Tensor:
    while True:
        pass
