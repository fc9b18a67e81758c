"""`compiler-index build`: discover, hash, extract what changed (in parallel), store, relink.

The whole update is one transaction: an interrupted build leaves the previous index as it was. Files are compared by
content hash; a build that finds nothing changed reads and hashes the sources and stops there. A change to the
extractors' own code (their fingerprint in `meta`) re-extracts every file.

Backends (`backend=`): `tree-sitter` reads every C++ file on its own. `libclang` parses the C++ files a compilation
database lists with their compile commands (the others stay with tree-sitter); such a file is also re-extracted
when its command or any header it included changed, when it had errors last time (a missing header may have
appeared), and when the previous build read it with the other backend — a file's rows always come from one build.
`auto` is libclang when a compilation database is given or found in a source root and libclang loads, else
tree-sitter.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import sqlite3
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from compiler_index import compdb, link, store
from compiler_index.compdb import CompileCommand
from compiler_index.extract import EXTRACTORS, run_extractor
from compiler_index.model import FileFacts
from compiler_index.sources import (
    Root,
    SourceError,
    SourceFile,
    digest,
    discover,
    installed_triton,
    pipeline_root,
    source_root,
)
from irscope.childproc import process_pool

PARALLEL_MIN_FILES = 24  # below this, worker start-up costs more than it saves
BACKENDS = ("tree-sitter", "libclang", "auto")
MISSING_HEADERS_SHOWN = 20


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
    backend: str = "tree-sitter"  # what read the C++ files a compilation database lists
    compile_commands: str | None = None
    notes: list[str] = field(default_factory=list)  # e.g. why `auto` fell back to tree-sitter
    # libclang builds: translation units parsed, with errors, error count, headers not found, files by backend
    clang: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {**self.__dict__, "db": str(self.db)}


@dataclass(frozen=True)
class _Job:
    path: str
    extractor: str
    rel: str
    command: CompileCommand | None  # libclang: the file's compile command


@dataclass
class _Extracted:
    path: str
    facts: FileFacts | None
    error: str | None = None
    size: int = 0
    sha1: str = ""
    lines: int = 0
    deps_key: str | None = None


def _extract_one(job: _Job) -> _Extracted:
    """Worker: read, hash and extract one file."""
    try:
        data = Path(job.path).read_bytes()
        context = (job.command,) if job.command is not None else ()
        facts = run_extractor(job.extractor, job.rel, data, *context)
        key = deps_key(job.command, facts.deps) if job.command is not None else None
        return _Extracted(job.path, facts, None, len(data), digest(data), data.count(b"\n"), key)
    except Exception as e:  # one unreadable file must not lose the rest of the build
        return _Extracted(job.path, None, f"{job.rel}: {type(e).__name__}: {e}")


def deps_key(command: CompileCommand, deps: list[str]) -> str:
    """What a libclang file's facts depend on besides its own content: its command and its headers' contents."""
    return digest("\n".join([command.key(), *(f"{d}\0{_file_digest(d)}" for d in deps)]).encode())


def _file_digest(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return "missing"
    return _digest_of(path, st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=65536)
def _digest_of(path: str, mtime_ns: int, size: int) -> str:
    """A header's content hash, read once per process while it keeps its modification time and size (the translation
    units of a project include hundreds of the same headers)."""
    return digest(Path(path).read_bytes())


def libclang_problem() -> str | None:
    """Why the libclang backend cannot run here, or None."""
    try:
        from compiler_index.extract import clang as clang_backend
    except ImportError as e:
        return f"the libclang backend needs the `libclang` package ({e}); install the `index` extra (libclang==18.1.1)"
    return clang_backend.unavailable()


@dataclass
class BackendPlan:
    backend: str  # tree-sitter | libclang
    compile_commands: Path | None = None
    commands: dict[Path, CompileCommand] = field(default_factory=dict)
    note: str = ""


def plan_backend(backend: str, roots: list[Root], compile_commands: str | Path | None = None) -> BackendPlan:
    """Which backend reads the C++ files, and with which compilation database; a clear error when the asked-for
    backend cannot run."""
    if backend not in BACKENDS:
        raise SourceError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    if backend == "tree-sitter":
        if compile_commands is not None:
            raise SourceError("--compile-commands is for the libclang backend: pass --backend libclang (or auto)")
        return BackendPlan("tree-sitter")
    path = compdb.find(roots, compile_commands)
    problem = libclang_problem()
    if backend == "auto" and (path is None or problem):
        why = problem or f"no {compdb.FILENAME} given or found in a source root"
        return BackendPlan("tree-sitter", note=f"backend auto: tree-sitter ({why})")
    if path is None:
        raise compdb.CompileCommandsError(
            f"the libclang backend needs a compilation database: none given and no {' or '.join(compdb.SEARCH)} in "
            "the source roots; pass --compile-commands PATH (CMake writes one with "
            "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON)"
        )
    if problem:
        raise SourceError(problem)
    return BackendPlan("libclang", path, compdb.load(path))


def resolve_roots(sources: list[str | Path], pipelines: list[str | Path] | None) -> list[Root]:
    """Source roots plus pipeline roots; `pipelines=None` means the installed Triton package."""
    if not sources and not pipelines and pipelines is not None:
        raise SourceError("nothing to index: give at least one --source or --pipeline directory")
    roots = [source_root(s) for s in sources]
    if pipelines is None:
        triton_dir = installed_triton()
        if triton_dir is None:
            raise SourceError(
                "Triton is not installed here, so its pass pipeline cannot be indexed; "
                "install triton==3.6.0 or pass --no-pipeline"
            )
        pipelines = [triton_dir]
    roots += [pipeline_root(p) for p in pipelines]
    if not roots:
        raise SourceError("nothing to index: give at least one --source directory")
    return roots


def build(
    db: str | Path,
    roots: list[Root],
    jobs: int = 0,
    rebuild: bool = False,
    progress: bool = False,
    backend: str = "tree-sitter",
    compile_commands: str | Path | None = None,
) -> BuildReport:
    db = Path(db)
    plan = plan_backend(backend, roots, compile_commands)
    report = BuildReport(
        db=db,
        backend=plan.backend,
        compile_commands=str(plan.compile_commands) if plan.compile_commands else None,
        notes=[plan.note] if plan.note else [],
    )
    t0 = time.perf_counter()
    if db.exists():
        version = store.schema_version(db)
        if rebuild or db.stat().st_size == 0:  # an empty file: what sqlite3.connect leaves behind
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db}{suffix}").unlink(missing_ok=True)
        elif version != store.SCHEMA_VERSION:
            what = "is not a compiler index" if version is None else f"has index schema version {version}"
            raise store.IndexDbError(
                f"{db} {what} (this compiler_index writes version {store.SCHEMA_VERSION}); "
                "pass --rebuild to replace it, or choose another --db"
            )
    con = store.create(db) if not db.exists() else store.connect(db)
    try:
        files = discover(roots)
        report.seconds["discover"] = time.perf_counter() - t0
        with con:
            _update(con, roots, files, plan, jobs, progress, report)
    finally:
        con.close()
    report.seconds["total"] = time.perf_counter() - t0
    return report


def extractor_fingerprint() -> str:
    """Hash of the extractors' own code: facts extracted by other code are stale even where sources are not."""
    here = Path(__file__).resolve().parent
    paths = sorted([here / "model.py", *(here / "extract").glob("*.py")])
    return digest(b"".join(p.read_bytes() for p in paths))


def _update(
    con: sqlite3.Connection,
    roots: list[Root],
    files: list[SourceFile],
    plan: BackendPlan,
    jobs: int,
    progress: bool,
    report: BuildReport,
) -> None:
    t = time.perf_counter()
    root_ids = _sync_roots(con, roots)
    fingerprint = extractor_fingerprint()
    if store.get_meta(con).get("extractors") not in (None, fingerprint):
        store.clear_files(con)  # other extractors wrote these facts: re-extract everything
    stored = {
        (r["root_id"], r["path"]): r
        for r in con.execute("SELECT id, root_id, path, sha1, backend, deps, deps_key, diagnostics FROM files")
    }
    wanted = {(root_ids[f.root.key], f.rel) for f in files}
    for key, row in stored.items():
        if key not in wanted:
            store.delete_file(con, row["id"])
            report.removed += 1
    todo: list[tuple[_Job, SourceFile, int]] = []  # (job, file, id of its previous version or 0)
    for f in files:
        command = plan.commands.get(f.path) if f.extractor == "cpp" else None
        job = _Job(str(f.path), "libclang" if command else f.extractor, f.rel, command)
        prev = stored.get((root_ids[f.root.key], f.rel))
        if prev is not None and _unchanged(prev, f, job):
            report.unchanged += 1
        else:
            todo.append((job, f, prev["id"] if prev else 0))
    report.seconds["hash"] = time.perf_counter() - t
    t = time.perf_counter()
    missing_headers: Counter[str] = Counter()
    with _progress(progress, len(todo)) as advance:
        for (job, f, old_id), got in zip(todo, _extract_all([job for job, _, _ in todo], jobs)):
            if old_id:
                store.delete_file(con, old_id)
            if got.facts is None:
                report.errors.append(got.error or f.rel)
                continue
            if got.facts.error:
                report.errors.append(got.facts.error)
            report.parse_error_files += got.facts.parse_errors > 0
            if job.command is not None:
                _count_diagnostics(report, got.facts.diagnostics, missing_headers)
            store.write_file(
                con,
                root_ids[f.root.key],
                f.rel,
                got.sha1,
                got.size,
                got.lines,
                got.facts,
                EXTRACTORS[job.extractor].backend,
                got.deps_key,
            )
            report.parsed += 1
            advance(f.rel)
    report.seconds["extract_store"] = time.perf_counter() - t
    report.files = con.execute("SELECT count(*) FROM files").fetchone()[0]
    if plan.backend == "libclang":
        found = {f.path for f in files}
        report.clang["missing_headers"] = [h for h, _ in missing_headers.most_common(MISSING_HEADERS_SHOWN)]
        report.clang["listed_not_indexed"] = sum(p not in found for p in plan.commands)  # outside the roots
        report.clang["files_by_backend"] = dict(con.execute("SELECT backend, count(*) FROM files GROUP BY backend"))
    if report.parsed or report.removed or not _meta_complete(con):
        t = time.perf_counter()
        link.relink(con)
        report.relinked = True
        report.seconds["link"] = time.perf_counter() - t
        store.set_meta(
            con,
            complete="1",
            updated=time.strftime("%Y-%m-%dT%H:%M:%S"),
            extractors=fingerprint,
            backend=plan.backend,
            compile_commands=report.compile_commands or "",
            **_versions(roots),
        )


def _unchanged(prev: sqlite3.Row, f: SourceFile, job: _Job) -> bool:
    if prev["backend"] != EXTRACTORS[job.extractor].backend or prev["sha1"] != digest(f.path.read_bytes()):
        return False
    if job.command is None:
        return True
    if json.loads(prev["diagnostics"] or "{}").get("errors"):
        return False  # parse again: the header it missed may be there now
    return prev["deps_key"] == deps_key(job.command, json.loads(prev["deps"] or "[]"))


def _count_diagnostics(report: BuildReport, diagnostics: dict, missing_headers: Counter[str]) -> None:
    c = report.clang
    c["translation_units"] = c.get("translation_units", 0) + 1
    c["with_errors"] = c.get("with_errors", 0) + bool(diagnostics.get("errors"))
    c["errors"] = c.get("errors", 0) + diagnostics.get("errors", 0)
    missing_headers.update(diagnostics.get("missing_headers", []))


def _extract_all(todo: list[_Job], jobs: int) -> Iterator[_Extracted]:
    """Results in the order of `todo`."""
    workers = jobs or min(2, os.cpu_count() or 1)
    # a translation unit takes libclang a second or more (its headers): worth a worker from two on, one at a time
    units = sum(j.command is not None for j in todo)
    if workers > 1 and (len(todo) >= PARALLEL_MIN_FILES or units >= 2):
        with process_pool(workers) as pool:  # its workers die with this process, kill -9 included
            yield from pool.map(_extract_one, todo, chunksize=1 if units else 8)
    else:
        yield from map(_extract_one, todo)


def _sync_roots(con: sqlite3.Connection, roots: list[Root]) -> dict[str, int]:
    keys = {r.key for r in roots}
    for row in con.execute("SELECT id, key FROM roots").fetchall():
        if row["key"] not in keys:
            for f in con.execute("SELECT id FROM files WHERE root_id = ?", (row["id"],)).fetchall():
                store.delete_file(con, f["id"])
            con.execute("DELETE FROM roots WHERE id = ?", (row["id"],))
    for r in roots:
        con.execute(
            "INSERT OR IGNORE INTO roots(key, kind, path, base) VALUES (?, ?, ?, ?)",
            (r.key, r.kind, str(r.path), str(r.base)),
        )
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
    return {
        "roots": json.dumps(checkouts),
        "installed_triton": version("triton"),
        "tree_sitter": version("tree-sitter"),
        "tree_sitter_cpp": version("tree-sitter-cpp"),
        "tree_sitter_language_pack": version("tree-sitter-language-pack"),
        "libclang": version("libclang"),
    }


@contextmanager
def _progress(enabled: bool, total: int) -> Iterator:
    if not enabled or total == 0:
        yield lambda _name: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("indexing"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("[dim]{task.fields[file]}"),
        transient=True,
    ) as bar:
        task = bar.add_task("index", total=total, file="")
        yield lambda name: bar.update(task, advance=1, file=name[-60:])
