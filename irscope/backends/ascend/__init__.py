"""Ascend NPUs through triton-ascend: ttir → ttadapter (linalg/HIVM) → npubin, captured by a worker that runs
in triton-ascend's own environment (docs/ascend.md)."""

from irscope.backends.ascend.adapter import ASCEND

__all__ = ["ASCEND"]
