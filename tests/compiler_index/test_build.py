"""Building: discovery, incremental updates by content hash, schema version and the errors around the database."""

from __future__ import annotations

import os
import pty
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from compiler_index import queries, store
from compiler_index.build import build, resolve_roots
from compiler_index.sources import SourceError, discover, source_root
from tests.compiler_index.conftest import CORPUS, CORPUS_PIPELINE


@pytest.fixture
def corpus_copy(tmp_path: Path) -> Path:
    return Path(shutil.copytree(CORPUS, tmp_path / "corpus"))


def roots_for(src: Path):
    return resolve_roots([src], [src / "python" / "toytriton"])


def test_discovery_claims_cpp_td_and_pipeline_files():
    files = discover(resolve_roots([CORPUS], [CORPUS_PIPELINE]))
    by_kind = {}
    for f in files:
        by_kind.setdefault(f.extractor, []).append(f.rel)
    assert len(by_kind["cpp"]) == 16 and len(by_kind["tablegen"]) == 4
    assert by_kind["pipeline"] == ["toytriton/backends/toy/compiler.py"]  # relative to the package's parent


def test_triton_checkout_is_narrowed(triton_checkout: Path):
    root = source_root(triton_checkout)
    assert root.subdirs == ("lib", "include", "third_party/nvidia", "third_party/amd", "python/src")
    rels = [f.rel for f in discover([root])]
    assert not any(r.startswith(("third_party/amd/backend/include", "third_party/proton")) for r in rels)
    assert not any("/unittest/" in r or "/test/" in r for r in rels)
    assert "lib/Dialect/TritonGPU/Transforms/Coalesce.cpp" in rels


def test_incremental_rebuild(corpus_copy: Path, tmp_path: Path):
    db = tmp_path / "index.db"
    first = build(db, roots_for(corpus_copy))
    assert (first.parsed, first.unchanged, first.relinked) == (21, 0, True)

    again = build(db, roots_for(corpus_copy))
    assert (again.parsed, again.unchanged, again.removed, again.relinked) == (0, 21, 0, False)

    # touching without changing content re-parses nothing; a changed file is re-parsed alone
    util = corpus_copy / "lib/Dialect/ToyGPU/Transforms/Utility.cpp"
    util.write_text(util.read_text())
    assert build(db, roots_for(corpus_copy)).parsed == 0
    util.write_text(util.read_text().replace('"shuffle moves data"', '"shuffle really moves data"'))
    changed = build(db, roots_for(corpus_copy))
    assert (changed.parsed, changed.unchanged, changed.relinked) == (1, 20, True)
    assert queries.remarks(db, "shuffle really moves data")[0].loc.file.endswith("Utility.cpp")
    with pytest.raises(queries.QueryError):
        queries.remarks(db, "shuffle moves data", kinds=("match-failure",))

    # a removed file leaves the index, and what it defined with it
    (corpus_copy / "lib/Dialect/ToyGPU/Transforms/FuseRelayouts.cpp").unlink()
    removed = build(db, roots_for(corpus_copy))
    assert (removed.removed, removed.relinked) == (1, True)
    assert queries.pass_info(db, "toygpu-fuse-relayouts")[0].classes == []


def test_changed_extractors_reextract_everything(tmp_path: Path):
    db = tmp_path / "index.db"
    build(db, roots_for(CORPUS))
    con = sqlite3.connect(db)
    with con:  # as if the facts had been written by an older extractor
        con.execute("UPDATE meta SET value = 'older' WHERE key = 'extractors'")
        con.execute("DELETE FROM op_sites")
    con.close()
    report = build(db, roots_for(CORPUS))
    assert (report.parsed, report.unchanged) == (21, 0)
    assert queries.creators(db, "tgpu.relayout").sites


def test_build_with_progress_display(tmp_path: Path, capsys: pytest.CaptureFixture):
    report = build(tmp_path / "index.db", roots_for(CORPUS), jobs=2, progress=True)
    assert report.parsed == 21 and not report.errors  # 16 C++, 4 TableGen, 1 pipeline file


def test_broken_pipeline_file_is_reported_and_the_rest_indexed(corpus_copy: Path, tmp_path: Path):
    broken = corpus_copy / "python/toytriton/backends/broken/compiler.py"
    broken.parent.mkdir()
    broken.write_text("def make_ttgir(:\n")
    report = build(tmp_path / "index.db", roots_for(corpus_copy))
    assert len(report.errors) == 1 and "backends/broken/compiler.py:1" in report.errors[0]
    assert report.parsed == 22
    assert queries.pass_info(tmp_path / "index.db", "toygpu-vectorize-loads")[0].pipeline


def test_missing_and_foreign_databases(tmp_path: Path):
    with pytest.raises(store.IndexDbError, match=r"no compiler index at .*compiler-index build"):
        queries.pass_info(tmp_path / "none.db", "x")
    junk = tmp_path / "junk.db"
    junk.write_text("not sqlite")
    with pytest.raises(store.IndexDbError, match=r"is not a compiler index"):
        queries.pass_info(junk, "x")
    with pytest.raises(store.IndexDbError, match=r"--rebuild"):
        build(junk, roots_for(CORPUS))
    assert junk.read_text() == "not sqlite"  # refused, not overwritten


def test_old_schema_version_is_refused_then_rebuilt(corpus_db: Path, tmp_path: Path):
    old = tmp_path / "old.db"
    shutil.copy(corpus_db, old)
    con = sqlite3.connect(old)
    with con:
        con.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
    con.close()
    with pytest.raises(store.IndexDbError, match=rf"schema version 0.*reads version {store.SCHEMA_VERSION}"):
        queries.creators(old, "tgpu.relayout")
    with pytest.raises(store.IndexDbError, match=r"--rebuild"):
        build(old, roots_for(CORPUS))
    report = build(old, roots_for(CORPUS), rebuild=True)
    assert report.parsed == 21
    assert queries.creators(old, "tgpu.relayout").sites


def test_unfinished_build_is_refused(tmp_path: Path):
    db = tmp_path / "new.db"
    store.create(db).close()  # schema written, no build finished
    with pytest.raises(store.IndexDbError, match=r"unfinished build"):
        queries.search(db, "relayout")


def test_bad_source_directory():
    with pytest.raises(SourceError, match=r"does not exist.*compiler-index fetch"):
        resolve_roots([CORPUS / "nope"], None)


def _on_a_terminal(argv: list[str]) -> tuple[int, str]:
    """Run `argv` with stdout and stderr on a pseudo-terminal, as a person at a shell would; all it printed."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        env={**os.environ, "TERM": "xterm", "COLUMNS": "160"},
        cwd=Path(__file__).resolve().parents[2],
    )
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return proc.wait(60), out.decode(errors="replace")


def test_build_on_a_terminal_shows_progress_unless_quiet(tmp_path: Path):
    """On a terminal the build draws a bar over the files it parses (all 21 of the corpus, the last one named);
    --quiet, --json and a redirected output draw none."""
    argv = [sys.executable, "-m", "compiler_index.cli", "build", "--source", str(CORPUS), "--pipeline"]
    argv += [str(CORPUS_PIPELINE), "--db", str(tmp_path / "index.db")]
    rc, shown = _on_a_terminal(argv)
    assert rc == 0
    assert "indexing" in shown and "21/21" in shown and "third_party/toyhw/toyhw.cc" in shown
    assert "21 files (21 parsed" in shown  # the report follows the bar
    rc, quiet = _on_a_terminal([*argv, "--rebuild", "--quiet"])
    assert rc == 0 and "21 files (21 parsed" in quiet and "indexing" not in quiet
    piped = subprocess.run([*argv, "--rebuild"], capture_output=True, text=True, timeout=60)
    assert piped.returncode == 0 and "indexing" not in piped.stdout + piped.stderr
