"""irscope.childproc: a child and everything it started are gone when the call returns, however it ended, and
when the parent is killed with SIGKILL (pool workers too); the environment is an allowlist."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from irscope import childproc
from tests.proctree import descendants, gone, group_of, survivors

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


def run(tmp_path: Path, mode: str, timeout_s: float = 30, **kwargs) -> childproc.ChildResult:
    env = childproc.child_env(tmp_path)
    return childproc.run([sys.executable, "-c", CHILD, mode], env=env, cwd=tmp_path, timeout_s=timeout_s, **kwargs)


@pytest.mark.parametrize(("mode", "returncode"), [("exit", 0), ("error", 3)])
def test_the_grandchild_dies_when_the_child_ends(tmp_path, mode, returncode):
    t0 = time.monotonic()
    r = run(tmp_path, mode)
    # The grandchild holds the pipes open: the call kills the group as soon as the child ends, rather than wait
    # out the read grace (the group would still die at the block's end, but only after READ_GRACE_S).
    assert time.monotonic() - t0 < childproc.READ_GRACE_S
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


# A parent that starts the CHILD above (in hang mode) under childproc.spawn, from its main thread or a worker thread,
# and waits forever; the child writes its pids to the parent's stdout (inherited).
PARENT = """
import sys, threading
from pathlib import Path
from irscope import childproc
child, where, home = sys.argv[1], sys.argv[2], sys.argv[3]
def start():
    with childproc.spawn([sys.executable, "-c", child, "hang"], env=childproc.child_env(Path(home)), cwd=home):
        threading.Event().wait()
if where == "thread":
    threading.Thread(target=start).start()
else:
    start()
"""


# CHILD, but its grandchild leaves the process group for a session of its own (as bwrap's sandbox init does)
SESSION_CHILD = CHILD.replace(
    'subprocess.Popen(["sleep", "60"])', 'subprocess.Popen(["sleep", "60"], start_new_session=True)'
)


@pytest.mark.parametrize(
    ("where", "child"), [("main", CHILD), ("thread", CHILD), ("main", SESSION_CHILD)], ids=["main", "thread", "setsid"]
)
def test_killing_the_parent_with_sigkill_kills_child_and_grandchild(tmp_path, where, child):
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, child, where, str(tmp_path)],
        env=childproc.child_env(tmp_path),
        stdout=subprocess.PIPE,
        text=True,
    )
    child, grandchild = map(int, parent.stdout.readline().split())
    tree = descendants(parent.pid)
    assert {child, grandchild} < tree  # and the guard between parent and child
    parent.kill()
    parent.wait()
    assert not survivors(tree)


def test_a_killed_guard_leaves_the_group_to_the_caller(tmp_path):
    """SIGTERM to the guard (what a caller's terminate() sends) ends the whole group, not the guard alone."""
    with childproc.spawn(
        [sys.executable, "-c", CHILD, "hang"], env=childproc.child_env(tmp_path), cwd=tmp_path, stdout=subprocess.PIPE
    ) as proc:
        child, grandchild = map(int, proc.stdout.readline().split())
        proc.terminate()
        assert gone(child, grandchild)
        assert proc.wait() == -signal.SIGKILL


@pytest.mark.parametrize(
    ("code", "returncode"),
    [("raise SystemExit(7)", 7), ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", -signal.SIGSEGV)],
)
def test_the_guard_passes_on_the_exit_status_and_the_signal(tmp_path, code, returncode):
    r = childproc.run([sys.executable, "-c", code], env=childproc.child_env(tmp_path), cwd=tmp_path, timeout_s=30)
    assert r.returncode == returncode and not r.timed_out
    assert not list(tmp_path.glob("core*"))  # a crash passed on as a signal leaves no core dump of the guard


def test_a_missing_program_raises_as_popen_does_and_a_relative_path_is_the_working_directorys(tmp_path):
    env = childproc.child_env(tmp_path)
    for missing in ("no-such-program", "./no-such-program"):
        with pytest.raises(FileNotFoundError, match="no-such-program"):
            childproc.run([missing], env=env, cwd=tmp_path, timeout_s=30)
    tool = tmp_path / "tool.sh"
    tool.write_text("#!/bin/sh\necho here\n")
    tool.chmod(0o755)
    assert Path.cwd() != tmp_path
    assert childproc.run(["./tool.sh"], env=env, cwd=tmp_path, timeout_s=30).stdout == "here\n"


# A parent with a process_pool of two workers busy for a minute (forked as the tasks are submitted); it says so.
POOL_PARENT = """
import threading, time
from irscope import childproc
pool = childproc.process_pool(2)
futures = [pool.submit(time.sleep, 60) for _ in range(2)]
print("submitted", flush=True)
threading.Event().wait()
"""


def test_pool_workers_die_with_a_killed_parent(tmp_path):
    parent = subprocess.Popen(
        [sys.executable, "-c", POOL_PARENT], env=childproc.child_env(tmp_path), stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout.readline() == "submitted\n"
    tree = descendants(parent.pid)
    assert len(tree) == 2  # the workers, children of the parent
    parent.kill()
    parent.wait()
    assert not survivors(tree)


# A parent that starts two background children (`start`), releases the second, says the two guards' pids (each
# leads its child's process group) and waits to be killed.
STARTING_PARENT = """
import sys, threading
from pathlib import Path
from irscope import childproc
child, home = sys.argv[1], sys.argv[2]
env = childproc.child_env(Path(home))
kept, released = (childproc.start([sys.executable, "-c", child, "hang"], env=env, cwd=home) for _ in range(2))
childproc.release(released)
print(kept.pid, released.pid, flush=True)
threading.Event().wait()
"""


def test_a_started_child_dies_with_its_parent_and_a_released_one_outlives_it(tmp_path):
    parent = subprocess.Popen(
        [sys.executable, "-c", STARTING_PARENT, CHILD, str(tmp_path)],
        env=childproc.child_env(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,  # the children inherit no pipe from here: their pids come from /proc
        stderr=subprocess.DEVNULL,
    )
    tree: set[int] = set()
    try:
        deadline = time.monotonic() + 30
        while len(tree := descendants(parent.pid)) < 6:  # two guards, their children and grandchildren
            assert time.monotonic() < deadline, f"the children did not start: {tree}"
            time.sleep(0.05)
        guards = {p for p in tree if group_of(p) == p}
        assert len(guards) == 2
        time.sleep(0.5)  # the release (a signal) has reached its guard
        parent.kill()
        parent.wait()
        outlived = survivors(tree, within_s=2.0)
        groups = {group_of(p) for p in outlived}
        assert len(groups) == 1 and groups < guards  # one whole group lives on: the released one
        assert len(outlived) == 3  # its guard, child and grandchild
    finally:  # nothing this test started outlives it, whatever failed
        parent.kill()
        parent.wait()
        for pid in survivors(tree, within_s=0):
            os.kill(pid, signal.SIGKILL)


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
