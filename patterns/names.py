"""The vocabulary predicates may use: evidence namespaces, the counter contract, L2 facts, target and spec facts.

Counter names follow docs/signatures.md (irscope.signatures): `STAGE.group.name`, resources `res.name`. A card
that names a counter on a stage where it is never measured would always be unknown, so the card loader rejects it.
"""

from __future__ import annotations

STAGES = ("ttir", "ttgir", "llir", "llvm", "ptx", "sass", "amdgcn")
_ALL = STAGES

# counter (group.name) → stages it is measured on (docs/signatures.md, "measured on")
COUNTERS: dict[str, tuple[str, ...]] = {
    "sync.barrier": _ALL,
    "sync.shuffle": ("llir", "llvm", "ptx", "sass", "amdgcn"),
    "sync.redux": ("llir", "llvm", "ptx", "sass"),
    "sync.async_wait": ("ttgir", "llir", "llvm", "ptx", "sass"),
    "sync.mbarrier": ("ttgir", "ptx", "sass"),
    "sync.fence": ("ttgir", "llir", "llvm", "ptx", "sass"),
    "sync.wgmma_wait_all": ("ttgir",),
    "layout.convert_layout": ("ttgir",),
    "layout.convert_layout_bytes": ("ttgir",),
    "layout.local_alloc": ("ttgir",),
    "layout.local_load": ("ttgir",),
    "layout.local_store": ("ttgir",),
    "layout.enc.blocked": ("ttgir",),
    "layout.enc.mma": ("ttgir",),
    "layout.enc.dot_op": ("ttgir",),
    "layout.enc.shared": ("ttgir",),
    "layout.enc.linear": ("ttgir",),
    "layout.enc.slice": ("ttgir",),
    "layout.shared_bytes": ("ttgir", "llir"),
    "mem.load": _ALL,
    "mem.store": _ALL,
    "mem.load_masked": ("ttir", "ttgir", "llir", "llvm", "ptx"),
    "mem.store_masked": ("ttir", "ttgir", "llir", "llvm", "ptx"),
    **{f"mem.{d}_vec{w}": ("llir", "llvm", "ptx", "sass") for d in ("load", "store") for w in (1, 2, 4, 8)},
    "mem.load_bits_max": ("llir", "llvm", "ptx", "sass", "amdgcn"),
    "mem.cp_async": ("ttgir", "llir", "llvm", "ptx", "sass"),
    "mem.tma": ("ttgir", "ptx", "sass"),
    "mem.shared_load": ("ptx", "sass", "amdgcn"),
    "mem.shared_store": ("ptx", "sass", "amdgcn"),
    "mem.local_load": ("ptx", "sass"),
    "mem.local_store": ("ptx", "sass"),
    "compute.dot": ("ttir", "ttgir"),
    "compute.mma_wgmma": ("ttgir", "ptx", "sass"),
    "compute.mma_sync": ("ttgir", "ptx", "sass"),
    "compute.mma_amd": ("ttgir", "amdgcn"),
    "compute.dot_fma": ("ttgir",),
    "compute.reduce": ("ttir", "ttgir"),
    "compute.reduce_index": ("ttir", "ttgir"),
    "compute.scan": ("ttir", "ttgir"),
    "compute.atomic": _ALL,
    "compute.fp_ops": ("ptx", "sass"),
    "compute.vector_fp_ops": ("ptx", "sass"),
    "compute.int_ops": ("ptx", "sass"),
    "compute.int64_div": ("ptx",),
    "compute.special": ("llir", "llvm", "ptx", "sass"),
    "control.loop": ("ttir", "ttgir"),
    "control.pipeline_stages": ("ttgir",),
    "control.warp_specialize": ("ttgir",),
    "control.branch": ("ptx", "sass"),
}
RESOURCES = ("registers", "spill_bytes", "shared_bytes", "local_bytes", "num_warps", "instructions")

# L2 (profiling) facts: what `--profile JSON` may carry; the ladder's L2 level produces them.
L2_FACTS: dict[str, str] = {
    "bottleneck": 'bottleneck class: "memory", "compute", "latency" or "launch"',
    "sol_fraction": "achieved fraction of the speed of light (docs/suite.md#how-speed-of-light-is-computed), 0..1",
    "launch_bound": "true when launch overhead dominates (kernel time near the launch latency)",
    "time_ms": "median kernel time in milliseconds",
    "num_programs": "programs (CTAs) in the launch grid",
    "sm_count": "streaming multiprocessors (or compute units) on the device",
    "num_rows": "rows (independent reduction units) of the measured case",
    "row_length": "elements per row (reduction length) of the measured case",
    "max_numel": "largest tensor element count over the operator's cases",
    "dtype": 'input dtype of the measured case: "fp32", "bf16", …',
    "achieved_bandwidth_fraction": "achieved DRAM bandwidth / measured copy bandwidth, 0..1",
    "tensor_core_fraction": "fraction of FLOPs issued on tensor cores (MMA), 0..1",
}

TARGET_FACTS: dict[str, str] = {
    "backend": '"cuda" or "hip"',
    "arch": 'compute capability for cuda (80, 90, …); gfx name for hip ("gfx942")',
    "warp_size": "threads per warp (32) or wavefront (64 on CDNA)",
}

SPEC_FACTS: dict[str, str] = {
    "num_warps": "warps per program the kernel was compiled with",
    "num_stages": "software-pipelining stages the kernel was compiled with",
    "num_ctas": "CTAs per cluster",
    "block_max": "largest constexpr whose name contains BLOCK",
    "int_args_unaligned": "integer arguments the JIT did not specialize as divisible by 16 (odd sizes, strides)",
    "ptr_args_unaligned": "pointer arguments the JIT did not specialize as 16-byte aligned",
}

NAMESPACES = {
    **{s: "counter measured on this stage" for s in STAGES},
    "res": "resources (registers, spills, shared memory)",
    "l2": "L2 profiling facts",
    "src": "features of the kernel's Python source",
    "spec": "specialization the kernel was compiled with",
    "target": "compilation target",
}


def check_name(name: str, source_features: frozenset[str] | set[str]) -> str | None:
    """None if `name` is in the vocabulary; otherwise what is wrong with it, said so a card author can fix it."""
    head, _, rest = name.partition(".")
    if head not in NAMESPACES:
        return f"unknown namespace {head!r} in {name!r}; namespaces: {', '.join(NAMESPACES)}"
    if not rest:
        return f"{name!r} names a namespace, not a fact; e.g. {head}.<name>"
    if head in STAGES:
        stages = COUNTERS.get(rest)
        if stages is None:
            return f"unknown counter {rest!r} in {name!r} (docs/signatures.md lists the counters)"
        if head not in stages:
            return f"{rest} is not measured on {head} (only on {', '.join(stages)}): {name!r} would always be unknown"
        return None
    known = {
        "res": set(RESOURCES),
        "l2": set(L2_FACTS),
        "src": set(source_features),
        "spec": set(SPEC_FACTS),
        "target": set(TARGET_FACTS),
    }[head]
    if rest not in known:
        return f"unknown {head} fact {rest!r} in {name!r}; known: {', '.join(sorted(known))}"
    return None
