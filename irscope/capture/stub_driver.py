"""A CPU stand-in for Triton's GPU driver, so the JIT path (`kernel.warmup`, `irscope.record`) runs without a GPU.

Triton's JIT asks the active driver for the target, the device and the stream before it binds arguments and
compiles; with no GPU, no driver is active ("0 active drivers"). This one answers for a chosen target and
refuses to launch. Use it to exercise the real JIT path on a CPU machine:

    with irscope.capture.cpu_driver("cuda:90"), irscope.record("out") as rec:
        kernel.warmup(x, y, out, n, BLOCK=1024, grid=(1,))

Arguments are tensors (CPU or meta), whose `data_ptr()` gives the alignment the JIT specializes on (CPU
allocations are 64-byte aligned, like a GPU's 256), or `TensorSpec` objects.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from triton.backends.driver import DriverBase
from triton.runtime.driver import driver as driver_config

from irscope.targets import Target, parse_target


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


@contextmanager
def cpu_driver(target: str | Target = "cuda:90") -> Iterator[CpuStandInDriver]:
    """Make the stand-in the active driver for the block; the previous driver state comes back afterwards."""
    saved = driver_config._active
    stand_in = CpuStandInDriver(parse_target(target))
    driver_config.set_active(stand_in)
    try:
        yield stand_in
    finally:
        driver_config._active = saved
