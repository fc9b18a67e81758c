"""compiler-index on awkward input: a database path SQLite would read as a URI, a build with no compiler sources."""

from pathlib import Path

import pytest

from compiler_index.cli import main

from .conftest import CORPUS, CORPUS_PIPELINE


@pytest.mark.parametrize("name", ["run#1", "what?", "50% done", "ünï code"])
def test_a_database_path_with_uri_characters_works(name, tmp_path: Path, capsys):
    db = str(tmp_path / name / "index.db")
    assert main(["build", "--source", str(CORPUS), "--pipeline", str(CORPUS_PIPELINE), "--db", db]) == 0
    capsys.readouterr()
    # the read-only schema check opened "file:…/run" (a '#' or '?' ends a URI's path) and called it no index
    assert main(["pass", "toygpu-vectorize-loads", "--db", db]) == 0
    assert "toygpu-vectorize-loads" in capsys.readouterr().out


def test_build_without_sources_says_how_to_get_them(tmp_path: Path, capsys):
    db = tmp_path / "index.db"
    assert main(["build", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("compiler-index build: error: no compiler sources to index (no --source); get Triton's")
    assert "`compiler-index fetch --triton-version 3.6.0 --into third_party/triton`" in err
    assert "third_party/README.md" in err and len(err.strip().splitlines()) == 1
    assert not db.exists()


def test_a_query_on_an_index_without_sources_says_why_it_finds_nothing(tmp_path: Path, capsys):
    db = str(tmp_path / "index.db")
    assert main(["build", "--pipeline", str(CORPUS_PIPELINE), "--db", db]) == 0  # explicitly: the pipeline alone
    capsys.readouterr()
    assert main(["pass", "tritongpu-remove-layout-conversions", "--db", db]) == 2
    err = capsys.readouterr().err
    assert "no pass named 'tritongpu-remove-layout-conversions' in the index" in err
    assert f"the index {db} holds no compiler sources: get Triton's source with `compiler-index fetch" in err
