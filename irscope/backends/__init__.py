"""Backend adapters, registered in one place: stage lists, capture knobs, artifacts, backend counters."""

from __future__ import annotations

from irscope.backends.amd import AMD
from irscope.backends.ascend import ASCEND
from irscope.backends.base import BackendAdapter
from irscope.backends.nvidia import NVIDIA
from irscope.targets import Target

ADAPTERS: dict[str, BackendAdapter] = {a.triton_backend: a for a in (NVIDIA, AMD, ASCEND)}


def adapter_for(target: Target) -> BackendAdapter:
    try:
        return ADAPTERS[target.backend]
    except KeyError:
        raise KeyError(f"no irscope adapter for backend {target.backend!r}; known: {', '.join(ADAPTERS)}") from None


__all__ = ["ADAPTERS", "BackendAdapter", "adapter_for"]
