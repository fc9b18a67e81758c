"""Child processes: the project's one way to start one. Children run candidate kernels, compiles and profilers:
code that may hang, crash, fork or read the environment, so each must fail alone and leave nothing behind.

`run(argv, env=..., cwd=..., timeout_s=...)` starts the child in its own process group (a new session), collects
its stdout and stderr, and kills the whole group on every way out: the child's exit (a background grandchild it
left running dies with it), its failure, the timeout, an exception in the parent. It returns the exit status, the
output and whether the timeout ended it. `spawn` gives the same guarantee to a caller that reads the pipes itself
(ladder.sandbox supervises messages, silence and output size).

`child_env(home, extra)` is the child's environment, built from an allowlist: PATH, locale, CUDA/NVIDIA, TRITON_*,
PYTORCH_*, TORCH*, thread counts, minus every name that looks like a credential or a proxy setting; HOME and
TMPDIR in `home`; PYTHONPATH such that the child imports exactly what the parent can.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
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
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONUNBUFFERED="1",
    )
    for k, v in (extra or {}).items():
        if not _secret(k):
            env[k] = v
    return env


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
    """The child, started in a new session; its process group is killed and it is reaped when the block ends,
    however it ends. `popen`: further subprocess.Popen arguments (pipes, pass_fds)."""
    proc = subprocess.Popen(list(argv), env=dict(env), cwd=cwd, start_new_session=True, **popen)
    with proc:  # closes the pipes and reaps the child on the way out
        try:
            yield proc
        finally:
            kill_group(proc)


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
