"""The sandbox (bubblewrap) for the tests that confine a child. Where it cannot run, those tests skip and say why,
unless IRSCOPE_SANDBOX_REQUIRED is set (CI sets it, and `make mutation` where the sandbox runs): then its absence
fails them. A sandbox that does not start because its command line is broken must not pass as "no sandbox here"."""

from __future__ import annotations

import os

import pytest

from ladder import confine

REQUIRED = "IRSCOPE_SANDBOX_REQUIRED"


def confinement() -> confine.Confinement:
    """The sandbox; a skip where there is none, a failure where one is required."""
    found = confine.available()
    if found is None:
        if os.environ.get(REQUIRED):
            pytest.fail(f"{REQUIRED} is set but no sandbox starts: {confine.problem()}", pytrace=False)
        pytest.skip(f"no sandbox here: {confine.problem()}")
    return found


def may_skip() -> bool:
    """For a module's skip mark: no sandbox, and none required (where one is required, its tests run and fail)."""
    return confine.available() is None and not os.environ.get(REQUIRED)
