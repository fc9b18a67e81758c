"""NVIDIA: `cuda:CC` targets and their parts; ttir → ttgir → llir → ptx → cubin; SASS and resource usage from the
bundled ptxas/nvdisasm; counters in nvidia_counters.py."""

from __future__ import annotations

import atexit
import contextlib
import io
import os
import re
import shutil
import subprocess
import tempfile
import threading
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from triton import knobs

from irscope import childproc
from irscope.backends.base import BackendAdapter
from irscope.capture.builder import TrajectoryBuilder
from irscope.targets import Machine, Target, TargetError
from irscope.trajectory import Artifact

if TYPE_CHECKING:
    from irscope.signatures.rules import InstrRule, OpRule

_CUDA = re.compile(r"^(?:cuda|sm_?)?:?(\d{2,3})a?$")
# What Triton 3.6's wheel can build for: the `sm_*` values of `ptxas --gpu-name` in the bundled ptxas (CUDA 12.8,
# used below sm_100) and ptxas-blackwell (CUDA 12.9, sm_100 and up).
CUDA_CAPABILITIES = (50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 103, 120, 121)
# compute capability → MMA versions Triton tries, in order (AccelerateMatmul.cpp, getMMAVersionSafe)
_MMA_VERSIONS = ((75, (1,)), (90, (2,)), (100, (3, 2)), (110, (5, 2)), (130, (2,)))
# Per compute capability, the data-center part most built for: its SM count, and the CUDA C++ Programming
# Guide's per-SM limits (shared memory in KB, resident warps, resident CTAs; 64K registers on every one of them).
# A capability without a row takes the facts of the closest one below it (the lowest row for older ones).
_PARTS = {  # capability: (part, SMs, shared KB per SM, warps per SM, CTAs per SM)
    70: ("V100", 80, 96, 64, 32),
    75: ("T4", 40, 64, 32, 16),
    80: ("A100", 108, 164, 64, 32),
    86: ("A10", 72, 100, 48, 16),
    89: ("L4", 58, 100, 48, 24),
    90: ("H100/H200", 132, 228, 64, 32),
    100: ("B200", 148, 228, 64, 32),
}

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
    def read_target(self, text: str) -> Target | None:
        m = _CUDA.match(text)
        return Target("cuda", int(m.group(1)), 32) if m else None

    def check_buildable(self, target: Target, text: str) -> None:
        if target.arch not in CUDA_CAPABILITIES:
            raise TargetError(
                f"target {text!r}: Triton's ptxas cannot build for sm_{target.arch}; CUDA capabilities it supports: "
                f"{', '.join(map(str, CUDA_CAPABILITIES))} (e.g. cuda:90 for H100, cuda:80 for A100)"
            )

    def machine(self, target: Target) -> Machine:
        capability = int(target.arch)
        row = max((c for c in _PARTS if c <= capability), default=min(_PARTS))
        part, sms, shared_kb, warps, ctas = _PARTS[row]
        return Machine(
            part if row == capability else f"{part} (sm_{row}'s facts)",
            sm_count=sms,
            registers_per_sm=65536,
            shared_bytes_per_sm=shared_kb * 1024,
            cta_shared_reserved=1024 if capability >= 80 else 0,
            max_warps_per_sm=warps,
            max_ctas_per_sm=ctas,
            mma_versions=next((v for bound, v in _MMA_VERSIONS if capability < bound), ()),
        )

    def counter_rules(self) -> tuple[list[OpRule], list[InstrRule]]:
        # imported when asked: the analysis modules are no import-time dependency of the capture
        from irscope.backends.nvidia_counters import MLIR_RULES, NVIDIA_INSTR_RULES

        return MLIR_RULES, NVIDIA_INSTR_RULES

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
        job = Disassembly(cubin.data, cubin.file)
        builder.background.append(job.start)  # once the directory is final (a staged one moves on finish)
        # Not through add_artifact: the journal and the writer must not wait for it.
        builder.artifacts["sass"] = Artifact(
            name="sass",
            file=SASS_FILE if builder.listener is not None else "",
            binary=False,
            sha1="",
            derived_from="cubin",
            _loader=lambda _f, _b: job.text(),
        )


# -g: each instruction's source line; -gp: its line in the PTX that ptxas embedded (the PTX stage's text, line
# for line), so SASS counts follow the PTX's attribution to the kernel's lines, inlined tl.* code included.
NVDISASM_FLAGS = "-c -g -gp"
SASS_FILE = "artifacts/sass.sass"
# The output takes its final name only when complete: a reader never sees half a disassembly. Each run writes
# its own part file ("$3"), so a reader disassembling while the background run still works cannot mix the two.
# "$2.err" keeps nvdisasm's complaint when it fails.
_SCRIPT = f'"$0" {NVDISASM_FLAGS} "$1" > "$3" 2> "$2.err" && mv "$3" "$2" && rm -f "$2.err"'


def _remove_orphaned_parts(out: Path) -> None:
    """Part files of `out` whose writing process is gone: a run killed with its capturing process left them."""
    for part in out.parent.glob(f"{out.name}.*.part"):
        writer = part.name[len(out.name) + 1 :].split(".")[0]
        if writer.isdigit() and not Path(f"/proc/{writer}").exists():
            part.unlink(missing_ok=True)


class SassError(RuntimeError):
    """nvdisasm could not disassemble the cubin."""


def _command(cubin: Path, out: Path) -> list[str]:
    part = f"{out}.{os.getpid()}.{threading.get_ident()}.part"
    return ["sh", "-c", _SCRIPT, knobs.nvidia.nvdisasm.path, str(cubin), str(out), part]


_RUNNING: weakref.WeakSet[subprocess.Popen] = weakref.WeakSet()  # background disassemblies of this process


@atexit.register
def _release_running() -> None:
    """A normal exit leaves the disassemblies still running to finish their files (`kill -9` takes them along)."""
    for proc in list(_RUNNING):
        childproc.release(proc)


class Disassembly:
    """nvdisasm of one cubin, run in the background (about 0.4 s, nearly all of it nvdisasm starting up): the
    capture returns without waiting, the first reader of the SASS waits. Started once the trajectory's directory
    is final, on the cubin written there and into its artifacts/; in memory, on a temporary copy. A normal exit
    of the capturing process leaves it to finish the file; `kill -9` (or the end of the capturing thread) takes
    it along, so a killed tool leaves no disassembler running. The file appears whole or not at all (written
    beside, then renamed), and a reader that finds none disassembles then."""

    def __init__(self, cubin: bytes, cubin_file: str):
        self.cubin_data, self.cubin_file = cubin, cubin_file  # cubin_file: where the writer put it, "" in memory
        self.cubin: Path | None = None
        self.out: Path | None = None
        self._proc: subprocess.Popen | None = None

    def start(self, root: Path | None) -> None:
        if self._proc is not None:
            return
        if root is not None and self.cubin_file:
            self.cubin, self.out = root / self.cubin_file, root / SASS_FILE
        else:
            tmp = Path(tempfile.mkdtemp(prefix="irscope-sass-"))
            atexit.register(shutil.rmtree, tmp, True)
            self.cubin, self.out = tmp / "cubin.cubin", tmp / "sass.sass"
            self.cubin.write_bytes(self.cubin_data)
        for stale in (self.out, Path(f"{self.out}.err")):  # an earlier capture into the same directory
            stale.unlink(missing_ok=True)
        self._proc = childproc.start(
            _command(self.cubin, self.out),
            env=os.environ,
            cwd=os.getcwd(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _RUNNING.add(self._proc)

    def text(self) -> str:
        if self._proc is None:  # read before the capture started it (record() writes on the spot)
            self.start(None)
        assert self._proc is not None and self.cubin is not None and self.out is not None
        self._proc.wait()
        return derive_sass(self.cubin, self.out)


def derive_sass(cubin: Path, out: Path) -> str:
    """The SASS of `cubin`: from `out` when a run completed it, else disassembled now (and kept in `out`)."""
    if not out.exists():
        subprocess.run(_command(cubin, out), stdin=subprocess.DEVNULL, capture_output=True)
        _remove_orphaned_parts(out)
    if not out.exists():
        err = Path(f"{out}.err")
        why = err.read_text().strip()[:2000] if err.exists() else "no output"
        raise SassError(f"nvdisasm could not disassemble {cubin}: {why}")
    return out.read_text()


NVIDIA = NvidiaAdapter(
    name="nvidia",
    triton_backend="cuda",
    stages=("ttir", "ttgir", "llir", "ptx", "cubin"),
    target_forms="cuda:CC (cuda:90 for H100, cuda:80 for A100; sm_90)",
    capture_knobs={("nvidia", "dump_ptxas_log"): True},
    derived={"sass": derive_sass},
    source_dirs=("third_party/nvidia",),
    source_excludes=("third_party/nvidia/tools",),  # the AOT-compile code templates (C with `{placeholders}`)
    own_sources=("third_party/nvidia/", "lib/Dialect/TritonNVIDIAGPU/", "include/triton/Dialect/TritonNVIDIAGPU/"),
)
