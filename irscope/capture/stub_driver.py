"""A CPU stand-in for Triton's GPU driver, so the JIT path (`kernel.warmup`, `irscope.record`) runs without a GPU.

Triton's JIT asks the active driver for the target, the device and the stream before it binds arguments and
compiles; with no GPU, no driver is active ("0 active drivers"). This one answers for a chosen target and
refuses to launch. Use it to exercise the real JIT path on a CPU machine:

    with irscope.capture.cpu_driver("cuda:90"), irscope.record("out") as rec:
        kernel.warmup(x, y, out, n, BLOCK=1024, grid=(1,))

Arguments are tensors (CPU or meta), whose `data_ptr()` gives the alignment the JIT specializes on (CPU
allocations are 64-byte aligned, like a GPU's 256), or `TensorSpec` objects.

`dry_run_driver` compiles without launching: its launches do nothing, so a whole `forward` runs to its end on a
CPU machine with the JIT compiling each kernel for the target as it would on the GPU (outputs stay unwritten), and
its benchmarker times every config alike, so an autotuner tries (compiles) every config once and keeps the first.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any, TypeVar

from triton.backends.driver import DriverBase
from triton.runtime.driver import driver as driver_config

from irscope.targets import DEFAULT_TARGET, Target, parse_target

_Driver = TypeVar("_Driver", bound=DriverBase)


class CpuStandInDriver(DriverBase):
    def __init__(self, target: Target):
        super().__init__()
        self.target = target

    @classmethod
    def is_active(cls) -> bool:
        return False  # never chosen automatically

    def map_python_to_cpp_type(self, ty: str) -> str:
        return "void*"

    def get_current_target(self) -> Any:
        return self.target.to_gpu_target()

    def get_active_torch_device(self) -> Any:
        return None

    def get_benchmarker(self) -> Any:
        raise RuntimeError("the irscope CPU stand-in driver cannot run or time kernels; use a GPU machine")

    def get_current_device(self) -> int:
        return 0

    def get_current_stream(self, device: int | None = None) -> int:
        return 0


class DryRunDriver(CpuStandInDriver):
    """The stand-in plus Triton 3.6's CompiledKernel interface, with launches that do nothing."""

    utils = SimpleNamespace(
        load_binary=lambda name, kernel, shared, device: (0, 0, 0, 0, 1 << 30),
        get_device_properties=lambda device: {"max_shared_mem": 1 << 30},
    )

    @staticmethod
    def launcher_cls(src: Any, metadata: Any) -> Any:
        return lambda *args, **kwargs: None

    def get_benchmarker(self) -> Any:
        def equal_times(kernel_call: Any, quantiles: Any = None, **kwargs: Any) -> Any:
            kernel_call()  # the config's launch: compiles it (or records it), runs nothing
            return [1.0] * len(quantiles) if quantiles else 1.0

        return equal_times


@contextmanager
def cpu_driver(target: str | Target = DEFAULT_TARGET) -> Iterator[CpuStandInDriver]:
    """Make the stand-in the active driver for the block; the previous driver state comes back afterwards."""
    with _active(CpuStandInDriver(parse_target(target))) as stand_in:
        yield stand_in


@contextmanager
def dry_run_driver(target: str | Target = DEFAULT_TARGET) -> Iterator[DryRunDriver]:
    """Make the dry-run stand-in the active driver for the block (compile without launching)."""
    with _active(DryRunDriver(parse_target(target))) as stand_in:
        yield stand_in


@contextmanager
def _active(stand_in: _Driver) -> Iterator[_Driver]:
    saved = driver_config._active
    driver_config.set_active(stand_in)
    try:
        yield stand_in
    finally:
        driver_config._active = saved
