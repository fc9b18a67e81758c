"""The diagnosis ladder: L1 pattern cards → L2 profiling → L3 IR attribution → L4 compiler source."""

from ladder.api import KernelDiagnosis, diagnose

__all__ = ["KernelDiagnosis", "diagnose"]
