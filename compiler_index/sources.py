"""Which files an index covers: source roots (C++ and TableGen) and pipeline roots (Python backends).

A Triton checkout (a directory with `include/triton` and `lib`) is narrowed to the compiler's own code:
`lib include third_party/nvidia third_party/amd python/src`, without the vendored HIP/HSA headers in
`third_party/amd/backend/include`, the AOT code templates in `third_party/*/tools` and `test`/`unittest` trees
(test-only passes and gtest code). Any other
directory is indexed whole. The pipeline root defaults to the installed `triton` package, whose
`backends/<name>/compiler.py` are what actually runs.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from compiler_index.extract import PIPELINE, SOURCE, extractor_for
from irscope.backends import ADAPTERS


def triton_subdirs() -> tuple[str, ...]:
    """Triton's own code, and each backend's folders as its adapter names them (irscope.backends)."""
    return ("lib", "include", *(d for a in ADAPTERS.values() for d in a.source_dirs), "python/src")


def triton_excludes() -> tuple[str, ...]:
    """What each backend's adapter leaves out of its folders (vendored headers, code templates)."""
    return tuple(d for a in ADAPTERS.values() for d in a.source_excludes)


EXCLUDED_DIR_NAMES = frozenset({"test", "unittest", "__pycache__"})


class SourceError(ValueError):
    """A source or pipeline root that cannot be indexed."""


@dataclass(frozen=True)
class Root:
    kind: str  # SOURCE | PIPELINE
    path: Path  # the directory the user named, absolute
    base: Path  # stored paths are relative to this (a pipeline root keeps its package name: triton/backends/…)
    subdirs: tuple[str, ...]  # walked, relative to `path`
    excludes: tuple[str, ...]  # skipped, relative to `path`

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.path}"


@dataclass(frozen=True)
class SourceFile:
    root: Root
    rel: str  # posix path relative to root.base
    path: Path
    extractor: str


def is_triton_checkout(path: Path) -> bool:
    return (path / "include" / "triton").is_dir() and (path / "lib").is_dir()


def source_root(path: str | Path) -> Root:
    p = Path(path).expanduser().resolve()
    if not p.is_dir():
        raise SourceError(
            f"source directory {path!s} does not exist (or is not a directory); "
            f"get Triton's sources with `compiler-index fetch --into {path}`"
        )
    if is_triton_checkout(p):
        return Root(SOURCE, p, p, tuple(d for d in triton_subdirs() if (p / d).is_dir()), triton_excludes())
    return Root(SOURCE, p, p, (".",), ())


def installed_triton() -> Path | None:
    """The installed `triton` package directory, found without importing it (importing triton takes a second)."""
    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def pipeline_root(path: str | Path) -> Root:
    p = Path(path).expanduser().resolve()
    if not p.is_dir():
        raise SourceError(
            f"pipeline directory {path!s} does not exist; name a Triton package directory "
            f"(the one holding backends/<name>/compiler.py)"
        )
    # the package's backends/ holds the pipelines; walking the whole package would visit its bundled headers
    return Root(PIPELINE, p, p.parent, ("backends",) if (p / "backends").is_dir() else (".",), ())


def discover(roots: list[Root]) -> list[SourceFile]:
    """Every file of every root that an extractor claims, sorted; the first root that reaches a file wins."""
    out: dict[Path, SourceFile] = {}
    for root in roots:
        excluded = {(root.path / e).resolve() for e in root.excludes}
        for sub in root.subdirs:
            top = (root.path / sub).resolve()
            for dirpath, dirnames, filenames in os.walk(top):
                d = Path(dirpath)
                dirnames[:] = sorted(
                    n
                    for n in dirnames
                    if not n.startswith(".") and n not in EXCLUDED_DIR_NAMES and (d / n) not in excluded
                )
                for name in sorted(filenames):
                    path = d / name
                    rel = path.relative_to(root.base).as_posix()
                    ex = extractor_for(root.kind, rel)
                    if ex is not None and path not in out and not path.is_symlink():
                        out[path] = SourceFile(root, rel, path, ex.name)
    return sorted(out.values(), key=lambda f: (f.root.key, f.rel))


def digest(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


__all__ = [
    "PIPELINE",
    "SOURCE",
    "Root",
    "SourceError",
    "SourceFile",
    "digest",
    "discover",
    "installed_triton",
    "is_triton_checkout",
    "pipeline_root",
    "source_root",
]
