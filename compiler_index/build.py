"""`compiler-index build`: discover, hash, extract what changed (in parallel), store, relink.

The whole update is one transaction: an interrupted build leaves the previous index as it was. Files are compared by
content hash; a build that finds nothing changed reads and hashes the sources and stops there. A change to the
extractors' own code (their fingerprint in `meta`) re-extracts every file.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import sqlite3
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from compiler_index import link, store
from compiler_index.extract import run_extractor
from compiler_index.model import FileFacts
from compiler_index.sources import (
    Root,
    SourceError,
    SourceFile,
    digest,
    discover,
    installed_triton,
    pipeline_root,  # fmt: skip
    source_root,
)

PARALLEL_MIN_FILES = 24  # below this, worker start-up costs more than it saves


@dataclass
class BuildReport:
    db: Path
    files: int = 0  # files in the index after the build
    parsed: int = 0
    unchanged: int = 0
    removed: int = 0
    parse_error_files: int = 0  # files tree-sitter parsed with ERROR nodes (facts still extracted around them)
    errors: list[str] = field(default_factory=list)  # files that could not be read or extracted at all
    relinked: bool = False
    seconds: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {**self.__dict__, "db": str(self.db)}


@dataclass
class _Extracted:
    path: str
    facts: FileFacts | None
    error: str | None = None
    size: int = 0
    sha1: str = ""
    lines: int = 0


def _extract_one(item: tuple[str, str, str]) -> _Extracted:
    """Worker: read, hash and extract one file."""
    path, extractor, rel = item
    try:
        data = Path(path).read_bytes()
        return _Extracted(path, run_extractor(extractor, rel, data), None, len(data), digest(data), data.count(b"\n"))
    except Exception as e:  # one unreadable file must not lose the rest of the build
        return _Extracted(path, None, f"{rel}: {type(e).__name__}: {e}")


def resolve_roots(sources: list[str | Path], pipelines: list[str | Path] | None) -> list[Root]:
    """Source roots plus pipeline roots; `pipelines=None` means the installed Triton package."""
    if not sources and not pipelines and pipelines is not None:
        raise SourceError("nothing to index: give at least one --source or --pipeline directory")
    roots = [source_root(s) for s in sources]
    if pipelines is None:
        triton_dir = installed_triton()
        if triton_dir is None:
            raise SourceError("Triton is not installed here, so its pass pipeline cannot be indexed; "
                              "install triton==3.6.0 or pass --no-pipeline")  # fmt: skip
        pipelines = [triton_dir]
    roots += [pipeline_root(p) for p in pipelines]
    if not roots:
        raise SourceError("nothing to index: give at least one --source directory")
    return roots


def build(db: str | Path, roots: list[Root], jobs: int = 0, rebuild: bool = False,
          progress: bool = False) -> BuildReport:
    db = Path(db)
    report = BuildReport(db=db)
    t0 = time.perf_counter()
    if db.exists():
        version = store.schema_version(db)
        if rebuild or db.stat().st_size == 0:  # an empty file: what sqlite3.connect leaves behind
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db}{suffix}").unlink(missing_ok=True)
        elif version != store.SCHEMA_VERSION:
            what = "is not a compiler index" if version is None else f"has index schema version {version}"
            raise store.IndexDbError(f"{db} {what} (this compiler_index writes version {store.SCHEMA_VERSION}); "
                                     "pass --rebuild to replace it, or choose another --db")  # fmt: skip
    con = store.create(db) if not db.exists() else store.connect(db)
    try:
        files = discover(roots)
        report.seconds["discover"] = time.perf_counter() - t0
        with con:
            _update(con, roots, files, jobs, progress, report)
    finally:
        con.close()
    report.seconds["total"] = time.perf_counter() - t0
    return report


def extractor_fingerprint() -> str:
    """Hash of the extractors' own code: facts extracted by other code are stale even where sources are not."""
    here = Path(__file__).resolve().parent
    paths = sorted([here / "model.py", *(here / "extract").glob("*.py")])
    return digest(b"".join(p.read_bytes() for p in paths))


def _update(con: sqlite3.Connection, roots: list[Root], files: list[SourceFile], jobs: int, progress: bool,
            report: BuildReport) -> None:
    t = time.perf_counter()
    root_ids = _sync_roots(con, roots)
    fingerprint = extractor_fingerprint()
    if store.get_meta(con).get("extractors") not in (None, fingerprint):
        store.clear_files(con)  # other extractors wrote these facts: re-extract everything
    stored = {(r["root_id"], r["path"]): (r["id"], r["sha1"]) for r in
              con.execute("SELECT f.id, f.root_id, f.path, f.sha1 FROM files f")}
    wanted = {(root_ids[f.root.key], f.rel) for f in files}
    for key, (file_id, _) in stored.items():
        if key not in wanted:
            store.delete_file(con, file_id)
            report.removed += 1
    todo: list[tuple[SourceFile, int]] = []  # (file, id of its previous version or 0)
    for f in files:
        prev = stored.get((root_ids[f.root.key], f.rel))
        if prev is not None and prev[1] == digest(f.path.read_bytes()):
            report.unchanged += 1
        else:
            todo.append((f, prev[0] if prev else 0))
    report.seconds["hash"] = time.perf_counter() - t
    t = time.perf_counter()
    previous = {str(f.path): old_id for f, old_id in todo}
    with _progress(progress, len(todo)) as advance:
        for f, got in _extract_all([f for f, _ in todo], jobs):
            if previous[str(f.path)]:
                store.delete_file(con, previous[str(f.path)])
            if got.facts is None:
                report.errors.append(got.error or f.rel)
                continue
            if got.facts.error:
                report.errors.append(got.facts.error)
            report.parse_error_files += got.facts.parse_errors > 0
            store.write_file(con, root_ids[f.root.key], f.rel, got.sha1, got.size, got.lines, got.facts)
            report.parsed += 1
            advance(f.rel)
    report.seconds["extract_store"] = time.perf_counter() - t
    report.files = con.execute("SELECT count(*) FROM files").fetchone()[0]
    if report.parsed or report.removed or not _meta_complete(con):
        t = time.perf_counter()
        link.relink(con)
        report.relinked = True
        report.seconds["link"] = time.perf_counter() - t
        store.set_meta(con, complete="1", updated=time.strftime("%Y-%m-%dT%H:%M:%S"), extractors=fingerprint,
                       **_versions(roots))


def _extract_all(files: list[SourceFile], jobs: int) -> Iterator[tuple[SourceFile, _Extracted]]:
    items = [(str(f.path), f.extractor, f.rel) for f in files]
    by_path = {str(f.path): f for f in files}
    workers = jobs or min(2, os.cpu_count() or 1)
    if workers > 1 and len(items) >= PARALLEL_MIN_FILES:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for got in pool.map(_extract_one, items, chunksize=8):
                yield by_path[got.path], got
    else:
        for item in items:
            got = _extract_one(item)
            yield by_path[got.path], got


def _sync_roots(con: sqlite3.Connection, roots: list[Root]) -> dict[str, int]:
    keys = {r.key for r in roots}
    for row in con.execute("SELECT id, key FROM roots").fetchall():
        if row["key"] not in keys:
            for f in con.execute("SELECT id FROM files WHERE root_id = ?", (row["id"],)).fetchall():
                store.delete_file(con, f["id"])
            con.execute("DELETE FROM roots WHERE id = ?", (row["id"],))
    for r in roots:
        con.execute("INSERT OR IGNORE INTO roots(key, kind, path, base) VALUES (?, ?, ?, ?)",
                    (r.key, r.kind, str(r.path), str(r.base)))
    return {r["key"]: r["id"] for r in con.execute("SELECT id, key FROM roots")}


def _meta_complete(con: sqlite3.Connection) -> bool:
    return con.execute("SELECT 1 FROM meta WHERE key = 'complete'").fetchone() is not None


def _versions(roots: list[Root]) -> dict[str, str]:
    def version(dist: str) -> str:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return ""

    checkouts = []
    for r in roots:
        init = r.path / "python" / "triton" / "__init__.py"
        m = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", init.read_text()) if init.exists() else None
        checkouts.append({"kind": r.kind, "path": str(r.path), "triton_version": m.group(1) if m else None})
    return {"roots": json.dumps(checkouts), "installed_triton": version("triton"),
            "tree_sitter": version("tree-sitter"), "tree_sitter_cpp": version("tree-sitter-cpp"),
            "tree_sitter_language_pack": version("tree-sitter-language-pack")}


@contextmanager
def _progress(enabled: bool, total: int) -> Iterator:
    if not enabled or total == 0:
        yield lambda _name: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("indexing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("[dim]{task.fields[file]}"), transient=True) as bar:  # fmt: skip
        task = bar.add_task("index", total=total, file="")
        yield lambda name: bar.update(task, advance=1, file=name[-60:])
