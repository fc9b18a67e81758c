"""Extractor registry: which extractor reads which file.

An extractor turns one file's bytes into `FileFacts`. Source roots (C++ and TableGen trees) and pipeline roots (the
installed Triton package) admit different extractors; `extractor_for` picks by root kind and path.

`libclang` claims no file by its path: a build gives it the C++ files a compilation database lists (with their
compile command), instead of `cpp`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath

from compiler_index.model import FileFacts

SOURCE, PIPELINE = "source", "pipeline"


@dataclass(frozen=True)
class Extractor:
    name: str  # also the `lang` of the files it reads
    root_kind: str  # SOURCE | PIPELINE
    claims: Callable[[PurePosixPath], bool]
    load: Callable[[], Callable[..., FileFacts]]  # imported lazily: workers load only what they use
    backend: str = "tree-sitter"  # what `files.backend` records for the files it extracts


def _cpp() -> Callable[[str, bytes], FileFacts]:
    from compiler_index.extract.cpp import extract

    return extract


def _tablegen() -> Callable[[str, bytes], FileFacts]:
    from compiler_index.extract.tablegen import extract

    return extract


def _pipeline() -> Callable[[str, bytes], FileFacts]:
    from compiler_index.extract.pipeline import extract

    return extract


def _clang() -> Callable[..., FileFacts]:
    from compiler_index.extract.clang import extract

    return extract


CPP_SUFFIXES = frozenset({".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hxx"})

EXTRACTORS: dict[str, Extractor] = {
    e.name: e
    for e in [
        Extractor("cpp", SOURCE, lambda p: p.suffix in CPP_SUFFIXES, _cpp),
        Extractor("tablegen", SOURCE, lambda p: p.suffix == ".td", _tablegen),
        Extractor("pipeline", PIPELINE, lambda p: backend_of(p) is not None, _pipeline, "python-ast"),
        Extractor("libclang", SOURCE, lambda p: False, _clang, "libclang"),
    ]
}


def backend_of(path: PurePosixPath) -> str | None:
    """The backend a pipeline file belongs to: backends/<name>/compiler.py (installed), <name>/backend/compiler.py."""
    if path.name != "compiler.py" or len(path.parts) < 3:
        return None
    if path.parts[-3] == "backends":
        return path.parts[-2]
    if path.parts[-2] == "backend":
        return path.parts[-3]
    return None


def extractor_for(root_kind: str, rel_path: str) -> Extractor | None:
    path = PurePosixPath(rel_path)
    for e in EXTRACTORS.values():
        if e.root_kind == root_kind and e.claims(path):
            return e
    return None


_loaded: dict[str, Callable[..., FileFacts]] = {}


def run_extractor(name: str, rel_path: str, data: bytes, *context: object) -> FileFacts:
    """`context`: what an extractor needs beyond the file (libclang: the file's compile command)."""
    if name not in _loaded:
        _loaded[name] = EXTRACTORS[name].load()
    return _loaded[name](rel_path, data, *context)
