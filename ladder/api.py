"""`ladder.diagnose(kernel, *args, …)`: one pass up the ladder on a kernel of the user's own, from Python.

    import ladder
    d = ladder.diagnose(my_kernel, "*fp32", "*fp32", 4096, BLOCK=1024, num_warps=8, target="cuda:90")
    d.diagnosis.outcome           # actionable | inconclusive (no timings: L2 says so; L1, L3, L4 still run)
    d.findings[0].hazard.symptom  # the costliest hazard L3 found, typed (lines, pass, cost share)
    d.level("L4").evidence        # compiler source file:line for it

Arguments specialize the kernel exactly as `irscope.capture` does (spec strings, ints, tensors, TensorSpecs);
keyword arguments are constexprs and compile options (num_warps, num_stages, num_ctas, maxnreg).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irscope.capture.specialize import unwrap_kernel
from irscope.targets import DEFAULT_TARGET, Target
from ladder.context import Context, KernelSubject, quiet
from ladder.evidence import LEVEL_NAMES, Finding, LevelResult
from ladder.kernel_spec import KernelSpec
from ladder.levels import LEVELS
from ladder.options import build_options
from ladder.policy import Diagnosis, beyond, climb


@dataclass(frozen=True)
class KernelDiagnosis:
    """The ladder's diagnosis (where it stopped, or why it could not) and the deeper levels run beyond it."""

    spec: KernelSpec
    diagnosis: Diagnosis
    deeper: tuple[LevelResult, ...]

    @property
    def results(self) -> tuple[LevelResult, ...]:
        return (*self.diagnosis.results, *self.deeper)

    def level(self, name: str) -> LevelResult | None:
        return next((r for r in self.results if r.level == name), None)

    @property
    def findings(self) -> list[Finding]:
        """L3's hazards, costliest first (empty when L3 did not run or found none)."""
        l3 = self.level("L3")
        return [h.finding for h in (l3.hypotheses if l3 else ()) if h.finding is not None]

    def to_json(self) -> dict[str, Any]:
        return {
            "kernel": self.spec.name,
            "file": str(self.spec.path),
            "specialization": self.spec.describe(),
            "target": str(self.spec.target),
            **self.diagnosis.to_json(),
            "beyond": [r.to_json() for r in self.deeper],
        }


def run(
    spec: KernelSpec,
    *,
    through: str = "L4",
    index: str | Path | None = None,
    workdir: str | Path | None = None,
    invariants: str | Path | None = None,
    say: Callable[[str], None] | None = None,
    counterfactuals: int | None = None,
) -> KernelDiagnosis:
    """Diagnose `spec` up to level `through`; `counterfactuals` caps L4's what-if compiles (0 skips them)."""
    _check_through(through)  # before anything is written
    out = Path(workdir) if workdir else Path("out") / "diagnose" / spec.name
    out.mkdir(parents=True, exist_ok=True)
    options = build_options(target=spec.target, index=index, invariants=invariants, counterfactuals=counterfactuals)
    ctx = Context(KernelSubject(spec), out, options=options, say=say if say is not None else quiet)
    return KernelDiagnosis(spec, *ascend(ctx, through))


def _check_through(through: str) -> None:
    if through not in LEVEL_NAMES:
        raise ValueError(f"through={through!r}: one of {', '.join(LEVEL_NAMES)}")


def ascend(ctx: Context, through: str = "L4") -> tuple[Diagnosis, tuple[LevelResult, ...]]:
    """One pass up the ladder on any subject (an operator's kernel or a kernel spec), and the levels above where it
    stopped, up to `through`: what `ladder diagnose` and `ladder.diagnose` run."""
    _check_through(through)
    d = climb(ctx, LEVELS)
    return d, beyond(ctx, LEVELS, d, through)


def diagnose(
    kernel: Any,
    *args: Any,
    target: str | Target = DEFAULT_TARGET,
    through: str = "L4",
    index: str | Path | None = None,
    workdir: str | Path | None = None,
    say: Callable[[str], None] | None = None,
    **constexprs_and_options: Any,
) -> KernelDiagnosis:
    """Diagnose `kernel` as specialized by `args` and `constexprs_and_options` for `target` (no GPU needed)."""
    fn = unwrap_kernel(kernel, 0)[0]
    names = [p.name for p in fn.params]
    if len(args) > len(names):
        raise ValueError(f"{fn.__name__} takes {len(names)} arguments, {len(args)} given")
    spec = KernelSpec.from_kernel(kernel, dict(zip(names, args)), constexprs_and_options, target)
    return run(spec, through=through, index=index, workdir=workdir, say=say)
