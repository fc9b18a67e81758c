"""Child processes: the project's one way to start one. Children run candidate kernels, compiles and profilers:
code that may hang, crash, fork or read the environment, so each must fail alone and leave nothing behind.

`run(argv, env=..., cwd=..., timeout_s=...)` starts the child in its own process group (a new session), collects
its stdout and stderr, and kills the whole group on every way out: the child's exit (a background grandchild it
left running dies with it), its failure, the timeout, an exception in the parent. It returns the exit status, the
output and whether the timeout ended it. `spawn` gives the same guarantee to a caller that reads the pipes itself
(ladder.sandbox supervises messages, silence and output size). `start` leaves the child running in the
background; it still dies with the parent, unless `release`d.

Children die with the parent, `kill -9` included. `spawn` does not start the command itself but a guard
(`_GUARD`, a few lines of Python): it asks Linux for a signal when its parent dies (PR_SET_PDEATHSIG), starts the
command in its own process group, and kills that whole group when the signal comes, so neither the command nor a
grandchild it started outlives the tool. `process_pool` gives workers of a ProcessPoolExecutor the same: they are
SIGKILLed when the parent dies (`die_with_parent`). Linux sends that signal when the *thread* that started the
process ends: start children from a thread that outlives them (spawn's block and a pool's `with` ensure it).
When the parent dies, the guard kills every process descending from it, those that moved to a session of their
own included; a grandchild that double-forked away (reparented to init) escapes it, and only a PID namespace
confines that.

`child_env(home, extra)` is the child's environment, built from an allowlist: PATH, locale, CUDA/NVIDIA, TRITON_*,
PYTORCH_*, TORCH*, thread counts, minus every name that looks like a credential or a proxy setting; HOME and
TMPDIR in `home`; PYTHONPATH such that the child imports exactly what the parent can; compiled bytecode kept in
`bytecode_cache()` rather than beside the sources (PYTHONPYCACHEPREFIX).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

REPO_ROOT = Path(__file__).resolve().parent.parent

KEPT_NAMES = frozenset(
    {
        "PATH",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TERM",
        "LD_LIBRARY_PATH",
        "CC",
        "CXX",
        "PYTHONHASHSEED",
        "OMP_NUM_THREADS",
        "MKL_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
    }
)
KEPT_PREFIXES = ("LC_", "CUDA_", "NVIDIA_", "TRITON_", "PYTORCH_", "TORCH_", "TORCHINDUCTOR_")
# A kept name is still dropped when it contains one of these (case-insensitive).
SECRET_MARKERS = (
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "SESSION",
    "PRIVATE",
    "OPENAI",
    "ANTHROPIC",
    "AWS",
    "AZURE",
    "GOOGLE",
    "GCP",
    "HF_",
    "HUGGING",
    "GITHUB",
    "GITLAB",
    "SSH",
    "GPG",
    "NETRC",
    "PROXY",
)
READ_GRACE_S = 5.0  # after the group is killed: how long to wait for output held by a process that left the group
PR_SET_PDEATHSIG = 1  # prctl(2): the signal this process gets when its parent dies
READY_WAIT_S = 5.0  # how long `release` waits for a guard just started to block its signals (Python starting up)

# The guard between the caller and the command: `python -I -S -c _GUARD PARENT_PID ARGV...`. It blocks the signals
# it waits for before asking for the parent-death signal (so none is lost), checks the parent did not die before
# that, starts the command (signal mask and dispositions as a plain exec would leave them), lets go of every pipe
# end (the caller's end-of-file must mean the command's group is done, as without a guard), then waits: the parent's
# death or a stop signal kills every descendant (those that moved to a session of their own too: bwrap's sandbox
# init does, before it asks for its own parent-death signal) and then the group; SIGUSR2 (release) lets it outlive
# the parent; the command's end is passed on as the guard's own exit status or signal.
_GUARD = """
import ctypes, os, resource, signal, sys
parent, argv = int(sys.argv[1]), sys.argv[2:]
stop = {signal.SIGUSR1, signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
waited = stop | {signal.SIGCHLD, signal.SIGUSR2}
signal.pthread_sigmask(signal.SIG_BLOCK, waited)
ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGUSR1))
if os.getppid() != parent:
    os._exit(1)
child = os.fork()
if child == 0:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, waited)
    for s in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(s, signal.SIG_DFL)
    try:
        os.execvp(argv[0], argv)
    except OSError as e:
        os.write(2, f"{argv[0]}: {e.strerror}\\n".encode())
    os._exit(127)
def descendants():
    children = {}
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                children.setdefault(int(f.read().rpartition(")")[2].split()[1]), []).append(int(entry))
        except (OSError, ValueError):
            continue
    found, todo = [], [os.getpid()]
    while todo:
        for pid in children.get(todo.pop(), ()):
            found.append(pid)
            todo.append(pid)
    return found
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
os.closerange(3, os.sysconf("SC_OPEN_MAX"))
while True:
    signo = signal.sigwaitinfo(waited).si_signo
    if signo in stop:
        for pid in descendants():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        os.killpg(0, signal.SIGKILL)
    if signo == signal.SIGUSR2:
        ctypes.CDLL(None, use_errno=True).prctl(1, 0)
    pid, status = os.waitpid(child, os.WNOHANG)
    if pid:
        break
if os.WIFSIGNALED(status):
    sig = os.WTERMSIG(status)
    resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
    os.kill(os.getpid(), sig)
os._exit(os.waitstatus_to_exitcode(status))
"""


@dataclass(frozen=True)
class ChildResult:
    returncode: int  # negative: ended by that signal (-9 after a timeout)
    stdout: str
    stderr: str  # empty when run merged it into stdout
    timed_out: bool


def child_env(
    home: Path, extra: Mapping[str, str] | None = None, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The allowlisted part of `base` (default: this process's environment), HOME and TMPDIR in `home`, the
    parent's import path, then `extra` (whose credential-like names are dropped too)."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if _kept(k)}
    env.update(
        HOME=str(home),
        TMPDIR=str(home),
        PYTHONPATH=python_path(),
        PYTHONNOUSERSITE="1",
        PYTHONPYCACHEPREFIX=str(bytecode_cache()),
        PYTHONUNBUFFERED="1",
    )
    for k, v in (extra or {}).items():
        if not _secret(k):
            env[k] = v
    return env


def bytecode_cache(kind: str = "children") -> Path:
    """Where child interpreters keep the bytecode of what they import (PYTHONPYCACHEPREFIX):
    `$XDG_CACHE_HOME/irscope/bytecode/<kind>`. An installation shipped without .pyc files, or one a child cannot
    write (read-only, or a sandbox), otherwise has every child compile torch's and Triton's modules from source
    again: 8 s of CPU per child, a third of a sandboxed runner's start on the H200 machine (docs/results/
    engine-h200). Python checks each entry against its source's size and time, so a stale one is never used."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "irscope" / "bytecode" / kind


def python_path() -> str:
    """The repository first, then every directory on the parent's sys.path: the child imports exactly what the
    parent can (site-packages in a user directory included, although HOME moves and user site is off)."""
    entries = [str(REPO_ROOT)] + [p for p in sys.path if p and os.path.isdir(p)]
    return os.pathsep.join(dict.fromkeys(entries))


def _kept(name: str) -> bool:
    return (name in KEPT_NAMES or name.startswith(KEPT_PREFIXES)) and not _secret(name)


def _secret(name: str) -> bool:
    upper = name.upper()
    return any(m in upper for m in SECRET_MARKERS)


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the child's whole process group (a no-op once every member is gone)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


@contextlib.contextmanager
def spawn(argv: Sequence[str], *, env: Mapping[str, str], cwd: str | Path, **popen: Any) -> Iterator[subprocess.Popen]:
    """The child, started in a new session under the guard; its process group is killed and the guard reaped when
    the block ends, however it ends, and when this process dies. `popen`: further subprocess.Popen arguments
    (pipes, pass_fds). proc.pid is the guard's (the group's), proc.returncode the command's."""
    proc = start(argv, env=env, cwd=cwd, **popen)
    with proc:  # closes the pipes and reaps the child on the way out
        try:
            yield proc
        finally:
            kill_group(proc)


def start(argv: Sequence[str], *, env: Mapping[str, str], cwd: str | Path, **popen: Any) -> subprocess.Popen:
    """The child, started in a new session under the guard and left running: it and its group die when this
    process (the calling thread) ends, `kill -9` included. The caller waits for it, or ends it with kill_group."""
    argv = list(argv)
    env = dict(env)
    _check_executable(argv[0], env, cwd)
    guard = [sys.executable, "-I", "-S", "-c", _GUARD, str(os.getpid()), *argv]
    return subprocess.Popen(guard, env=env, cwd=cwd, start_new_session=True, **popen)


def release(proc: subprocess.Popen) -> None:
    """Let a child from `start` outlive this process: its guard stops watching for the parent's death. For work a
    normal exit should leave to finish (an atexit handler); `kill -9` gives no chance to call it."""
    deadline = time.monotonic() + READY_WAIT_S
    while proc.poll() is None and not _has_child(proc.pid):
        if time.monotonic() > deadline:
            return  # a guard that never got going: it dies with this process, as if not released
        time.sleep(0.001)
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGUSR2)


def _has_child(pid: int) -> bool:
    """The guard has started its command, so it blocks the signals it waits for (before that, SIGUSR2 would kill
    it). Its signal mask in /proc cannot tell: sigwaitinfo unblocks the signals it waits for while it waits."""
    return any(_parent_of(entry) == pid for entry in os.listdir("/proc") if entry.isdigit())


def _parent_of(pid: str) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
    except (FileNotFoundError, ProcessLookupError):
        return None


def _check_executable(program: str, env: Mapping[str, str], cwd: str | Path) -> None:
    """Raise what Popen raises for a command that cannot start: the guard would only exit 127."""
    if os.sep in program:  # a path, relative to the child's working directory
        found: str | None = os.path.join(cwd, program)
    else:
        found = shutil.which(program, path=env.get("PATH", os.defpath))
    if found is None or not os.access(found, os.X_OK):
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)


def die_with_parent(parent: int) -> None:
    """In a process `parent` started: be SIGKILLed when that parent (the thread that started this one) ends, at
    once if it already has. A no-op where prctl does not exist (not Linux)."""
    prctl = getattr(ctypes.CDLL(None, use_errno=True), "prctl", None)
    if prctl is None:
        return
    prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL))
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)


def process_pool(workers: int) -> ProcessPoolExecutor:
    """A process pool whose workers die with this process. Forked (Python 3.11's default on Linux, pinned: the
    worker's parent must be this process, not a forkserver) from the calling thread, which must outlive the pool:
    use it in a `with` block."""
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("fork"),
        initializer=die_with_parent,
        initargs=(os.getpid(),),
    )


def run(
    argv: Sequence[str], *, env: Mapping[str, str], cwd: str | Path, timeout_s: float, merge_stderr: bool = False
) -> ChildResult:
    """Run the child to its end or the timeout, whichever comes first; the group is killed either way, so a
    grandchild holding the output pipes open cannot keep the call waiting."""
    stderr = subprocess.STDOUT if merge_stderr else subprocess.PIPE
    with spawn(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr) as proc:
        readers = [_Reader(proc.stdout), _Reader(proc.stderr)]
        timed_out = False
        try:
            returncode = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        kill_group(proc)
        if timed_out:
            returncode = proc.wait()
        stdout, stderr_text = (r.text() for r in readers)
    return ChildResult(returncode, stdout, stderr_text, timed_out)


class _Reader:
    """Reads one pipe to its end on a thread, so neither pipe can fill up and stall the child."""

    def __init__(self, stream: IO[bytes] | None):
        self._chunks: list[bytes] = []
        self._thread = None if stream is None else threading.Thread(target=self._read, args=(stream,), daemon=True)
        if self._thread is not None:
            self._thread.start()

    def _read(self, stream: IO[bytes]) -> None:
        with contextlib.suppress(OSError, ValueError):  # closed under it: a process outside the group held it open
            while chunk := os.read(stream.fileno(), 65536):
                self._chunks.append(chunk)

    def text(self) -> str:
        if self._thread is not None:
            self._thread.join(READ_GRACE_S)
        return b"".join(self._chunks).decode(errors="replace")
