"""`kill -9` on each long-running command, mid-work: no process of its tree survives it, no finished record is lost
or recorded twice, what the kill left on disk is dealt with, and running the same command again completes.

The command is frozen while the test looks at it (tests/proctree.py kill_when), so the kill lands exactly in the
state the test waited for: extraction workers busy (`compiler-index build`), a round begun but not committed and a
child of it running (`ladder optimize`, `ladder suite --jobs 2`). Real processes, real compiles, a real index."""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from compiler_index import store
from compiler_index.store import IndexDbError
from ladder.loop import round_dir
from ladder.records import History
from tests.proctree import age_s, describe, kill_when, survivors

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "compiler_index" / "corpus"
STALE = "left-by-the-killed-run"  # a file planted in a killed round's directory: a resumed round must not keep it


def env(home: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": str(home), "PYTHONPATH": str(REPO)}


# compiler-index build


def index_build(src: Path, db: Path) -> list[str]:
    cmd = [sys.executable, "-m", "compiler_index.cli", "build", "--source", str(src), "--db", str(db)]
    return [*cmd, "--no-pipeline", "--jobs", "2", "--quiet"]


def add_bulk(src: Path, files: int = 80, functions: int = 300) -> None:
    """C++ that keeps two extraction workers busy for a few seconds: chains of distinct functions (distinct names keep
    the link step linear)."""
    for i in range(files):
        chain = "".join(
            f"int bulk_{i}_{j}(int x) {{\n  if (x > {j}) return bulk_{i}_{j + 1}(x - 1);\n  return x * {j};\n}}\n"
            for j in range(functions)
        )
        d = src / "lib" / f"Bulk{i}"
        d.mkdir(parents=True)
        (d / "Bulk.cpp").write_text(f"int bulk_{i}_{functions}(int x);\n{chain}")


def indexed(db: Path) -> tuple[list[tuple], int, dict[str, str]]:
    """Every file row (path, hash), the function count and the meta table, read from the index as a query would."""
    con = store.open_index(db)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        files = [tuple(r) for r in con.execute("SELECT path, sha1 FROM files ORDER BY path")]
        functions = con.execute("SELECT count(*) FROM functions").fetchone()[0]
        return files, functions, store.get_meta(con)
    finally:
        con.close()


def assert_completes_as_a_clean_build(src: Path, db: Path, home: Path) -> None:
    """The same command again finishes, and its index holds what a build never killed holds, each file once."""
    clean = home / "clean.db"
    for target in (db, clean):
        r = subprocess.run(index_build(src, target), env=env(home), capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
    files, functions, _ = indexed(db)
    assert (files, functions) == indexed(clean)[:2]
    assert len({path for path, _ in files}) == len(files) and functions > 80 * 300  # the bulk files are in


def workers_busy(tree: set[int]) -> bool:
    return len(tree) >= 2  # both extraction processes started and not yet joined


@pytest.mark.slow
def test_kill_9_mid_index_update_keeps_the_previous_index_and_leaves_no_worker(tmp_path):
    src, db = tmp_path / "src", tmp_path / "index.db"
    shutil.copytree(CORPUS, src)
    first = subprocess.run(index_build(src, db), env=env(tmp_path), capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    before = indexed(db)
    add_bulk(src)

    proc = subprocess.Popen(index_build(src, db), env=env(tmp_path), stdout=subprocess.DEVNULL)
    tree = kill_when(proc, workers_busy, timeout_s=120)
    assert proc.returncode == -signal.SIGKILL
    assert not survivors(tree), "extraction workers outlived the build"
    assert indexed(db) == before  # the update was one transaction: the previous index, whole and unchanged

    assert_completes_as_a_clean_build(src, db, tmp_path)


@pytest.mark.slow
def test_kill_9_mid_first_index_build_leaves_an_unfinished_index_that_is_refused_then_rebuilt(tmp_path):
    src, db = tmp_path / "src", tmp_path / "index.db"
    shutil.copytree(CORPUS, src)
    add_bulk(src)
    proc = subprocess.Popen(index_build(src, db), env=env(tmp_path), stdout=subprocess.DEVNULL)
    tree = kill_when(proc, workers_busy, timeout_s=120)
    assert not survivors(tree), "extraction workers outlived the build"
    with pytest.raises(
        IndexDbError, match=r"is an unfinished build \(it was interrupted\); run `compiler-index build` again"
    ):
        store.open_index(db)
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("SELECT count(*) FROM files").fetchone()[0] == 0  # none of the killed build's rows
    con.close()
    assert_completes_as_a_clean_build(src, db, tmp_path)


# ladder optimize / ladder suite


def committed(out: Path) -> dict[str, int]:
    """The last committed round of each operator, read without a write lock (the run may be frozen holding one)."""
    path = out / "history.sqlite"
    if not path.exists():
        return {}
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return dict(con.execute("SELECT op, max(round) FROM rounds GROUP BY op"))
    except sqlite3.OperationalError:  # the schema is not written yet
        return {}
    finally:
        con.close()


def rounds_in_flight(out: Path, ops: list[str]) -> dict[str, int]:
    """op -> the round begun (its directory made) and not committed, from round 1 on."""
    last = committed(out)
    return {op: last[op] + 1 for op in ops if op in last and round_dir(out, op, last[op] + 1).is_dir()}


LADDER_RUNS = {
    "optimize": (["new_gelu"], ["optimize", "new_gelu"]),
    "suite --jobs 2": (["new_gelu", "softplus"], ["suite", "--ops", "new_gelu,softplus", "--jobs", "2"]),
}


@pytest.mark.slow
@pytest.mark.parametrize("command", LADDER_RUNS)
def test_kill_9_mid_round_leaves_no_child_no_half_round_and_the_resume_redoes_it_from_scratch(tmp_path, command):
    ops, args = LADDER_RUNS[command]
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "ladder.cli", *args, "--offline", "--validator", "interpret", "--rounds", "2"]
    cmd += ["--out", str(out), "--quiet"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env(tmp_path), stdout=subprocess.DEVNULL)
    # a round in flight and one of its children (a candidate check or the interpreter validating) just started: it
    # has seconds of work ahead, so only the kill can end it within the second allowed below
    tree = kill_when(
        proc, lambda tree: any(age_s(p) < 0.5 for p in tree) and bool(rounds_in_flight(out, ops)), timeout_s=300
    )
    assert proc.returncode == -signal.SIGKILL
    # the children are killed at once, not left to finish their few seconds of work
    left = survivors(tree, within_s=1.0)
    assert not left, f"children of the killed run are still running: {describe(left)}"

    killed = rounds_in_flight(out, ops)
    with History(out) as h:
        before = {(r.op, r.round): r.to_json() for r in h.rounds()}
    assert killed and all((op, n) not in before for op, n in killed.items())  # no half-written round
    for op, n in killed.items():
        rdir = round_dir(out, op, n)
        assert (rdir / "base.py").is_file()  # what the kill left: the round's directory, begun, not committed
        (rdir / STALE).write_text("")

    done = subprocess.run(cmd, cwd=tmp_path, env=env(tmp_path), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    with History(out) as h:
        after = {(r.op, r.round): r for r in h.rounds()}
    assert {k: after[k].to_json() for k in before} == before  # nothing finished was redone or changed
    rows = sqlite3.connect(out / "history.sqlite").execute(
        "SELECT count(*), count(DISTINCT op || '/' || round) FROM rounds"
    )
    assert rows.fetchone() == (len(after),) * 2
    for op, n in killed.items():
        r, rdir = after[(op, n)], round_dir(out, op, n)
        assert not (rdir / STALE).exists()  # the resumed round began in a fresh directory
        assert json.loads((rdir / "validation.json").read_text()) == r.validation.to_json()
        assert (rdir / "candidate.py").read_text() == r.rewrite.source  # the files are the committed round's
