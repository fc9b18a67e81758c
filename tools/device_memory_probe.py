"""Does device memory shared through a file descriptor work between this process and a sandboxed child, and what
does a run's output cost through it against the host round trip? (ladder/harness/device_memory.py)

    python -m tools.device_memory_probe [--mib 1024]

The parent creates and exports the memory, fills it, and passes the descriptor to a child in the harness's own
sandbox; the child maps it, checks the parent's bytes, writes its own and times a device copy into it; the parent
checks the child's bytes and times its copy out. Then the same bytes through page-locked host memory, the path
ladder/harness/transfer.py takes: device to host, host to device. Medians of five, milliseconds.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch

from ladder.confine import available
from ladder.harness.device_memory import SharedDeviceMemory, supported
from ladder.sandbox import run_sandboxed


def _median_ms(fn: Callable[[], object], runs: int = 5) -> float:
    spent = []
    for _ in range(runs):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        spent.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(spent)


def child(payload: dict, emit: Callable[[dict], None]) -> dict:
    memory = SharedDeviceMemory.attach(int(payload["fd"]), int(payload["nbytes"]))
    shared = memory.bytes()
    seen = [int(shared[0]), int(shared[-1])]
    source = torch.full((shared.numel(),), 7, dtype=torch.uint8, device="cuda")
    copy_ms = _median_ms(lambda: shared.copy_(source))
    torch.cuda.synchronize()
    return {"seen": seen, "copy_in_ms": copy_ms}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mib", type=int, default=1024)
    args = ap.parse_args()
    nbytes = args.mib << 20
    print(f"posix fd export supported: {supported()}")
    memory = SharedDeviceMemory.create(nbytes)
    shared = memory.bytes()
    shared.fill_(3)
    torch.cuda.synchronize()
    confinement = available()
    print(f"sandbox: {'bubblewrap' if confinement else 'none (plain child)'}")
    result = run_sandboxed(
        "tools.device_memory_probe:child",
        {"fd": memory.fd, "nbytes": memory.nbytes},
        timeout_s=120,
        confinement=confinement,
        pass_fds=[memory.fd],
    )
    print(f"child: {result.status} {result.value} {result.stderr_tail[-2000:] if not result.ok else ''}")
    print(f"parent sees the child's bytes: {int(shared[0])}, {int(shared[-1])} (7 expected)")
    private = torch.empty_like(shared)
    out_ms = _median_ms(lambda: private.copy_(shared))
    print(f"parent copy out of the shared memory: {out_ms:.2f} ms for {args.mib} MiB")
    host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
    print(
        f"host round trip: to host {_median_ms(lambda: host.copy_(private)):.2f} ms, "
        f"back {_median_ms(lambda: private.copy_(host)):.2f} ms"
    )
    memory.close()


if __name__ == "__main__":
    main()
