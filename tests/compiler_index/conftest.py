"""Fixtures: the test corpus index (always); the real Triton checkout and its index are tests/conftest.py's."""

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


@pytest.fixture(scope="session")
def corpus_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("corpus") / "index.db"
    report = build(db, resolve_roots([CORPUS], [CORPUS_PIPELINE]))
    assert not report.errors, report.errors
    return db
