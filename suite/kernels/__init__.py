"""Frozen naive initial Triton kernels, one standalone module per operator (reviewed; see docs/suite.md)."""
