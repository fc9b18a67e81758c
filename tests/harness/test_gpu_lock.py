"""The GPU's reader-writer lock across processes: shared holders coexist, a measurement waits for them and then
runs alone, new shared holders queue behind a waiting measurement, and a killed holder frees the GPU."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from ladder.harness.gpu_lock import GpuLock, GpuSlot, exclusive, shared

REPO = Path(__file__).resolve().parents[2]


def _hold(lock: GpuLock, mode: str, name: str, log: list[str], release: threading.Event) -> threading.Thread:
    def body() -> None:
        with getattr(lock, mode)():
            log.append(f"{name}+")
            release.wait(30)
            log.append(f"{name}-")

    t = threading.Thread(target=body)
    t.start()
    return t


def _wait_for(log: list[str], entry: str) -> None:
    deadline = time.monotonic() + 30
    while entry not in log and time.monotonic() < deadline:
        time.sleep(0.01)
    assert entry in log, log


def test_shared_holders_run_together_and_a_measurement_waits_for_them(tmp_path):
    lock, log = GpuLock(tmp_path / "gpu.lock"), []
    go_a, go_b, go_m = threading.Event(), threading.Event(), threading.Event()
    a = _hold(lock, "shared", "a", log, go_a)
    b = _hold(lock, "shared", "b", log, go_b)
    _wait_for(log, "a+")
    _wait_for(log, "b+")  # both inside at once
    m = _hold(lock, "exclusive", "m", log, go_m)
    time.sleep(0.3)
    assert "m+" not in log  # the measurement waits while correctness runs hold the GPU
    go_a.set()
    a.join()
    time.sleep(0.3)
    assert "m+" not in log
    go_b.set()
    b.join()
    _wait_for(log, "m+")
    go_m.set()
    m.join()
    assert log.index("m+") > max(log.index("a-"), log.index("b-"))


def test_a_waiting_measurement_goes_before_later_shared_holders(tmp_path):
    lock, log = GpuLock(tmp_path / "gpu.lock"), []
    go_a, go_m, go_c = threading.Event(), threading.Event(), threading.Event()
    a = _hold(lock, "shared", "a", log, go_a)
    _wait_for(log, "a+")
    m = _hold(lock, "exclusive", "m", log, go_m)
    time.sleep(0.3)  # m is now waiting behind a
    c = _hold(lock, "shared", "c", log, go_c)
    time.sleep(0.3)
    assert "c+" not in log  # c does not slip in beside a while m waits
    go_a.set()
    _wait_for(log, "m+")
    time.sleep(0.3)
    assert "c+" not in log  # and not beside m either
    go_m.set()
    _wait_for(log, "c+")
    go_c.set()
    for t in (a, m, c):
        t.join()
    assert log == ["a+", "a-", "m+", "m-", "c+", "c-"]


def test_a_killed_holder_frees_the_gpu(tmp_path):
    path = tmp_path / "gpu.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom ladder.harness.gpu_lock import GpuLock\n"
            "with GpuLock(sys.argv[1]).exclusive():\n    print('held', flush=True)\n    time.sleep(600)\n",
            str(path),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "held"
    log: list[str] = []
    go = threading.Event()
    t = _hold(GpuLock(path), "shared", "a", log, go)
    time.sleep(0.3)
    assert log == []
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    _wait_for(log, "a+")
    go.set()
    t.join()


def _holder(path: Path, mode: str) -> subprocess.Popen:
    """Another process holding `path` through the module's helper until its stdin closes."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import sys\nfrom ladder.harness.gpu_lock import {mode}\n"
            f"with {mode}(sys.argv[1]):\n    print('held', flush=True)\n    sys.stdin.read()\n",
            str(path),
        ],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().strip() == "held"
    return proc


def _enter(cm_factory, name: str, log: list[str], release: threading.Event) -> threading.Thread:
    def body() -> None:
        with cm_factory():
            log.append(f"{name}+")
            release.wait(30)

    t = threading.Thread(target=body, daemon=True)  # a failing test does not wait for it
    t.start()
    return t


def test_the_helpers_lock_a_path_across_processes_and_only_that_path(tmp_path):
    """exclusive(path) in another process keeps this one out of exclusive(path) and shared(path) until it lets
    go; a second GPU's lock file is not held by it."""
    path = tmp_path / "gpu.lock"
    holder = _holder(path, "exclusive")
    log: list[str] = []
    go = threading.Event()
    waiting = [_enter(lambda: exclusive(str(path)), "x", log, go), _enter(lambda: shared(str(path)), "s", log, go)]
    with exclusive(str(tmp_path / "other.lock")):  # another GPU: free at once
        log.append("other")
    time.sleep(0.3)
    assert log == ["other"]  # neither helper got past the other process's lock
    holder.stdin.close()
    holder.wait()
    go.set()  # each leaves as soon as it got in: one after the other, in either order
    for t in waiting:
        t.join(30)
    assert sorted(log) == ["other", "s+", "x+"]


def test_a_shared_holder_in_another_process_admits_shared_and_excludes_a_measurement(tmp_path):
    path = tmp_path / "gpu.lock"
    holder = _holder(path, "shared")
    log: list[str] = []
    go = threading.Event()
    with shared(str(path)):
        log.append("s")
    m = _enter(lambda: exclusive(str(path)), "m", log, go)
    time.sleep(0.3)
    assert log == ["s"]
    holder.stdin.close()
    holder.wait()
    _wait_for(log, "m+")
    go.set()
    m.join()


def test_without_a_lock_file_nothing_is_locked_and_a_slot_selects_its_gpu():
    """A worker alone on its GPU passes no lock file: two exclusive holders are then inside at the same time."""
    log: list[str] = []
    go = threading.Event()
    for helper in (exclusive, shared):
        log.clear()
        go.clear()
        both = [_enter(lambda helper=helper: helper(None), name, log, go) for name in ("a", "b")]
        _wait_for(log, "a+")
        _wait_for(log, "b+")  # both inside before either lets go
        go.set()
        for t in both:
            t.join()
    slot = GpuSlot("GPU-0a1b", "irscope-gpu-0a1b.lock")
    assert slot.env() == {"CUDA_VISIBLE_DEVICES": "GPU-0a1b"}


def test_a_wait_past_its_bound_gives_up_naming_who_holds_the_gpu_and_says_so_while_it_waits(tmp_path, monkeypatch):
    from ladder.harness import gpu_lock

    monkeypatch.setattr(gpu_lock, "HEARTBEAT_S", 0.05)
    path = tmp_path / "gpu.lock"
    assert gpu_lock.holders(path).startswith("no hold of this process")
    heard: list[str] = []
    waiting = GpuLock(path, on_wait=heard.append, who="timing new_gelu", wait_s=0.3)
    with GpuLock(path, who="judge softmax").shared():
        assert gpu_lock.holders(path) == "judge softmax (shared, 0 s)"
        began = time.monotonic()
        try:
            with waiting.exclusive():
                raise AssertionError("a measurement ran beside a shared holder")
        except gpu_lock.GpuWaitTimeout as e:
            message = str(e)
        assert 0.3 <= time.monotonic() - began < 5
    # seconds as whole numbers: 0 unless this machine is slow enough to round the wait up
    assert re.fullmatch(
        r"timing new_gelu waited \d s for the GPU \(alone\) and gave up; held by: judge softmax "
        r"\(shared, \d s\)",
        message,
    ), message
    assert heard and all(re.fullmatch(r"the GPU \(alone\); held by: judge softmax \(shared, \d s\)", h) for h in heard)
    assert gpu_lock.holders(path).startswith("no hold of this process")  # released: nobody named any more
    with waiting.exclusive():  # and the lock is free again: nothing was left held by the wait that gave up
        assert gpu_lock.holders(path) == "timing new_gelu (alone, 0 s)"


def test_the_helpers_pass_who_waits_how_long_and_whom_to_tell(tmp_path, monkeypatch):
    """`shared` and `exclusive` (the helpers the harness calls) give up after the bound they are given, in the name
    of who they are given, telling their listener while they wait; two holders are both named."""
    from ladder.harness import gpu_lock

    monkeypatch.setattr(gpu_lock, "HEARTBEAT_S", 0.05)
    path = tmp_path / "gpu.lock"
    for helper, held, what in ((shared, "exclusive", "shared"), (exclusive, "shared", "alone")):
        heard: list[str] = []
        with getattr(GpuLock(path, who="holder"), held)():
            began = time.monotonic()
            try:
                with helper(path, heard.append, f"{what} waiter", 0.3):
                    raise AssertionError(f"{what} ran beside an incompatible holder")
            except gpu_lock.GpuWaitTimeout as e:
                assert str(e).startswith(f"{what} waiter waited "), str(e)
            assert 0.3 <= time.monotonic() - began < 5
        assert heard and all("held by: holder (" in h for h in heard)
    with GpuLock(path, who="judge a").shared(), GpuLock(path, who="judge b").shared():
        assert re.fullmatch(r"judge a \(shared, \d s\); judge b \(shared, \d s\)", gpu_lock.holders(path))


def test_a_wait_without_a_listener_or_within_the_heartbeat_says_nothing_and_errors_pass_through(tmp_path, monkeypatch):
    """The lock file is the owner's only (0600). A waiter with no listener gives up cleanly; within one heartbeat
    the listener hears nothing. An error of the lock call itself reaches the caller as it was, its file closed."""
    import fcntl
    import os

    from ladder.harness import gpu_lock

    path = tmp_path / "gpu.lock"
    heard: list[str] = []
    monkeypatch.setattr(gpu_lock, "HEARTBEAT_S", 0.05)
    with GpuLock(path, who="holder").exclusive():
        assert os.stat(path).st_mode & 0o777 == 0o600
        try:
            with GpuLock(path, who="silent", wait_s=0.2).shared():
                raise AssertionError("shared beside a measurement")
        except gpu_lock.GpuWaitTimeout as e:
            assert str(e).startswith("silent waited ")
        monkeypatch.setattr(gpu_lock, "HEARTBEAT_S", 30.0)
        try:
            with GpuLock(path, on_wait=heard.append, who="patient", wait_s=0.2).shared():
                raise AssertionError("shared beside a measurement")
        except gpu_lock.GpuWaitTimeout:
            pass
    assert heard == []

    def broken(fd: int, how: int) -> None:
        raise OSError(5, "the lock's file system went away")

    opened = len(os.listdir("/proc/self/fd"))
    monkeypatch.setattr(fcntl, "flock", broken)
    try:
        with GpuLock(path, who="unlucky").shared():
            raise AssertionError("locked without a lock")
    except OSError as e:
        assert e.errno == 5 and "went away" in str(e)
    assert len(os.listdir("/proc/self/fd")) == opened


class _Clock:
    """The lock's clock, moved only by its sleeps between polls, in steps a float holds exactly."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_a_wait_gives_up_only_past_its_bound_and_tells_only_past_each_heartbeat(tmp_path, monkeypatch):
    """On the lock's own clock, polled every 0.25 s: a waiter is told once a whole heartbeat (1 s) has gone by
    since it began, not when it is exactly one (the poll after, at 1.25 s; the next would be due past 2.25 s), and
    gives up on the first poll past its bound of 2 s (at 2.25 s), not on the one at exactly 2 s."""
    from ladder.harness import gpu_lock

    clock = _Clock()
    monkeypatch.setattr(gpu_lock, "time", clock)
    monkeypatch.setattr(gpu_lock, "POLL_S", 0.25)
    monkeypatch.setattr(gpu_lock, "HEARTBEAT_S", 1.0)
    path = tmp_path / "gpu.lock"
    heard_at: list[float] = []
    waiting = GpuLock(path, on_wait=lambda _: heard_at.append(clock.now - 1000.0), who="timing", wait_s=2.0)
    with GpuLock(path, who="judge").shared():
        try:
            with waiting.exclusive():
                raise AssertionError("a measurement ran beside a shared holder")
        except gpu_lock.GpuWaitTimeout as e:
            assert str(e).startswith("timing waited 2 s for the GPU (alone) and gave up; held by: judge ("), str(e)
    assert heard_at == [1.25] and clock.now - 1000.0 == 2.25


def test_a_shared_holder_sees_when_a_measurement_waits_and_when_none_does_any_more(tmp_path):
    """`measurement_waiting()`, which a shared holder asks between pieces of its work: false while it holds the GPU
    alone or beside other shared holders, true while a measurement waits behind it, false again once the
    measurement has run."""
    lock, log = GpuLock(tmp_path / "gpu.lock"), []
    go_m = threading.Event()
    with lock.shared():
        assert not lock.measurement_waiting()
        with GpuLock(tmp_path / "gpu.lock").shared():
            assert not lock.measurement_waiting()
        m = _hold(lock, "exclusive", "m", log, go_m)
        deadline = time.monotonic() + 30
        while not lock.measurement_waiting() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert lock.measurement_waiting() and log == []  # waiting, not yet in
    _wait_for(log, "m+")
    assert not lock.measurement_waiting()  # in: nobody waits any more
    go_m.set()
    m.join()
    assert not lock.measurement_waiting() and not GpuLock(tmp_path / "other.lock").measurement_waiting()
