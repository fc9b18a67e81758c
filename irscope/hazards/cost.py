"""The cost model hazards are ranked by: weighted per-thread instruction slots, from the machine code.

A hazard's cost is the number of instructions it puts on its kernel lines in the most concrete text captured
(SASS when disassembled, else PTX), each weighted by what it stalls a warp for relative to an ALU op, and
multiplied for every loop around the line (static counts understate code that runs once per iteration).
The weights are orders of magnitude, not measurements of one GPU: a barrier stalls every warp of the CTA
until the slowest arrives, a local (spilled) access goes through L1/L2, a global atomic serializes at L2, an
uncoalesced access costs a memory transaction per thread instead of one per 32 threads.
"""

from __future__ import annotations

LOOP_TRIPS = 8  # assumed iterations per enclosing loop: only relative ranking matters

WEIGHTS = {
    "sync.barrier": 20.0,
    "sync.shuffle": 2.0,
    "mem.shared_load": 4.0,
    "mem.shared_store": 4.0,
    "mem.local_load": 40.0,
    "mem.local_store": 40.0,
    "compute.atomic": 30.0,
    "mem.load": 8.0,
    "mem.store": 4.0,
    "compute.fp_ops": 1.0,
    "compute.mma_sync": 8.0,
}
MAX_VECTOR_BITS = 128  # the widest global access one thread issues
UNCOALESCED_FACTOR = 4.0  # a scalar access per thread touches its own sector: ~4x the traffic of a coalesced one
EXPOSED_LOAD_LATENCY = 100.0  # a synchronous global load the loop waits on, in ALU-op slots

# Occupancy on NVIDIA Hopper (sm_90): per-SM limits the resident-warp count is derived from.
SM90 = {"registers": 65536, "shared_bytes": 228 * 1024, "cta_shared_reserved": 1024, "max_warps": 64, "max_ctas": 32}


def weighted(counts: dict[str, float], names: tuple[str, ...] | None = None) -> float:
    keys = names if names is not None else tuple(WEIGHTS)
    return sum(WEIGHTS.get(k, 1.0) * counts.get(k, 0) for k in keys)


def loop_factor(depth: int) -> float:
    return float(LOOP_TRIPS**depth)


def resident_warps(registers: int, shared_bytes: int, num_warps: int, limits: dict[str, int] = SM90) -> tuple[int, str]:
    """Resident warps per SM and what limits them (registers, shared memory, warps or CTAs per SM).

    Registers are allocated per warp in units of 256 (8 per thread); shared memory per CTA includes the
    1 KB the driver reserves.
    """
    per_thread = max(8, -(-registers // 8) * 8) if registers else 8
    by = {  # the architectural limits first: on a tie they are what binds
        "warps per SM": limits["max_warps"] // num_warps,
        "CTAs per SM": limits["max_ctas"],
        "registers": limits["registers"] // (per_thread * 32 * num_warps),
        "shared memory": limits["shared_bytes"] // (shared_bytes + limits["cta_shared_reserved"])
        if shared_bytes
        else limits["max_ctas"],
    }
    limiter = min(by, key=lambda k: by[k])
    return by[limiter] * num_warps, limiter
