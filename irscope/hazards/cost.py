"""The cost model hazards are ranked by: the latency a warp's instructions expose, from the machine code.

A hazard's cost is the number of instructions it puts on its kernel lines in the PTX, each weighted by roughly
the cycles it keeps a warp waiting on Hopper when nothing overlaps it, and multiplied for every loop around the
line (static counts understate code that runs once per iteration). Weights are orders of magnitude, not a
measurement of one GPU: a shuffle in a reduction's dependent butterfly chain ~20 cycles, a barrier ~30 (every
warp of the CTA waits for the slowest), a shared load ~25 (a store ~10: nothing waits on it), a local (spilled)
load ~100 (L1, or L2 on a miss), a global atomic ~100 (serialized at L2), a global load ~100 of latency left after
overlap, an FP op 1 (pipelined); an uncoalesced access costs a transaction per thread instead of one per 32.
"""

from __future__ import annotations

from collections.abc import Mapping

from irscope.targets import Target, default_target

LOOP_TRIPS = 8  # assumed iterations per enclosing loop: only relative ranking matters

WEIGHTS = {
    "sync.barrier": 30.0,
    "sync.shuffle": 20.0,
    "mem.shared_load": 25.0,
    "mem.shared_store": 10.0,
    "mem.local_load": 100.0,
    "mem.local_store": 20.0,
    "compute.atomic": 100.0,
    "mem.load": 100.0,
    "mem.store": 10.0,
    "compute.fp_ops": 1.0,
    "compute.mma_sync": 16.0,
}
MAX_VECTOR_BITS = 128  # the widest global access one thread issues
UNCOALESCED_FACTOR = 4.0  # a scalar access per thread touches its own sector: ~4x the traffic of a coalesced one
ONE_CTA_IDLE = 0.25  # share of a lone CTA's time (prologue, epilogue, barriers) a second resident CTA would hide
EXPOSED_LOAD_LATENCY = 400.0  # a synchronous global load a loop iteration waits for (DRAM latency, in cycles)
# a wgmma waited on in the iteration that issued it: a 64×N×K tile's tensor-core time, which would otherwise overlap
# the next iteration (the copies in flight still hide the loads, so less than a load's latency)
WGMMA_WAIT_LATENCY = 200.0
# a 64-bit integer division or remainder: no instruction does it, ptxas calls a ~40-instruction routine
INT64_DIVISION = 70.0


def weighted(counts: Mapping[str, float], names: tuple[str, ...] | None = None) -> float:
    keys = names if names is not None else tuple(WEIGHTS)
    return sum(WEIGHTS.get(k, 1.0) * counts.get(k, 0) for k in keys)


def loop_factor(depth: int) -> float:
    return float(LOOP_TRIPS**depth)


def resident_warps(registers: int, shared_bytes: int, num_warps: int, target: Target | None = None) -> tuple[int, str]:
    """Resident warps per SM of `target`'s machine (default: the default target's) and what limits them
    (registers, shared memory, warps or CTAs per SM).

    Registers are allocated per warp in units of 256 (8 per thread); shared memory per CTA includes what the
    driver reserves.
    """
    target = target or default_target()
    m = target.machine
    rounded = -(-registers // 8) * 8  # allocated in units of 8 per thread
    per_thread = max(8, rounded)  # pragma: no mutate (a floor of 8 or 9 never binds: the warp limit does first)
    by = {  # the architectural limits first: on a tie they are what binds
        "warps per SM": m.max_warps_per_sm // num_warps,
        "CTAs per SM": m.max_ctas_per_sm,
        "registers": m.registers_per_sm // (per_thread * target.warp_size * num_warps),
        "shared memory": m.shared_bytes_per_sm // (shared_bytes + m.cta_shared_reserved)
        if shared_bytes  # pragma: no mutate (none used: the reserve alone never binds, and may be 0 bytes)
        else m.max_ctas_per_sm,
    }
    limiter = min(by, key=lambda k: by[k])
    return by[limiter] * num_warps, limiter
