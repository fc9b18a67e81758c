"""Backend adapters, registered in one place: stage lists, capture knobs, artifacts, backend counters."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from irscope.backends.amd import AMD
from irscope.backends.ascend import ASCEND
from irscope.backends.base import BackendAdapter
from irscope.backends.nvidia import NVIDIA, derive_sass
from irscope.targets import Target

ADAPTERS: dict[str, BackendAdapter] = {a.triton_backend: a for a in (NVIDIA, AMD, ASCEND)}


def adapter_for(target: Target) -> BackendAdapter:
    try:
        return ADAPTERS[target.backend]
    except KeyError:
        raise KeyError(f"no irscope adapter for backend {target.backend!r}; known: {', '.join(ADAPTERS)}") from None


# Artifacts made from another one after the compile (off the capture's critical path): name → maker.
DERIVED: dict[str, Callable[[Path, Path], str]] = {"sass": derive_sass}


def derive_artifact(name: str, source: Path, out: Path) -> str:
    """A derived artifact's text: from `out` when it was made already, else made from `source` now."""
    if name not in DERIVED:
        raise KeyError(f"no way to make artifact {name!r} from {source.name}; known: {', '.join(DERIVED)}")
    return DERIVED[name](source, out)


__all__ = ["ADAPTERS", "DERIVED", "BackendAdapter", "adapter_for", "derive_artifact"]
