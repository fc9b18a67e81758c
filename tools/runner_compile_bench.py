"""What a runner's `compile` command spends, by what its Triton cache already holds: Triton builds its driver
module (cuda_utils, with the C compiler) and one launcher per kernel signature into the cache, besides compiling
the kernels, and a confined runner starts with an empty cache every time.

    python -m tools.runner_compile_bench [--ops new_gelu,softmax,gemv] [--runs 3]

Per operator, in fresh processes, the compile-only call of its frozen initial kernel on the first case's
placeholder inputs with (1) an empty cache, (2) a cache holding only the driver module of (1), (3) a cache holding
the driver module and the launchers of (1) (the kernels' own entries removed), (4) the whole cache of (1).
Printed: median seconds of the call (imports not counted) per way.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from irscope.childproc import REPO_ROOT

CHILD = r"""
import json, sys, time
import torch
from irscope.capture.loader import load_module
from ladder.harness.compile_only import compile_only
from suite.operator import get_operator

op = get_operator(sys.argv[1])
forward = load_module(op.kernel_path, "bench").forward
case = op.cases[0]
inputs = op.placeholder_inputs(case, "cuda", op.placeholder_layout(case))
torch.cuda.synchronize()
t = time.perf_counter()
with compile_only():
    forward(*inputs)
print(json.dumps({"seconds": time.perf_counter() - t}))
"""


def _run(op: str, cache: Path) -> float:
    env = {**os.environ, "TRITON_CACHE_DIR": str(cache)}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, op], capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=600
    )
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return float(json.loads(out.stdout.strip().splitlines()[-1])["seconds"])


def _keep(src: Path, dst: Path, names: tuple[str, ...]) -> None:
    """Copy the cache entries (one directory each) holding a file whose name starts with one of `names`."""
    for entry in src.iterdir():
        if any(f.name.startswith(names) for f in entry.iterdir()):
            shutil.copytree(entry, dst / entry.name)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", default="new_gelu,softmax,gemv")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    ways = ("empty", "driver", "driver+launchers", "whole")
    for op in args.ops.split(","):
        seen: dict[str, list[float]] = {w: [] for w in ways}
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as tmp:
                root = Path(tmp)
                full = root / "empty"
                seen["empty"].append(_run(op, full))
                for way, names in (("driver", ("cuda_utils",)), ("driver+launchers", ("cuda_utils", "__triton"))):
                    cache = root / way
                    cache.mkdir()
                    _keep(full, cache, names)
                    seen[way].append(_run(op, cache))
                seen["whole"].append(_run(op, full))
        print(f"{op:20s} " + "  ".join(f"{w} {statistics.median(v):6.2f} s" for w, v in seen.items()), flush=True)


if __name__ == "__main__":
    main()
