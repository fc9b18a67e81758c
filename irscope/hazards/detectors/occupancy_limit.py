"""The occupancy-limit symptom (registers or shared memory per CTA leave room for a single CTA per SM): its detector,
the counters that show it and its what-if planner, in one record (SYMPTOM)."""

from __future__ import annotations

from irscope.hazards import cost
from irscope.hazards.model import Hazard, Symptom
from irscope.hazards.plan import Plan, opt, option
from irscope.hazards.view import KernelView
from irscope.trajectory import Trajectory


def occupancy_limit(view: KernelView) -> list[Hazard]:
    if not view.nvidia:
        return []
    regs = int(view.resources.get("res.registers", 0))
    shared = int(view.resources.get("res.shared_bytes", 0))
    warps, limiter = cost.resident_warps(regs, shared, view.num_warps, view.traj.target)
    if limiter not in ("registers", "shared memory") or warps > view.num_warps:
        return []
    return [
        Hazard(
            "occupancy-limit",
            view.kernel,
            (),
            f"one CTA per SM ({warps} warps), limited by {limiter}: {regs} registers per thread, {shared} bytes of "
            f"shared memory per CTA, {view.num_warps} warps per CTA",
            0.0,  # set from the kernel's total cost by find(): occupancy scales everything
            {"resident_warps": warps, "res.registers": regs, "res.shared_bytes": shared},
            introduced_by=view.introducing("layout.shared_bytes") if limiter == "shared memory" else None,
            cause=limiter,
        )
    ]


def plan(h: Hazard, traj: Trajectory) -> list[Plan]:
    if h.cause == "shared memory":
        stages = opt(traj, "num_stages", 3)
        return [
            option("num_stages", s, f"{s} pipeline stages (less shared memory per CTA)")
            for s in (stages - 1, stages - 2)  # the smallest change first, never below the two the pipeliner needs
            if s >= 2
        ]
    if h.cause == "registers":
        warps = opt(traj, "num_warps", 4)
        registers, lanes = traj.target.machine.registers_per_sm, traj.target.warp_size
        cap = registers // (2 * warps * lanes) // 8 * 8  # two CTAs' threads in the register file
        return [option("maxnreg", cap, f"at most {cap} registers per thread (two CTAs per SM)")]
    return []


SYMPTOM = Symptom(
    "occupancy-limit",
    (
        "registers or shared memory per CTA leave room for a single CTA per SM: nothing overlaps its "
        "prologue, epilogue and barriers with another CTA's work"
    ),
    occupancy_limit,
    shows=("res.shared_bytes", "res.registers"),
    plan=plan,
    needs_sass=True,
    kernel_share=cost.ONE_CTA_IDLE,  # a lone CTA's prologue, epilogue and barriers go unoverlapped
)
