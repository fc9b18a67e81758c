"""Fixtures: the test corpus index (always) and the real Triton checkout index (skipped without a checkout)."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler_index.build import build, resolve_roots

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
CORPUS_PIPELINE = CORPUS / "python" / "toytriton"
# what a build of the corpus finds outside its sources: stand-ins for MLIR/LLVM/pybind11 headers and for the headers
# mlir-tblgen generates (written for these tests; not indexed, as Triton's index holds no MLIR)
CORPUS_DEPS = HERE / "corpus_deps" / "include"
TRITON = HERE.parents[1] / "third_party" / "triton"


@pytest.fixture(scope="session")
def corpus_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("corpus") / "index.db"
    report = build(db, resolve_roots([CORPUS], [CORPUS_PIPELINE]))
    assert not report.errors, report.errors
    return db


@pytest.fixture(scope="session")
def triton_checkout() -> Path:
    if not (TRITON / "include" / "triton").is_dir():
        pytest.skip(
            f"no Triton checkout at {TRITON}: get one with `compiler-index fetch --triton-version 3.6.0 "
            "--into third_party/triton` (see third_party/README.md)"
        )
    return TRITON


@pytest.fixture(scope="session")
def triton_db(triton_checkout: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("triton") / "index.db"
    report = build(db, resolve_roots([triton_checkout], None))
    assert not report.errors, report.errors
    return db
