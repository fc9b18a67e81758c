"""Correctness of one candidate forward on fresh inputs (docs/suite-protocol.md#correctness), in two halves.

`run_forward`, in the sandboxed runner: fresh inputs from the operator's generator (seed, input kind) → the
candidate's forward under poisoned allocation and the anti-cheat monitor → the monitor's findings (≥ 1 Triton
launch, no torch compute, no foreign stream, no new thread), outputs exactly `torch.Tensor` on the inputs' device
with real storage and not aliasing an input, inputs bit-for-bit unmodified. The runner saves the outputs to a file.

`judge`, in the parent, which never imports the candidate: the outputs read back from that file, checked on inputs
regenerated from the same seed by the operator's correctness rule (suite.compare.verify: the oracle comparison
with its per-dtype tolerance, or the operator's own verify hook; NaN never passes). The oracle's outputs exist
only there.

Poisoning: `torch.use_deterministic_algorithms(True, warn_only=True)` with
`torch.utils.deterministic.fill_uninitialized_memory = True` makes every `torch.empty*` the candidate calls
return NaN-filled memory (integers: their maximum), on CPU and CUDA alike, whatever the caching allocator
recycled. An output element the kernel never writes therefore stays NaN and fails. This is exact, unlike
`PYTORCH_NO_CUDA_MEMORY_CACHING=1` (fresh cudaMalloc memory still holds whatever was there) or pre-filling the
allocator's pool (which block serves the next request is the allocator's choice). It is on only around the
candidate's forward in correctness runs, never while timing. No reference output is ever computed in the
candidate's process, so none is there to be picked up.
"""

from __future__ import annotations

import contextlib
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from ladder.harness.anticheat import ForwardMonitor
from suite.compare import verify
from suite.operator import Case, Operator


@dataclass
class RunResult:
    case: str
    kind: str
    seed: int
    ok: bool = False
    numeric_ok: bool = False  # the outputs passed the operator's correctness rule (whatever else was wrong)
    problems: list[str] = field(default_factory=list)
    max_abs: float | None = None
    rel_l2: float | None = None
    launches: int = 0
    kernels: dict[str, int] = field(default_factory=dict)
    aten_ops: dict[str, int] = field(default_factory=dict)
    new_threads: int = 0  # threads the forward left running (the monitor's count)
    foreign_streams: int = 0  # launches on a stream other than the current one
    seconds: float = 0.0

    def to_json(self) -> dict:
        return asdict(self)


CONTRACT_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
# torch adds the fill_uninitialized_memory property by swapping this module's class at import: Any, since a type
# checker sees a plain module without it.
_DETERMINISTIC: Any = torch.utils.deterministic


class FatalDeviceError(RuntimeError):
    """The device is unusable after this (a sticky CUDA error): the worker must end, the harness goes on."""


@contextlib.contextmanager
def poisoned_allocations() -> Iterator[None]:
    """Every fresh torch allocation is NaN (float) or the dtype's maximum (integer) inside the block."""
    was_on = torch.are_deterministic_algorithms_enabled()
    was_warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    was_fill = _DETERMINISTIC.fill_uninitialized_memory
    # torch's own switch, without torch.use_deterministic_algorithms' import of the inductor (and with it dynamo):
    # that import took 3–8 s of a runner's first validation run, with the GPU held (docs/results/engine-h200)
    torch._C._set_deterministic_algorithms(True, warn_only=True)
    _DETERMINISTIC.fill_uninitialized_memory = True
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # warn_only's notes about nondeterministic ops
            yield
    finally:
        torch._C._set_deterministic_algorithms(was_on, warn_only=was_warn_only)
        _DETERMINISTIC.fill_uninitialized_memory = was_fill


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def is_fatal_device_error(exc: BaseException) -> bool:
    text = f"{type(exc).__name__}: {exc}"
    return any(
        s in text
        for s in (
            "illegal memory access",
            "CUDA error",
            "device-side assert",
            "AcceleratorError",
            "unspecified launch failure",
            "misaligned address",
        )
    )


def tensors(values: Sequence[Any]) -> list[torch.Tensor]:
    return [v for v in values if isinstance(v, torch.Tensor)]


def run_forward(
    op: Operator, forward: Callable[..., Any], case: Case, inputs: tuple, *, kind: str, seed: int, device: str
) -> tuple[RunResult, Any]:
    """The runner's half of one run: `forward` on `inputs` (which it must leave unmodified) under poisoned
    allocation and the monitor, and what only that process can see: launches, aten ops, streams, threads,
    output storage and aliasing, inputs intact. These findings can fail a candidate, never pass one (the process
    they come from runs candidate code); the oracle is never computed there (`judge` is the parent's half)."""
    result = RunResult(case=case.name, kind=kind, seed=seed)
    t0 = time.perf_counter()
    pristine = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    pointers = [t.data_ptr() for t in tensors(inputs)]
    monitor = ForwardMonitor()
    out: Any = None
    try:
        with poisoned_allocations(), monitor:
            out = forward(*inputs)
            synchronize(device)
    except (Exception, SystemExit) as e:
        if is_fatal_device_error(e):
            raise FatalDeviceError(f"{type(e).__name__}: {e}") from e
        result.problems.append(f"forward raised {type(e).__name__}: {_short(e)}\n{_tail(traceback.format_exc())}")
    report = monitor.report
    result.launches, result.kernels, result.aten_ops = report.launches, dict(report.kernels), dict(report.aten_ops)
    result.new_threads, result.foreign_streams = report.new_threads, report.foreign_streams
    if out is not None or not result.problems:  # a forward that raised has said enough
        result.problems += report.problems()
    if out is not None or not result.problems:
        result.problems += output_problems(out, inputs, device, CONTRACT_DTYPES.get(op.dtype))
    if [t.data_ptr() for t in tensors(inputs)] != pointers:
        result.problems.append("an input tensor's storage was replaced")
    for i, (now, before) in enumerate(zip(inputs, pristine)):
        if isinstance(now, torch.Tensor) and not same_bits(now, before):
            result.problems.append(f"input {i} was modified by the forward call")
    result.seconds = round(time.perf_counter() - t0, 4)
    return result, out


def judge(op: Operator, case: Case, inputs: tuple, out: Any, device: str) -> RunResult:
    """The parent's half of one run, where no candidate code ever ran: `out` (read back from the runner's file)
    against the operator's correctness rule on `inputs`, regenerated here from the run's seed."""
    problems = output_problems(out, (), device, CONTRACT_DTYPES.get(op.dtype))
    result = RunResult(case=case.name, kind="", seed=0, problems=problems)
    verdict = verify(op, inputs, out, op.reduction_len(case) if op.reduction_len else None)
    result.numeric_ok, result.max_abs, result.rel_l2 = verdict.ok, verdict.max_abs, verdict.rel_l2
    if not verdict.ok:
        result.problems.append(f"wrong output: {verdict.detail}")
    result.ok = result.numeric_ok and not result.problems
    return result


def output_problems(out: Any, inputs: tuple, device: str, float_dtype: torch.dtype | None = None) -> list[str]:
    """Outputs must be exactly torch.Tensor, materialized on the inputs' device, not aliasing an input, and
    floating outputs must have the operator's contract dtype (no silent precision change)."""
    problems = []
    outs = tuple(out) if isinstance(out, tuple | list) else (out,)
    spans = [_span(t) for t in tensors(inputs) if t.numel()]
    for i, o in enumerate(outs):
        if type(o) is not torch.Tensor:
            problems.append(f"output {i} is {type(o).__name__}, not exactly torch.Tensor")
            continue
        if o.device.type != torch.device(device).type or o.is_meta:
            problems.append(f"output {i} is on {o.device}, not {device}")
            continue
        if float_dtype is not None and o.is_floating_point() and o.dtype != float_dtype:
            problems.append(f"output {i} is {o.dtype}; the operator's dtype contract is {float_dtype}")
        if o.numel() and o.untyped_storage().nbytes() < (o.storage_offset() + _extent(o)) * o.element_size():
            problems.append(f"output {i} has no materialized storage behind it")
        if o.numel() and any(_overlaps(_span(o), s) for s in spans):
            problems.append(f"output {i} aliases an input's memory")
    return problems


def _extent(t: torch.Tensor) -> int:
    return 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))


def _span(t: torch.Tensor) -> tuple[int, int]:
    start = t.data_ptr()
    return start, start + _extent(t) * t.element_size()


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


_SAME_WIDTH_INT = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bitwise equality: every NaN payload and signed zero as it is. One comparison of the bits reinterpreted as
    integers of the same width (a kernel and a read-back, where a float-by-float test took eight passes over inputs
    of up to gigabytes on every run)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.is_floating_point:
        as_int = _SAME_WIDTH_INT[a.element_size()]
        return torch.equal(a.view(as_int), b.view(as_int))
    return torch.equal(a, b)


def _short(e: BaseException) -> str:
    return str(e).strip().splitlines()[0][:300] if str(e).strip() else ""


def _tail(tb: str, lines: int = 6) -> str:
    return "\n".join(tb.strip().splitlines()[-lines:])
