"""Captures kept on disk across test sessions, only where IRSCOPE_TEST_TRAJECTORY_CACHE names a folder.

`make mutation` sets it for the groups whose modules read trajectories and never produce them (the hazard
detectors): mutmut starts a fresh test session for every mutant, and recompiling the same kernels for each one
would take most of the run. What is kept is a real capture, saved and loaded by irscope's own store. Without the
variable (CI, a developer's run) every capture is a fresh compile."""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import irscope
from irscope.trajectory import Trajectory

ENV = "IRSCOPE_TEST_TRAJECTORY_CACHE"


def capture(kernel: Any, *args: Any, **options: Any) -> Trajectory:
    """irscope.capture(kernel, *args, **options), from the cache when there is one and it holds this capture."""
    root = os.environ.get(ENV)
    if not root:
        return irscope.capture(kernel, *args, **options)
    # where the kernel starts too: a capture's locations are its file's lines, and tests read them
    source, first_line = inspect.getsourcelines(kernel.fn)
    where = (Path(inspect.getsourcefile(kernel.fn) or "").name, first_line, "".join(source))
    key = repr((where, args, sorted(options.items(), key=lambda kv: kv[0])))
    kept = Path(root) / hashlib.sha1(key.encode()).hexdigest()
    if not (kept / "trajectory.json").exists():
        Path(root).mkdir(parents=True, exist_ok=True)
        fresh = Path(tempfile.mkdtemp(dir=root, prefix=".capture-"))
        irscope.capture(kernel, *args, out_dir=fresh / "t", **options)
        with contextlib.suppress(OSError):  # whole or not at all; a concurrent worker may have kept it first
            (fresh / "t").rename(kept)
        shutil.rmtree(fresh, ignore_errors=True)
    return irscope.load(kept)
