"""Backend adapters, registered in one place. A new backend is one adapter module (its target spelling and
machine, stages, capture knobs, artifacts, resources, counter rules, compiler source folders) and one entry here
(docs/design.md, "A new backend")."""

from __future__ import annotations

from pathlib import Path

from irscope.backends.amd import AMD
from irscope.backends.ascend import ASCEND
from irscope.backends.base import BackendAdapter
from irscope.backends.nvidia import NVIDIA
from irscope.targets import Target

# GPUTarget backend → its adapter; the order is the order targets are read in (Target.parse)
ADAPTERS: dict[str, BackendAdapter] = {a.triton_backend: a for a in (NVIDIA, AMD, ASCEND)}


def adapter_for_backend(backend: str) -> BackendAdapter:
    try:
        return ADAPTERS[backend]
    except KeyError:
        raise KeyError(f"no irscope adapter for backend {backend!r}; known: {', '.join(ADAPTERS)}") from None


def adapter_for(target: Target) -> BackendAdapter:
    return adapter_for_backend(target.backend)


def derive_artifact(name: str, source: Path, out: Path) -> str:
    """A derived artifact's text: from `out` when it was made already, else made from `source` now."""
    makers = {n: make for a in ADAPTERS.values() for n, make in a.derived.items()}
    if name not in makers:
        raise KeyError(f"no way to make artifact {name!r} from {source.name}; known: {', '.join(makers)}")
    return makers[name](source, out)


__all__ = ["ADAPTERS", "BackendAdapter", "adapter_for", "adapter_for_backend", "derive_artifact"]
