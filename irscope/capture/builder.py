"""Turns the stream of stages and replayed passes of one compile into a Trajectory."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from irscope.capture.pass_names import pass_name
from irscope.capture.passes import PassSink, RecordedPass
from irscope.targets import Target
from irscope.trajectory import (
    AMDGCN,
    INPUT_PASS,
    LLVM_IR,
    MLIR,
    PTX,
    Artifact,
    CompileFailure,
    KernelInfo,
    Snapshot,
    Specialization,
    Trajectory,
    sha1,
)

if TYPE_CHECKING:  # the adapters import this module
    from irscope.backends.base import BackendAdapter

# Steps of a stage that are not MLIR passes: (pass argument, description, kind) of the stage's final snapshot.
CODEGEN_STEPS = {
    # llvm.to_module + llvm.optimize_module(O3); then llvm.translate_to_asm (+ Triton's PTX post-processing)
    "llir": ("translate-to-llvm-ir", "LLVMTranslation+O3", LLVM_IR),
    "ptx": ("nvptx-codegen", "NVPTXCodegen", PTX),
    "amdgcn": ("amdgpu-codegen", "AMDGPUCodegen", AMDGCN),
}
# irscope's stages are the texts it records. Triton's `llir` stage makes two: its MLIR passes work on the LLVM
# dialect (irscope stage `llir`), then it translates to LLVM IR (irscope stage `llvm`: what Triton calls
# asm["llir"]). Trajectories, tables, counters and diffs all use these names.
LLVM_STAGE = "llvm"
TEXT_STAGE = {"llir": LLVM_STAGE}  # Triton stage → irscope stage of its codegen snapshot, where they differ
FRONTEND = ("ttir", "ast-to-ttir")  # (stage, pass) of a failure before the first stage: Triton's Python frontend
BINARY_STAGES = {"cubin", "hsaco"}
_TAG_TO_STAGE = {"make_ttir": "ttir", "make_ttgir": "ttgir", "gluon_to_ttgir": "ttgir", "make_llir": "llir"}


class SnapshotListener:
    """Something that wants each snapshot as soon as it exists (the on-disk journal)."""

    def snapshot_added(self, snap: Snapshot) -> None: ...

    def artifact_added(self, art: Artifact) -> None: ...


class TrajectoryBuilder(PassSink):
    def __init__(self, target: Target, listener: SnapshotListener | None = None, adapter: BackendAdapter | None = None):
        self.target = target
        self.listener = listener
        self.adapter = adapter  # adds the backend's artifacts (SASS, resources) when the compile finishes
        self.snapshots: list[Snapshot] = []
        self.artifacts: dict[str, Artifact] = {}
        self.stage_ms: dict[str, float] = {}  # per irscope stage (Triton's llir split into llir and llvm)
        self.stage: str | None = None
        self._last_pass_end = 0.0
        self.first_stage_at: float | None = None  # perf_counter when the first stage began (the frontend ended)
        # Work on derived artifacts (SASS) to start once the trajectory's directory is final (None: in memory).
        self.background: list[Callable[[Path | None], None]] = []
        self._stage_pos = 0
        self._last_output: Any = None
        self.failure: CompileFailure | None = None
        self.metadata: dict[str, Any] = {}

    # -- stages ------------------------------------------------------------------------------------------------
    def wrap_stage(self, key: str, fn: Any) -> Any:
        def stage(src: Any, metadata: dict) -> Any:
            self._begin_stage(key, src)
            t0 = time.perf_counter()
            try:
                out = fn(src, metadata)
            except Exception as e:
                self._time_stage(key, t0)
                if self.failure is None:
                    self.failure = CompileFailure(*self._failed_where(key, t0), _message(e))
                raise
            self._time_stage(key, t0)
            self.metadata = metadata
            self._end_stage(key, out)
            return out

        return stage

    def _time_stage(self, key: str, t0: float) -> None:
        """Wall time of the stage; a stage whose codegen step makes another irscope stage is split where its
        last MLIR pass ended (that pass's printing counts for the passes)."""
        end = time.perf_counter()
        if key in TEXT_STAGE and self._last_pass_end > t0:
            self.stage_ms[key] = (self._last_pass_end - t0) * 1e3
            self.stage_ms[TEXT_STAGE[key]] = (end - self._last_pass_end) * 1e3
        else:
            self.stage_ms[key] = (end - t0) * 1e3

    def _failed_where(self, key: str, t0: float) -> tuple[str, str | None]:
        """(stage, pass) of a stage's failure: the pass that failed, else the codegen step after the passes."""
        last = self.snapshots[-1] if self.snapshots else None
        if last is not None and last.stage == key and last.error:
            return key, last.pass_arg
        if key in CODEGEN_STEPS:
            passes_done = key not in TEXT_STAGE or self._last_pass_end > t0
            return (TEXT_STAGE.get(key, key), CODEGEN_STEPS[key][0]) if passes_done else (key, None)
        return key, None

    def _begin_stage(self, key: str, src: Any) -> None:
        if self.first_stage_at is None:
            self.first_stage_at = time.perf_counter()
        self.stage = key
        self._stage_pos = 0
        if key in CODEGEN_STEPS or key in BINARY_STAGES or not hasattr(src, "str"):
            return  # the input of these stages is the previous stage's final snapshot, text already recorded
        prev = self.snapshots[-1] if self.snapshots else None
        # The previous stage hands over the module object it returned; reuse its text unless an override
        # (ir_override, TRITON_KERNEL_OVERRIDE) swapped the module.
        text = prev.text if prev is not None and src is self._last_output else src.str()
        self._add(key, -1, INPUT_PASS, "stage input", None, None, MLIR, text, 0.0)

    def _end_stage(self, key: str, out: Any) -> None:
        self._last_output = out
        if key in CODEGEN_STEPS:
            arg, desc, kind = CODEGEN_STEPS[key]
            stage = TEXT_STAGE.get(key, key)
            if stage != key:
                self._add(stage, 0, arg, desc, None, None, kind, out, self.stage_ms.get(stage, 0.0))
            else:
                passes_ms = sum(s.wall_ms for s in self.snapshots if s.stage == key)
                self._add(key, self._stage_pos, arg, desc, None, None, kind, out, self.stage_ms[key] - passes_ms)
        elif key in BINARY_STAGES and isinstance(out, bytes):
            self.add_artifact(key, out)

    # -- passes (PassSink) ---------------------------------------------------------------------------------------
    def on_pass_manager_start(self, stage_tag: str, module: Any) -> None:
        if self.stage is None:
            self.stage = _TAG_TO_STAGE.get(stage_tag, stage_tag)

    def on_pass(self, rec: RecordedPass) -> None:
        stage = self.stage or _TAG_TO_STAGE.get(rec.stage_tag, rec.stage_tag)
        snap = self._add(
            stage,
            self._stage_pos,
            rec.pass_arg,
            pass_name(rec.pass_arg),
            rec.adder,
            rec.pipeline,
            MLIR,
            rec.text,
            rec.wall_ms,
            rec.diagnostics,
        )
        if rec.error:
            snap.error = rec.error
            self.failure = CompileFailure(stage, rec.pass_arg, f"{rec.error}\n{rec.diagnostics}".strip())
        self._stage_pos += 1
        self._last_pass_end = time.perf_counter()

    # -- records ---------------------------------------------------------------------------------------------------
    def _add(
        self,
        stage: str,
        stage_index: int,
        arg: str,
        name: str | None,
        adder: str | None,
        pipeline: str | None,
        kind: str,
        text: str,
        wall_ms: float,
        diagnostics: str = "",
    ) -> Snapshot:
        digest = sha1(text)
        prev = self.snapshots[-1] if self.snapshots else None
        snap = Snapshot(
            index=len(self.snapshots),
            stage=stage,
            stage_index=stage_index,
            pass_arg=arg,
            pass_name=name,
            adder=adder,
            pipeline=pipeline,
            kind=kind,
            sha1=digest,
            changed=prev is None or prev.sha1 != digest,
            wall_ms=wall_ms,
            diagnostics=diagnostics,
            _text=text,
        )
        if stage_index == -1:
            snap.changed = False  # a stage input is the previous output, not a change
        self.snapshots.append(snap)
        if self.listener:
            self.listener.snapshot_added(snap)
        return snap

    def add_artifact(self, name: str, data: str | bytes) -> Artifact:
        art = Artifact(name=name, file="", binary=isinstance(data, bytes), sha1=sha1(data), _data=data)
        self.artifacts[name] = art
        if self.listener:
            self.listener.artifact_added(art)
        return art

    def build(self, kernel: KernelInfo, spec: Specialization, **extra: Any) -> Trajectory:
        return Trajectory(
            kernel=kernel,
            target=self.target,
            specialization=spec,
            snapshots=self.snapshots,
            artifacts=self.artifacts,
            error=self.failure,
            **extra,
        )


def _message(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return f"{type(e).__name__}: {text}" if not text.startswith(type(e).__name__) else text
