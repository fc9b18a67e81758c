"""How busy the GPU was during a run: one sample a second of its utilization, appended to RUN/gpu-busy.jsonl.

The figure that says whether the GPU or the harness bounds a run (docs/suite-protocol.md#throughput): the share
of samples in which the GPU ran a kernel at all (utilization > 0, NVML's "percent of time over the last sample
period in which a kernel ran") and the mean utilization. `ladder report` reads the file back (`summary`).
NVML through `pynvml` (the nvidia-ml-py package) where it imports; else `nvidia-smi`; else nothing is sampled.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

FILE = "gpu-busy.jsonl"
PERIOD_S = 1.0


def _nvml() -> Callable[[], list[int]] | None:
    try:
        import pynvml  # type: ignore[import-not-found]

        pynvml.nvmlInit()
        handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
    except Exception:
        return None
    return lambda: [int(pynvml.nvmlDeviceGetUtilizationRates(h).gpu) for h in handles]


def _smi() -> Callable[[], list[int]] | None:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None

    def read() -> list[int]:
        out = subprocess.run(
            [smi, "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        return [int(v) for v in out.stdout.split()] if out.returncode == 0 else []

    try:
        return read if read() else None
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


@contextlib.contextmanager
def sampling(run_dir: Path, period_s: float = PERIOD_S) -> Iterator[bool]:
    """Sample while the block runs; yields whether a sampler was found."""
    read = _nvml() or _smi()
    if read is None:
        yield False
        return
    stop = threading.Event()

    def loop() -> None:
        with (run_dir / FILE).open("a") as f:
            while not stop.wait(period_s):
                try:
                    f.write(json.dumps({"t": round(time.time(), 1), "util": read()}) + "\n")
                    f.flush()
                except Exception:
                    continue  # a failed sample is a missing sample, never the run's end

    thread = threading.Thread(target=loop, name="gpu-busy", daemon=True)
    thread.start()
    try:
        yield True
    finally:
        stop.set()
        thread.join(5)


@dataclass(frozen=True)
class Busy:
    samples: int
    busy_share: float  # samples with a kernel running (utilization > 0) over all samples
    mean_util: float  # percent

    def to_json(self) -> dict:
        return asdict(self)


def summary(run_dir: Path) -> Busy | None:
    """The run's samples (every GPU's, pooled), or None when none were taken."""
    path = run_dir / FILE
    if not path.is_file():
        return None
    values: list[int] = []
    for line in path.read_text().splitlines():
        with contextlib.suppress(ValueError, TypeError, KeyError):
            values += [int(v) for v in json.loads(line)["util"]]
    if not values:
        return None
    return Busy(len(values), sum(v > 0 for v in values) / len(values), sum(values) / len(values))
