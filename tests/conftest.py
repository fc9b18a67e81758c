"""Session fixtures more than one test folder needs: Triton's sources and their compiler index, built once per run."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler_index.build import build, resolve_roots
from tests import triton_source


@pytest.fixture(scope="session")
def triton_checkout() -> Path:
    """third_party/triton; the test skips (or, where CI requires it, fails) without it."""
    if not triton_source.present():
        pytest.skip(triton_source.MISSING)
    return triton_source.TRITON


@pytest.fixture(scope="session")
def triton_db(triton_checkout: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The index of Triton's sources, built once for every test of the run that needs it (read-only for them)."""
    db = tmp_path_factory.mktemp("triton-index") / "index.db"
    report = build(db, resolve_roots([triton_checkout], None))
    assert not report.errors, report.errors
    return db
