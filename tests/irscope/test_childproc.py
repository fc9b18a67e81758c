"""irscope.childproc: a child and everything it started are gone when the call returns, however it ended; the
environment is an allowlist."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from irscope import childproc

# Starts a background grandchild, says the pids, then ends as told: normally, with an error, or never.
CHILD = """
import os, subprocess, sys, time
grandchild = subprocess.Popen(["sleep", "60"])
print(os.getpid(), grandchild.pid, flush=True)
print("to stderr", file=sys.stderr, flush=True)
mode = sys.argv[1]
if mode == "error":
    raise SystemExit(3)
if mode == "hang":
    time.sleep(60)
"""


def alive(pid: int) -> bool:
    """Running: it exists and is not a zombie (an ended process its new parent has not reaped yet)."""
    try:
        os.kill(pid, 0)
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (ProcessLookupError, FileNotFoundError):
        return False
    return state != "Z"


def gone(*pids: int) -> bool:
    deadline = time.monotonic() + 5  # SIGKILL is delivered asynchronously
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(alive(p) for p in pids)


def run(tmp_path: Path, mode: str, timeout_s: float = 30, **kwargs) -> childproc.ChildResult:
    env = childproc.child_env(tmp_path)
    return childproc.run([sys.executable, "-c", CHILD, mode], env=env, cwd=tmp_path, timeout_s=timeout_s, **kwargs)


@pytest.mark.parametrize(("mode", "returncode"), [("exit", 0), ("error", 3)])
def test_the_grandchild_dies_when_the_child_ends(tmp_path, mode, returncode):
    t0 = time.monotonic()
    r = run(tmp_path, mode)
    assert time.monotonic() - t0 < 20  # the grandchild holds the pipes open: the call must not wait for it
    assert r.returncode == returncode and not r.timed_out
    child, grandchild = map(int, r.stdout.split())
    assert r.stderr == "to stderr\n"
    assert gone(child, grandchild)


def test_the_timeout_kills_child_and_grandchild(tmp_path):
    t0 = time.monotonic()
    r = run(tmp_path, "hang", timeout_s=2, merge_stderr=True)
    assert r.timed_out and r.returncode == -9 and time.monotonic() - t0 < 20
    child, grandchild = map(int, r.stdout.split()[:2])
    assert "to stderr" in r.stdout and r.stderr == ""
    assert gone(child, grandchild)


def test_an_exception_in_the_parent_kills_the_group(tmp_path):
    with (
        pytest.raises(RuntimeError, match="parent failed"),
        childproc.spawn(
            [sys.executable, "-c", CHILD, "hang"],
            env=childproc.child_env(tmp_path),
            cwd=tmp_path,
            stdout=subprocess.PIPE,
        ) as proc,
    ):
        child, grandchild = map(int, proc.stdout.readline().split())
        raise RuntimeError("parent failed")
    assert gone(child, grandchild)


def test_child_env_is_an_allowlist(tmp_path):
    base = {
        "PATH": "/bin",
        "LC_ALL": "C",
        "CUDA_VISIBLE_DEVICES": "0",
        "TRITON_CACHE_DIR": "/x",
        "AWS_ACCESS_KEY_ID": "a",
        "TRITON_API_KEY": "k",
        "HTTPS_PROXY": "p",
        "EDITOR": "vi",
        "HOME": "/root",
    }
    env = childproc.child_env(tmp_path, {"TRITON_INTERPRET": "1", "HF_TOKEN": "t"}, base=base)
    assert env["PATH"] == "/bin" and env["LC_ALL"] == "C" and env["CUDA_VISIBLE_DEVICES"] == "0"
    assert env["HOME"] == env["TMPDIR"] == str(tmp_path) and env["TRITON_INTERPRET"] == "1"
    for dropped in ("AWS_ACCESS_KEY_ID", "TRITON_API_KEY", "HTTPS_PROXY", "EDITOR", "HF_TOKEN"):
        assert dropped not in env, dropped
    assert env["PYTHONPATH"].split(os.pathsep)[0] == str(childproc.REPO_ROOT)
