"""NVIDIA: ttir → ttgir → llir → ptx → cubin; SASS and resource usage from the bundled ptxas/nvdisasm."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import tempfile
from typing import Any

from triton import knobs

from irscope.backends.base import BackendAdapter
from irscope.capture.builder import TrajectoryBuilder

_PTXAS_REGS = re.compile(r"Used (\d+) registers")
_PTXAS_STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_PTXAS_SMEM = re.compile(r"(\d+) bytes smem")


def parse_ptxas_log(log: str) -> dict[str, int]:
    out: dict[str, int] = {}
    if m := _PTXAS_REGS.search(log):
        out["registers"] = int(m.group(1))
    if m := _PTXAS_STACK.search(log):
        out["stack_bytes"], out["spill_store_bytes"], out["spill_load_bytes"] = map(int, m.groups())
    if m := _PTXAS_SMEM.search(log):
        out["ptxas_smem_bytes"] = int(m.group(1))
    return out


_PTX_COMMENT = re.compile(r"//[^\n]*")


def ascii_comments(ptx: str) -> str:
    """`ptx` with non-ASCII characters in its comments escaped (`\\xe9`). ptxas rejects any non-ASCII byte, and
    LLVM follows each `.loc` with a comment naming the kernel's file as written (`// kérnel.py:6:0`); the
    `.file` directives themselves are escaped by LLVM."""
    if ptx.isascii():
        return ptx
    return _PTX_COMMENT.sub(lambda m: m.group(0).encode("ascii", "backslashreplace").decode("ascii"), ptx)


class NvidiaAdapter(BackendAdapter):
    def wrap_stage(self, key: str, fn: Any, builder: TrajectoryBuilder) -> Any:
        if key != "cubin":
            return fn

        def cubin_stage(src: Any, metadata: dict) -> Any:
            # With dump_ptxas_log set for the capture, Triton print()s the `ptxas -v` log; keep it.
            buf = io.StringIO()
            try:
                with contextlib.redirect_stdout(buf):  # the PTX snapshot keeps the comments as LLVM wrote them
                    return fn(ascii_comments(src) if isinstance(src, str) else src, metadata)
            finally:
                log = buf.getvalue()
                if log:
                    builder.add_artifact("ptxas-log", log)

        return cubin_stage

    def finish(self, builder: TrajectoryBuilder, resources: dict[str, Any], want_disassembly: bool) -> None:
        if "ptxas-log" in builder.artifacts:
            resources.update(parse_ptxas_log(str(builder.artifacts["ptxas-log"].data)))
        cubin = builder.artifacts.get("cubin")
        if cubin is None or not want_disassembly:
            return
        if not isinstance(cubin.data, bytes):
            raise TypeError("the cubin artifact holds text; nvdisasm needs the binary")
        fd, path = tempfile.mkstemp(suffix=".cubin")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(cubin.data)
            sass = subprocess.run([knobs.nvidia.nvdisasm.path, "-c", "-g", path], capture_output=True, text=True)
            if sass.returncode == 0:
                builder.add_artifact("sass", sass.stdout)
            else:
                resources["sass_error"] = sass.stderr.strip()[:2000]
        finally:
            os.unlink(path)


NVIDIA = NvidiaAdapter(
    name="nvidia",
    triton_backend="cuda",
    stages=("ttir", "ttgir", "llir", "ptx", "cubin"),
    capture_knobs={("nvidia", "dump_ptxas_log"): True},
)
