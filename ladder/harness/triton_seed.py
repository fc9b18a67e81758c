"""The Triton cache a confined runner starts from: built by a trusted child, once per operator and GPU.

A confined runner's Triton cache lies in its scratch and starts empty (a cache shared with other runners would let
one candidate plant compiled code for the next: ladder.sandbox), so every evaluation built Triton's driver module
and a launcher per kernel signature with the C compiler, and compiled its kernels, in its first call of the forward:
seconds of CPU on the round's critical path, ten times at once with ten jobs (docs/results/engine-h200).

Here a trusted child (a plain subprocess, never a sandbox: it runs only the operator's frozen initial kernel, the
user's own code, never a candidate) compiles that kernel on each case's placeholder inputs
(`ladder.harness.worker.seed_triton_cache`) into a cache of this process's. Each runner gets it bound read-only
(`ladder.harness.worker.SEED_ENV`) and copies it into its own cache before any candidate code exists in it
(`ladder.harness.worker.serve`): it finds the driver module built, the launchers of the initial kernel's
signatures (a candidate that keeps the kernel's arguments keeps its launcher) and the initial kernel's binaries.
What a runner compiles itself lands in its own copy only. A seed that fails to build costs only that attempt: the
runners compile what they lack, as before.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path

from ladder.sandbox import run_sandboxed

SEED_TIMEOUT_S = 300.0
_SEEDS: dict[tuple[str, str], Path | None] = {}
_BUILDING: dict[tuple[str, str], threading.Lock] = {}
_GUARD = threading.Lock()


def triton_seed(operator: str, layouts: Mapping[str, object], env: Mapping[str, str]) -> Path | None:
    """The seed cache of `operator` ("suite name" or "package.module:ATTR") on the GPU that `env` selects, built on
    first use (other operators' seeds build meanwhile); None where it could not be built."""
    key = (operator, env.get("CUDA_VISIBLE_DEVICES", ""))
    with _GUARD:
        building = _BUILDING.setdefault(key, threading.Lock())
    with building:
        if key not in _SEEDS:
            _SEEDS[key] = _build(operator, layouts, env)
        return _SEEDS[key]


def _build(operator: str, layouts: Mapping[str, object], env: Mapping[str, str]) -> Path | None:
    cache = seed_root() / "cache"
    result = run_sandboxed(
        "ladder.harness.worker:seed_triton_cache",
        {"operator": operator, "layouts": dict(layouts)},
        timeout_s=SEED_TIMEOUT_S,
        extra_env={**env, "TRITON_CACHE_DIR": str(cache)},
    )
    if not result.ok or not cache.is_dir() or not result.value.get("compiled"):
        return None
    return share(cache)


def seed_root() -> Path:
    """A folder of this process's for one seed (removed at exit), open to a runner's dropped user id."""
    root = Path(tempfile.mkdtemp(prefix="ladder-triton-seed-"))
    atexit.register(shutil.rmtree, root, True)
    root.chmod(0o755)
    return root


def share(cache: Path) -> Path:
    """Every entry readable by a runner's dropped user id (which only copies them)."""
    for path in [cache, *cache.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return cache
