"""Triton's compiler sources for the tests that need them: `third_party/triton`, a checkout of the user's own or the
link CI makes (.ci/run). Without it those tests skip and say how to get one, unless IRSCOPE_TRITON_SOURCE_REQUIRED is
set (CI sets it when it made the link): then a missing checkout fails them, so a broken link cannot turn into quiet
skips. The index built from it is a session fixture (tests/conftest.py): built once per test run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

TRITON = Path(__file__).resolve().parents[1] / "third_party" / "triton"
REQUIRED = "IRSCOPE_TRITON_SOURCE_REQUIRED"
MISSING = (
    f"no Triton checkout at {TRITON}: get one with `compiler-index fetch --triton-version 3.6.0 "
    "--into third_party/triton` (see third_party/README.md)"
)


def present() -> bool:
    """Whether the sources are there; with REQUIRED set, their absence fails the calling test."""
    if (TRITON / "lib").is_dir() and (TRITON / "include" / "triton").is_dir():
        return True
    if os.environ.get(REQUIRED):
        pytest.fail(f"{REQUIRED} is set but {MISSING}", pytrace=False)
    return False
