"""Op counts of a stored trajectory's snapshots, kept beside it once counted.

Counting a snapshot means reading and scanning its text: 7.5 MB after `convert-triton-gpu-to-llvm` of a
pipelined matmul, about 25 ms, which a query such as `compiler-index explain` would pay on every call. The
counts depend on the text only, so they are cached by its sha1 in `DIR/cache/op_counts.json` (written
atomically; a read-only directory just goes uncached) and every later query, `explain` of the next pass or
`irscope show`, reads them back.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from pathlib import Path

from irscope.parse.mlir import op_counts
from irscope.trajectory import Snapshot, Trajectory

CACHE_FILE = Path("cache") / "op_counts.json"


def snapshot_op_counts(traj: Trajectory, snaps: list[Snapshot]) -> list[Counter[str]]:
    """Op counts of `snaps` (MLIR snapshots of `traj`), from the directory's cache where counted before."""
    if traj.root is None:
        return [op_counts(s.text) for s in snaps]
    path = traj.root / CACHE_FILE
    try:
        cached: dict[str, dict[str, int]] = json.loads(path.read_text())
    except (OSError, ValueError):
        cached = {}
    out, missing = [], False
    for s in snaps:
        if s.sha1 not in cached:
            cached[s.sha1] = dict(op_counts(s.text))
            missing = True
        out.append(Counter(cached[s.sha1]))
    if missing:
        _write(path, cached)
    return out


def _write(path: Path, cached: dict) -> None:
    try:
        path.parent.mkdir(exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".op_counts-")
        with os.fdopen(fd, "w") as f:
            json.dump(cached, f)
        os.replace(tmp, path)  # readers see the old or the new file, never half of one
    except OSError:
        pass  # a read-only trajectory: counted again next time
