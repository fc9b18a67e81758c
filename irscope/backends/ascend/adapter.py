"""The Ascend adapter: stages ttir → ttadapter → npubin. Capture happens out of process (capture.py), so the
in-process stage and finish hooks of BackendAdapter have nothing to do here. Counters: counters.py."""

from __future__ import annotations

from irscope.backends.base import BackendAdapter

ASCEND = BackendAdapter(
    name="ascend",
    triton_backend="npu",
    stages=("ttir", "ttadapter", "npubin"),
    focus_stages=("ttir", "ttadapter"),
    key_counters=(
        "sync.flag",
        "sync.block",
        "mem.copy",
        "mem.materialize",
        "mem.alloc_bytes",
        "mem.scalar_load",
        "mem.scalar_store",
        "mem.discrete_loop",
        "compute.reduce_body_ops",
        "compute.vector_ops",
        "compute.scalar_ops",
        "compute.element_access",
    ),
)
