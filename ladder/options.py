"""What a diagnosis is asked to do: one frozen `Options`, built by `build_options` from the arguments of a command
line (`ladder diagnose`, `optimize`, `suite`), the API (`ladder.diagnose`, `ladder.api.run`) or an MCP tool, and
read by the levels as typed fields, each default stated here once.

    opts = build_options(target="hip:gfx942", index="out/compiler-index.db", counterfactuals=0)
    opts.target.machine.part    # 'MI300X': parsed once, here
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from irscope.targets import Target, default_target, parse_target

if TYPE_CHECKING:
    from ladder.harness.gpu_lock import GpuSlot

# A case has reached its target once it runs within this fraction of speed of light (docs/suite.md uses 80 %).
DEFAULT_SOL_TARGET = 0.8
NCU_CASES = 2  # cases L2 profiles per kernel, those furthest from speed of light first
CAPTURE_TIMEOUT_S = 300.0  # L3's capture of an operator's forward, in its child process
MAX_COUNTERFACTUALS = 3  # what-if compiles per L4 run (each 1–3 s): the costliest hypotheses get them first


@dataclass(frozen=True)
class Options:
    target: Target = field(default_factory=default_target)  # what L1, L3 and L4 are for
    sol_target: float = DEFAULT_SOL_TARGET
    index_db: Path | None = None  # the compiler index L4 reads (None: out/compiler-index.db, built when absent)
    invariants: Path | None = None  # L3's and L4's invariants file (None: ladder/data/invariants.yaml)
    counterfactuals: int = MAX_COUNTERFACTUALS  # what-if compiles L4 may run (0 skips them)
    ncu: str = "ncu"  # Nsight Compute for L2's counters ("none": L2 without counters)
    ncu_cases: int = NCU_CASES
    gpu_slot: GpuSlot | None = None  # the GPU this worker's L2 profiles on (ladder runner); None: the default one
    capture_timeout_s: float = CAPTURE_TIMEOUT_S


def build_options(
    *,
    target: str | Target | None = None,
    sol_target: float | None = None,
    index: str | Path | None = None,
    invariants: str | Path | None = None,
    counterfactuals: int | None = None,
    ncu: str | None = None,
    ncu_cases: int | None = None,
    gpu_slot: GpuSlot | None = None,
) -> Options:
    """Options from arguments as the edges receive them (a target string, paths as text, None for "not given"):
    the one place they are parsed and defaulted. TargetError on a target Triton cannot build for."""
    d = Options()
    return Options(
        target=parse_target(target) if target is not None else d.target,
        sol_target=d.sol_target if sol_target is None else sol_target,
        index_db=Path(index) if index else None,
        invariants=Path(invariants) if invariants else None,
        counterfactuals=d.counterfactuals if counterfactuals is None else counterfactuals,
        ncu=ncu or d.ncu,
        ncu_cases=d.ncu_cases if ncu_cases is None else ncu_cases,
        gpu_slot=gpu_slot,
    )
