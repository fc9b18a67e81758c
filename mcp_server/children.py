"""Code-running tools in child processes. Capturing or diagnosing a kernel imports the user's module, which runs
whatever it holds: it runs in a child (irscope.childproc) with an allowlisted environment (no credentials),
HOME and TMPDIR inside the workspace, the workspace as its working directory, its own process group killed on
every way out, and a timeout. The child is the project's own command line, so it specializes and reports a
kernel exactly as `irscope dump` and `ladder diagnose` do."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from irscope.childproc import ChildResult, child_env, run
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


def run_module(ws: Workspace, module: str, argv: list[str], timeout_s: float) -> ChildResult:
    """`python -m module argv…` as a child: allowlisted environment, workspace cwd, group killed at the end."""
    return run([sys.executable, "-m", module, *argv], env=child_env(ws.home), cwd=ws.root, timeout_s=timeout_s)


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


def kernel_ref(ws: Workspace, ref: str) -> tuple[str, str]:
    """`FILE.py:KERNEL` with FILE inside the workspace: (absolute FILE:KERNEL for the child, KERNEL)."""
    path_text, sep, name = ref.rpartition(":")
    if not sep or not path_text or not name.isidentifier():
        raise ChildError(f"kernel {ref!r}: expected FILE.py:KERNEL, e.g. kernels.py:add_kernel")
    path = ws.path(path_text, kind="file")
    return f"{path}:{name}", name
