"""One captured kernel as the hazard detectors read it: counters per stage and line, the pass graph, the final
TTGIR's ops with their lines and loop nesting, resources. Everything is computed once and shared."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property

from irscope import signatures
from irscope.access import Access, AccessError, accesses
from irscope.graph import Edge, StageDiffGraph
from irscope.hazards.model import PassRef
from irscope.parse.mlir import Op, parse_mlir
from irscope.signatures.engine import UNATTRIBUTED, is_llvm_dialect
from irscope.trajectory import MLIR, Remark, Snapshot, Trajectory

LOOP_OPS = ("scf.for", "scf.while")


@dataclass(frozen=True)
class Reached:
    """An op of the final TTGIR: its kernel line and how many loops enclose it."""

    op: Op
    line: int
    loop_depth: int


class KernelView:
    def __init__(self, traj: Trajectory):
        self.traj = traj
        self.analyzer = signatures.Analyzer(traj)
        self.kernel = traj.kernel.name
        self.source_file = traj.kernel.source_file

    # -- counters ----------------------------------------------------------------------------------------------
    @cached_property
    def stages(self) -> dict[str, signatures.Signature]:
        return self.analyzer.stage_signatures()

    def lines(self, stage: str) -> dict[int, dict[str, int]]:
        """Kernel line → counters of `stage`'s final text (line 0: not attributed to a kernel line)."""
        sig = self.stages.get(stage)
        return {k: v for k, v in sig.lines.items() if k != UNATTRIBUTED} if sig else {}

    def total(self, stage: str, counter: str) -> int:
        sig = self.stages.get(stage)
        return sig.counters.get(counter, 0) if sig else 0

    def on_lines(self, stage: str, lines: Iterable[int], counter: str) -> int:
        at = self.lines(stage)
        return sum(at.get(n, {}).get(counter, 0) for n in lines)

    @property
    def machine_stage(self) -> str:
        """The instruction text whose per-line counts hazards are costed on: PTX (or AMDGCN), whose line tables
        name the kernel's lines exactly; SASS only when nothing else was captured (its lines inside inlined
        `tl.*` helpers are mapped back by a heuristic). Local memory, which only SASS shows, is read there."""
        return next((s for s in ("ptx", "amdgcn", "sass") if s in self.stages), "llir")

    @cached_property
    def resources(self) -> dict[str, float]:
        return signatures.resources(self.traj)

    @property
    def nvidia(self) -> bool:
        return self.traj.target.backend == "cuda"

    @property
    def capability(self) -> int:
        return self.traj.target.capability or 0

    @property
    def num_warps(self) -> int:
        return int(self.traj.resources.get("num_warps") or self.traj.specialization.options.get("num_warps", 4))

    # -- the final TTGIR -----------------------------------------------------------------------------------------
    @cached_property
    def ttgir_ops(self) -> list[Reached]:
        return self._reached(self._ttgir) if self._ttgir is not None else []

    @cached_property
    def ttgir_aliases(self) -> dict[str, str]:
        """The final TTGIR's attribute aliases (`#blocked = #ttg.blocked<{…}>`), to read layouts with."""
        return parse_mlir(self._ttgir.text).aliases if self._ttgir is not None and self._ttgir.kind == MLIR else {}

    @cached_property
    def _ttgir(self) -> Snapshot | None:
        try:
            return self.traj.stage_output("ttgir")
        except KeyError:
            return None

    def _reached(self, snap: Snapshot) -> list[Reached]:
        if snap.kind != MLIR:
            return []
        out = []
        for op in parse_mlir(snap.text).ops:
            frame = op.location.user_frame(self.source_file)
            line = frame.line if frame is not None and frame.file == self.source_file else UNATTRIBUTED
            depth, parent = 0, op.parent
            while parent is not None:
                depth += parent.name in LOOP_OPS
                parent = parent.parent
            out.append(Reached(op, line, depth))
        return out

    def ops_in(self, snap: Snapshot) -> list[Reached]:
        return self._reached(snap)

    def loop_depth(self, line: int) -> int:
        return max((r.loop_depth for r in self.ttgir_ops if r.line == line), default=0)

    @cached_property
    def accesses(self) -> list[Access]:
        """Every global load, store and atomic, with why it is as wide as it is (irscope.access)."""
        try:
            return accesses(self.traj)
        except AccessError:
            return []

    # -- passes ------------------------------------------------------------------------------------------------
    @cached_property
    def graph(self) -> StageDiffGraph:
        return StageDiffGraph(self.traj, self.analyzer)

    def introducing(self, counter: str, lines: Iterable[int] = ()) -> PassRef | None:
        """The pass that created `counter`'s instructions: the last IR-to-IR edge that took it from none to some
        (on `lines`, when given and the per-line counts show it); later growth is the same thing lowered further.
        When it appears only in the next language (PTX, SASS), the pass that lowered the ops to LLVM."""
        wanted = set(lines)

        def value(index: int) -> int:
            sig = self.graph.signature(index)
            if wanted:
                return sum(sig.lines.get(n, {}).get(counter, 0) for n in wanted)
            return sig.counters.get(counter, 0)

        within: list[Edge] = []
        across: list[Edge] = []
        for e in self.graph.edges():
            before, after = value(e.source), value(e.target)
            if before == 0 < after:
                (across if e.kind_change else within).append(e)
        if within:
            return PassRef(within[-1].target, within[-1].stage, within[-1].pass_arg)
        if wanted:
            return self.introducing(counter)
        return self.lowering if across else None

    @cached_property
    def lowering(self) -> PassRef | None:
        """The pass that lowered TritonGPU ops to the LLVM dialect (the first snapshot in the LLVM dialect)."""
        for s in self.traj.passes():
            if s.kind == MLIR and is_llvm_dialect(s.text):
                return PassRef(s.index, s.stage, s.pass_arg)
        return None

    def pass_runs(self, pass_arg: str) -> list[Snapshot]:
        """Every snapshot taken after a run of `pass_arg`, in pipeline order."""
        return [s for s in self.traj.passes() if s.pass_arg == pass_arg]

    def before(self, snap: Snapshot) -> Snapshot:
        return self.traj.snapshots[snap.index - 1] if snap.index > 0 else snap

    def declined(
        self, pass_arg: str, counter: str | None = None, test: Callable[[list[Reached]], bool] | None = None
    ) -> PassRef | None:
        """The last run of `pass_arg` whose input and output both show the missed opportunity: `counter` > 0 in
        both texts, or `test(ops)` true for both (it was there when the pass ran and is still there after)."""

        def holds(snap: Snapshot) -> bool:
            if counter is not None and not self.analyzer.signature(snap).counters.get(counter):
                return False
            return test is None or test(self.ops_in(snap))

        for snap in reversed(self.pass_runs(pass_arg)):
            if holds(self.before(snap)) and holds(snap):
                return PassRef(snap.index, snap.stage, snap.pass_arg)
        return None

    # -- compiler remarks ----------------------------------------------------------------------------------------
    def remarks(self, needle: str = "") -> list[Remark]:
        """What the compiler printed while capturing (remarks, warnings), those whose message holds `needle`."""
        return [r for r in self.traj.remarks() if needle in r.message]
