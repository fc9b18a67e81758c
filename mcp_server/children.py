"""Code-running tools in child processes. Capturing or diagnosing a kernel imports the user's module, which runs
whatever it holds: it runs in a child (irscope.childproc) with an allowlisted environment (no credentials), its own
process group killed on every way out, and a timeout. The child is the project's own command line, so it
specializes and reports a kernel exactly as `irscope dump` and `ladder diagnose` do.

The child is confined (ladder.confine: bubblewrap, no network, rlimits, a user id of its own under a root server):
it sees the system, Python and the project's packages read-only, the kernel's folder read-only, and writes only
the tool's fresh output directory (and files of the server's it names, such as a capture's lock) and a scratch
directory (HOME, TMPDIR, Triton's cache) removed when it ends. Afterwards the output directory is taken back:
anything in it that is not a plain file or directory (a link the module planted, a FIFO) discards the output before
the server reads it, and under a root server what the child wrote is owned by the server again. Only where no
confinement works and the server was started with --unsafe-no-sandbox does the child run as a plain child process,
in the workspace, with HOME and TMPDIR in STATE_DIR/home."""

from __future__ import annotations

import json
import os
import runpy
import shutil
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irscope.childproc import ChildResult, child_env, run
from ladder.confine import Confinement, enter, prepare_scratch, sandbox_uid
from mcp_server.bounds import first_line
from mcp_server.workspace import Workspace

DEFAULT_TIMEOUT_S = 300.0
COMPILE_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


class ChildError(RuntimeError):
    """The child failed; the message is its one-line reason."""


@dataclass(frozen=True)
class Specialization:
    """A kernel's specialization as the tools take it, turned into `irscope dump`'s arguments
    (irscope.capture.arguments parses them in the child)."""

    args: dict[str, str]
    constexprs: dict[str, Any]
    options: dict[str, int | None]
    target: str

    def argv(self) -> list[str]:
        out = ["--target", self.target]
        out += [f"--arg={k}={_text(v)}" for k, v in self.args.items()]
        out += [f"--constexpr={k}={_text(v)}" for k, v in self.constexprs.items()]
        for k in COMPILE_OPTIONS:
            if self.options.get(k) is not None:
                out += [f"--{k.replace('_', '-')}", str(self.options[k])]
        return out


def _text(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def run_module(
    ws: Workspace,
    confinement: Confinement | None,
    module: str,
    argv: list[str],
    *,
    kernel: Path,
    out: Path,
    writable: Sequence[Path] = (),
    timeout_s: float,
) -> ChildResult:
    """`python -m module argv…` as a child that imports `kernel` and writes into `out` (a fresh directory of the
    server's); confined unless `confinement` is None (--unsafe-no-sandbox where none works). writable: further
    files of the server's it writes (a lock file)."""
    if confinement is None:
        return run([sys.executable, "-m", module, *argv], env=child_env(ws.home), cwd=ws.root, timeout_s=timeout_s)
    _check_readable(ws, kernel)
    scratch = ws.fresh("scratch", out.name)
    uid = sandbox_uid()
    try:
        prepare_scratch(scratch, uid)
        if uid is not None:
            for p in (out, *writable):
                os.chown(p, uid, uid)  # the child's id must write them; taken back below
        # caches in the scratch: a persistent one would let one module plant compiled code for the next capture
        caches = {
            "TRITON_CACHE_DIR": "triton-cache",
            "TORCHINDUCTOR_CACHE_DIR": "inductor-cache",
            "XDG_CACHE_HOME": ".cache",
        }
        env = child_env(scratch, {k: str(scratch / v) for k, v in caches.items()})
        inner = [sys.executable, "-P", "-m", __name__, json.dumps(confinement.child_limits(uid)), module, *argv]
        argv = confinement.command(
            inner, scratch=scratch, env=env, read_only=[kernel.parent], writable=[out, *writable]
        )
        result = run(argv, env=env, cwd=scratch, timeout_s=timeout_s)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        strays = _take_back(out, writable)
    if strays:
        shutil.rmtree(out, ignore_errors=True)
        raise ChildError(
            f"the kernel's module left what is neither a plain file nor a directory in its output "
            f"({ws.relative(strays[0])}: a link, FIFO or device; {len(strays)} in all); the output was discarded unread"
        )
    return result


def _check_readable(ws: Workspace, kernel: Path) -> None:
    """Under a root server the confined child has a user id of its own: it reads the kernel as any other user."""
    if os.geteuid() != 0:
        return
    if not (kernel.stat().st_mode & stat.S_IROTH and kernel.parent.stat().st_mode & stat.S_IXOTH):
        raise ChildError(
            f"{ws.relative(kernel)}: the confined child runs under a user id of its own and cannot read it; make "
            "the file and its folder readable by others (chmod o+r FILE; chmod o+rx FOLDER)"
        )


def _take_back(out: Path, files: Sequence[Path]) -> list[Path]:
    """After the child: entries of `out` that are neither plain files nor directories (removed: the server would
    follow a link out of the workspace, or block on a FIFO); the rest, and `files`, owned by this process again."""
    strays: list[Path] = []
    me = (os.geteuid(), os.getegid())
    for top, dirs, names in os.walk(out):
        for name in [*dirs, *names]:
            p = Path(top, name)
            mode = p.lstat().st_mode
            if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
                if me[0] == 0:
                    os.chown(p, *me, follow_symlinks=False)
            else:
                strays.append(p)
                p.unlink()
        dirs[:] = [d for d in dirs if Path(top, d) not in strays]
    if me[0] == 0:
        for p in (out, *files):
            os.chown(p, *me, follow_symlinks=False)
    return strays


def failure(result: ChildResult, what: str) -> ChildError:
    """The child's reason: its `error:` line (the command lines' clear errors), else its last words."""
    if result.timed_out:
        return ChildError(f"{what} timed out and was stopped; raise timeout_s or capture a smaller kernel")
    lines = [ln.strip() for ln in result.stderr.splitlines() if ln.strip()]
    marked = [i for i, ln in enumerate(lines) if "error:" in ln or ln.startswith("ladder: ")]
    if marked:
        # rich wraps long lines at 200 columns: the reason is the marked line and what follows it
        reason = " ".join(lines[marked[-1] :])
        reason = reason.split("error:", 1)[1] if "error:" in reason else reason.removeprefix("ladder: ")
        return ChildError(first_line(reason.strip(), 400))
    tail = lines[-1] if lines else f"exit status {result.returncode}"
    return ChildError(f"{what} failed: {first_line(tail, 400)}")


def kernel_ref(ws: Workspace, ref: str) -> tuple[Path, str]:
    """`FILE.py:KERNEL` with FILE inside the workspace: (FILE resolved, KERNEL); the child takes `FILE:KERNEL`."""
    path_text, sep, name = ref.rpartition(":")
    if not sep or not path_text or not name.isidentifier():
        raise ChildError(f"kernel {ref!r}: expected FILE.py:KERNEL, e.g. kernels.py:add_kernel")
    return ws.path(path_text, kind="file"), name


def _child_main(spec: str, module: str, argv: list[str]) -> None:
    """The confined side: rlimits and the user id of its own first, then `python -m module argv…`."""
    enter(json.loads(spec))
    sys.argv = [module, *argv]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    _child_main(sys.argv[1], sys.argv[2], sys.argv[3:])
