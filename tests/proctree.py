"""Process trees read from /proc, for the tests that kill a parent: which processes descend from one, and
whether a set of them is gone."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


def state(pid: int) -> str | None:
    """Its state letter (R running, S sleeping, T stopped, Z zombie, …); None once it is gone."""
    try:
        return _stat(pid)[0]
    except (FileNotFoundError, ProcessLookupError):
        return None


def _stat(pid: int) -> tuple[str, int]:
    """State and parent pid (the fields after the command name, which may itself hold spaces and parentheses)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return fields[0], int(fields[1])


def group_of(pid: int) -> int | None:
    """Its process group id; None once it is gone."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[2])
    except (FileNotFoundError, ProcessLookupError):
        return None


def descendants(pid: int) -> set[int]:
    """Every running process below `pid` now (children, grandchildren, …)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                state, ppid = _stat(int(entry))
            except (FileNotFoundError, ProcessLookupError):
                continue
            if state != "Z":
                children.setdefault(ppid, []).append(int(entry))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def age_s(pid: int) -> float:
    """Seconds since it started (0 once it is gone)."""
    try:
        started = int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[19])  # starttime, in ticks
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    return uptime - started / os.sysconf("SC_CLK_TCK")


def alive(pid: int) -> bool:
    """Running: it exists and is not a zombie (an ended process its new parent has not reaped yet)."""
    return state(pid) not in (None, "Z")


def survivors(pids: set[int] | list[int] | tuple[int, ...], within_s: float = 5.0) -> set[int]:
    """Those of `pids` still running after `within_s` (SIGKILL and the parent-death signal are asynchronous)."""
    deadline = time.monotonic() + within_s
    while (left := {p for p in pids if alive(p)}) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def describe(pids: set[int]) -> str:
    """Each pid with its state, age and command line, for a failure message."""
    lines = []
    for pid in sorted(pids):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:300]
        except (FileNotFoundError, ProcessLookupError):
            argv = "(gone)"
        lines.append(f"{pid} [{state(pid)}, {age_s(pid):.1f} s] {argv}")
    return "; ".join(lines)


def gone(*pids: int) -> bool:
    return not survivors(pids)


def kill_when(proc: subprocess.Popen, ready: Callable[[set[int]], bool], timeout_s: float) -> set[int]:
    """SIGKILL `proc` at a moment when `ready(its descendants)` holds, and return those descendants.

    The process is frozen (SIGSTOP) for each look, so what the test saw is what it kills: it cannot commit a round
    or finish between the look and the kill. Its children keep running meanwhile."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"it ended (exit {proc.returncode}) before the moment to kill it came"
        os.kill(proc.pid, signal.SIGSTOP)
        while state(proc.pid) not in ("T", "t", None):
            time.sleep(0.005)
        tree = descendants(proc.pid)
        if ready(tree):
            proc.kill()
            proc.wait()
            return tree
        os.kill(proc.pid, signal.SIGCONT)
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"the moment to kill it did not come within {timeout_s:g} s")
