"""Hardware counters for L2 from Nsight Compute (`ncu`), one shape case at a time, on a CUDA GPU.

    profile(kernel.py, "softmax", "c3", out_dir) → CaseCounters, and out_dir/ncu-c3.ncu-rep stays as the artifact

The kernel module runs in a child process (`python -m ladder.ncu --child KERNEL OP CASE`) under
`ncu --clock-control none --profile-from-start off`: the child warms up (JIT compile) outside the profiled
range, then brackets one `forward` call with cudaProfilerStart/Stop, so only that call's kernels are measured.
`--clock-control none` leaves the GPU clocks as they are, as the timing harness does
(docs/suite-protocol.md#timing, rule 7).
With a GpuSlot the child sees only that GPU and holds its GpuLock alone for the profiled call, so no other
round's kernels run beside the one being counted (ladder/harness/gpu_lock.py).

`--ncu none` turns counters off (DISABLED). A report already made for the same kernel and case is read back
(`counters(report)`) instead of profiling again: counters are a property of the kernel, and the ladder
re-diagnoses an unchanged kernel every round that rejects a candidate.
"""

from __future__ import annotations

import argparse
import csv
import io
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irscope import childproc
from ladder.harness.gpu_lock import GpuSlot

DISABLED = "none"

METRICS = (
    "gpu__time_duration.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "launch__grid_size",
    "launch__block_size",
    "launch__registers_per_thread",
    "launch__waves_per_multiprocessor",
)
_HEADER_START = '"ID","Process ID","Process Name"'


class NcuError(RuntimeError):
    pass


@dataclass(frozen=True)
class KernelCounters:
    """One kernel launch as ncu measured it (base units: ns, bytes, %)."""

    name: str
    time_ns: float
    dram_bytes: float
    dram_pct: float
    sm_pct: float
    occupancy_pct: float
    grid: int
    block: int
    registers: int
    waves: float


@dataclass(frozen=True)
class CaseCounters:
    """Every kernel one `forward` call launched for one case, and the report file they came from."""

    case: str
    report: Path
    kernels: tuple[KernelCounters, ...]

    @property
    def time_ns(self) -> float:
        return sum(k.time_ns for k in self.kernels)

    @property
    def dram_bytes(self) -> float:
        return sum(k.dram_bytes for k in self.kernels)

    @property
    def dominant(self) -> KernelCounters:
        """The launch that took the longest."""
        return max(self.kernels, key=lambda k: k.time_ns)


def _number(text: str) -> float:
    cleaned = text.replace(",", "").strip()
    if cleaned in ("", "n/a", "N/A"):
        return 0.0
    return float(cleaned)


def parse_raw_csv(text: str) -> list[dict[str, str]]:
    """Rows of `ncu --import R --csv --page raw --print-units base`: header, a units row, one row per launch.

    Anything ncu printed before the header (==PROF== lines, warnings) is skipped.
    """
    start = text.find(_HEADER_START)
    if start < 0:
        raise NcuError(f"no ncu raw CSV header ({_HEADER_START}…) in the output:\n{text[:2000]}")
    rows = list(csv.DictReader(io.StringIO(text[start:])))
    return [r for r in rows if r.get("ID", "").strip()]  # the units row has no ID


def counters_from_rows(rows: list[dict[str, str]]) -> tuple[KernelCounters, ...]:
    missing = [m for m in METRICS if rows and m not in rows[0]]
    if missing:
        raise NcuError(f"ncu output lacks metrics {', '.join(missing)} (unsupported on this GPU or ncu version?)")
    return tuple(
        KernelCounters(
            name=r["Kernel Name"],
            time_ns=_number(r["gpu__time_duration.sum"]),
            dram_bytes=_number(r["dram__bytes_read.sum"]) + _number(r["dram__bytes_write.sum"]),
            dram_pct=_number(r["dram__throughput.avg.pct_of_peak_sustained_elapsed"]),
            sm_pct=_number(r["sm__throughput.avg.pct_of_peak_sustained_elapsed"]),
            occupancy_pct=_number(r["sm__warps_active.avg.pct_of_peak_sustained_active"]),
            grid=int(_number(r["launch__grid_size"])),
            block=int(_number(r["launch__block_size"])),
            registers=int(_number(r["launch__registers_per_thread"])),
            waves=_number(r["launch__waves_per_multiprocessor"]),
        )
        for r in rows
    )


def unavailable_reason(ncu: str = "ncu") -> str | None:
    """Why counters cannot be collected here, or None when they can."""
    if ncu == DISABLED:
        return "turned off (--ncu none)"
    if shutil.which(ncu) is None:
        return f"{ncu!r} is not on PATH (Nsight Compute)"
    import torch

    if not torch.cuda.is_available():
        return "no CUDA GPU (torch.cuda.is_available() is False)"
    return None


def _child_env(out_dir: Path, slot: GpuSlot | None, home: Path) -> dict[str, str]:
    """The allowlisted environment (CUDA, drivers, paths; the kernel is untrusted, keys stay out), the slot's GPU
    and a Triton cache kept beside the report."""
    return childproc.child_env(
        home, {**(slot.env() if slot else {}), "TRITON_CACHE_DIR": str(out_dir / "triton-cache")}
    )


def report_path(out_dir: Path, case: str) -> Path:
    return out_dir / f"ncu-{case}.ncu-rep"


def profile(
    kernel: Path,
    op: str,
    case: str,
    out_dir: Path,
    ncu: str = "ncu",
    timeout_s: float = 600,
    slot: GpuSlot | None = None,
) -> CaseCounters:
    out_dir = out_dir.resolve()  # ncu runs in out_dir: a relative --export would land below itself
    out_dir.mkdir(parents=True, exist_ok=True)
    report = report_path(out_dir, case)
    cmd = [
        ncu,
        "--clock-control",
        "none",
        "--profile-from-start",
        "off",
        "--target-processes",
        "all",
        "--metrics",
        ",".join(METRICS),
        "--force-overwrite",
        "--export",
        str(report),
        sys.executable,
        "-m",
        "ladder.ncu",
        "--child",
        str(kernel.resolve()),
        op,
        case,
        *(["--lock", slot.lock] if slot else []),
    ]
    with tempfile.TemporaryDirectory(prefix="ladder-ncu-") as home:
        run = childproc.run(cmd, env=_child_env(out_dir, slot, Path(home)), cwd=out_dir, timeout_s=timeout_s)
    if run.timed_out:
        raise NcuError(f"ncu on {kernel.name} case {case} timed out after {timeout_s:g} s")
    if run.returncode != 0 or not report.exists():
        raise NcuError(
            f"ncu on {kernel.name} case {case} exited {run.returncode}:\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}"
        )
    return counters(report, case, ncu, timeout_s)


def counters(report: Path, case: str, ncu: str = "ncu", timeout_s: float = 600) -> CaseCounters:
    """The launches recorded in an existing report (`ncu --import`)."""
    with tempfile.TemporaryDirectory(prefix="ladder-ncu-") as home:
        imported = childproc.run(
            [ncu, "--import", str(report), "--csv", "--page", "raw", "--print-units", "base"],
            env=childproc.child_env(Path(home)),
            cwd=home,
            timeout_s=timeout_s,
        )
    if imported.timed_out:
        raise NcuError(f"ncu --import {report} timed out after {timeout_s:g} s")
    if imported.returncode != 0:
        raise NcuError(f"ncu --import {report} exited {imported.returncode}: {imported.stderr[-2000:]}")
    kernels = counters_from_rows(parse_raw_csv(imported.stdout))
    if not kernels:
        raise NcuError(f"ncu recorded no kernel launch in {report} (case {case})")
    return CaseCounters(case, report, kernels)


def _child(kernel: str, op_ref: str, case_name: str, lock: str | None) -> int:
    """Runs inside ncu: warm up, then exactly one profiled forward call (alone on the GPU when given its lock)."""
    import torch

    from irscope.capture.loader import KernelLoadError, load_module
    from ladder.harness.gpu_lock import exclusive, shared
    from suite.operator import resolve_operator

    op = resolve_operator(op_ref)
    case = next((c for c in op.cases if c.name == case_name), None)
    if case is None:
        print(f"operator {op_ref} has no case {case_name}", file=sys.stderr)
        return 2
    try:
        mod = load_module(kernel, "candidate")
    except KernelLoadError as e:
        print(e, file=sys.stderr)
        return 2
    with shared(lock):
        inputs: Any = op.make_inputs(case, 0, "cuda", "random")
        mod.forward(*inputs)
        torch.cuda.synchronize()
    with exclusive(lock):
        torch.cuda.profiler.start()
        mod.forward(*inputs)
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()
    return 0


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="child process run under ncu (see the module docstring)")
    ap.add_argument("--child", nargs=3, metavar=("KERNEL", "OP", "CASE"), required=True)
    ap.add_argument("--lock", help="the GPU's GpuLock file")
    a = ap.parse_args()
    kernel, op_ref, case_name = a.child
    sys.exit(_child(kernel, op_ref, case_name, a.lock))
