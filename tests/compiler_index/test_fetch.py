"""`compiler-index fetch`: fails fast and says what to do where the host is unreachable; clones and verifies a
release branch (here from a local repository, with real git)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from compiler_index.fetch import FetchError, fetch, release_branch

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed once the socket is


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True, capture_output=True
    )


@pytest.fixture
def release_repo(tmp_path: Path) -> Path:
    """A small repository shaped like Triton (include/triton, lib, python/src/passes.cc) on release/3.6.x."""
    repo = tmp_path / "upstream"
    for d in ("include/triton", "lib", "python/src", "python/triton"):
        (repo / d).mkdir(parents=True)
    (repo / "python/src/passes.cc").write_text("// passes\n")
    (repo / "python/triton/__init__.py").write_text("__version__ = '3.6.0'\n")
    (repo / "lib/README").write_text("lib\n")
    (repo / "include/triton/README").write_text("include\n")
    _git("init", "-q", "-b", "main", cwd=repo)
    _git("add", ".", cwd=repo)
    _git("commit", "-qm", "v", cwd=repo)
    _git("branch", "release/3.6.x", cwd=repo)
    return repo


def test_unreachable_host_fails_fast_with_the_manual_alternative(tmp_path: Path):
    t0 = time.perf_counter()
    with pytest.raises(FetchError) as e:
        fetch("3.6.0", tmp_path / "triton", url=f"https://127.0.0.1:{_closed_port()}/triton.git")
    assert time.perf_counter() - t0 < 10
    msg = str(e.value)
    assert "cannot connect to 127.0.0.1" in msg and "release/3.6.x" in msg and "7c56a5e4" in msg
    assert not (tmp_path / "triton").exists()


def test_clone_and_verify(tmp_path: Path, release_repo: Path):
    result = fetch("3.6.0", tmp_path / "triton", url=release_repo.as_uri())
    assert (result.branch, result.version, len(result.commit)) == ("release/3.6.x", "3.6.0", 40)
    assert (tmp_path / "triton/python/src/passes.cc").exists()
    again = fetch("3.6.0", tmp_path / "triton", url="https://127.0.0.1:1/unused.git")  # already there: no network
    assert again.commit == result.commit
    with pytest.raises(FetchError, match=r"holds Triton 3.6.0, not 3.5.0"):
        fetch("3.5.0", tmp_path / "triton")


def test_missing_branch_and_bad_version(tmp_path: Path, release_repo: Path):
    with pytest.raises(FetchError, match=r"(?s)git clone .* failed.*release/3.5.x not found"):
        fetch("3.5.0", tmp_path / "t35", url=release_repo.as_uri())
    with pytest.raises(FetchError, match=r"not a version"):
        release_branch("latest")
