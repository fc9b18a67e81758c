"""The trajectory model: what one kernel's compile looked like after every pass.

A Trajectory holds ordered Snapshots (stage, pass, IR text with locations) and Artifacts (cubin, SASS, …).
What the compiler said during each pass (remarks, warnings, errors) is kept as text per snapshot and read back as
structured Remarks tied to the pass and the kernel's line.
Snapshot texts live in files once stored; in memory they load lazily, so a trajectory of 70 snapshots and
20 MB of IR opens instantly.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from irscope.parse.diagnostics import SEVERITIES, parse_diagnostics
from irscope.targets import Target

FORMAT_VERSION = 1

# Snapshot kinds: which parser reads the text.
MLIR, LLVM_IR, PTX, AMDGCN = "mlir", "llvm-ir", "ptx", "amdgcn"
INPUT_PASS = "<input>"


def sha1(text: str | bytes) -> str:
    data = text.encode() if isinstance(text, str) else text
    return hashlib.sha1(data).hexdigest()


@dataclass
class Snapshot:
    """The IR after one pass (or a stage's input, `stage_index == -1`)."""

    index: int
    stage: str  # Triton's stage key: ttir, ttgir, llir, ptx, amdgcn
    stage_index: int  # -1: the stage's input; 0..: the pass's position within the stage
    pass_arg: str  # MLIR pass argument as dumps print it, e.g. tritongpu-remove-layout-conversions
    pass_name: str | None  # MLIR pass name where known, e.g. TritonGPURemoveLayoutConversions
    adder: str | None  # the Python adder that added the pass, e.g. passes.ttgpuir.add_remove_layout_conversions
    pipeline: str | None  # textual pipeline with options, as MLIR prints it
    kind: str  # mlir | llvm-ir | ptx | amdgcn
    sha1: str
    changed: bool  # text differs from the previous snapshot
    wall_ms: float  # time the pass itself took
    ir_file: str = ""  # path relative to the trajectory directory, once stored
    diagnostics: str = ""  # what the compiler printed on stderr during this pass (remarks, warnings, errors)
    error: str | None = None  # set on the pass that failed
    _text: str | None = field(default=None, repr=False, compare=False)
    _loader: Callable[[str], str] | None = field(default=None, repr=False, compare=False)

    @property
    def text(self) -> str:
        if self._text is None:
            if self._loader is None:
                raise RuntimeError(f"snapshot {self.index} has no text and no file to load it from")
            self._text = self._loader(self.ir_file)
        return self._text

    @property
    def label(self) -> str:
        """Short name for tables: `ttgir[4] tritongpu-remove-layout-conversions`."""
        return f"{self.stage}[{self.stage_index}] {self.pass_arg}"

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "stage": self.stage,
            "stage_index": self.stage_index,
            "pass_arg": self.pass_arg,
            "pass_name": self.pass_name,
            "adder": self.adder,
            "pipeline": self.pipeline,
            "kind": self.kind,
            "sha1": self.sha1,
            "changed": self.changed,
            "wall_ms": round(self.wall_ms, 4),
            "ir_file": self.ir_file,
            "diagnostics": self.diagnostics,
            "error": self.error,
        }

    @classmethod
    def from_json(cls, d: dict[str, Any], loader: Callable[[str], str] | None = None) -> Snapshot:
        if d["stage"] == "llir" and d["kind"] == LLVM_IR:  # written before the LLVM IR had its own stage
            d = {**d, "stage": "llvm", "stage_index": 0}
        return cls(**d, _loader=loader)


@dataclass
class Artifact:
    """A compiler output that is not a pass snapshot: cubin, SASS, hsaco, ptxas log, metadata."""

    name: str
    file: str  # relative to the trajectory directory, once stored
    binary: bool
    sha1: str  # "" for a derived artifact not yet produced when the capture ended
    # Made from another artifact after the compile, off the capture's critical path (SASS from the cubin):
    # produced in the background, or on first use where the background run did not finish.
    derived_from: str | None = None
    _data: str | bytes | None = field(default=None, repr=False, compare=False)
    _loader: Callable[[str, bool], str | bytes] | None = field(default=None, repr=False, compare=False)

    @property
    def data(self) -> str | bytes:
        if self._data is None:
            if self._loader is None:
                raise RuntimeError(f"artifact {self.name} has no data and no file to load it from")
            self._data = self._loader(self.file, self.binary)
        return self._data

    def to_json(self) -> dict[str, Any]:
        out = {"name": self.name, "file": self.file, "binary": self.binary, "sha1": self.sha1}
        if self.derived_from:
            out["derived_from"] = self.derived_from
        return out


@dataclass
class KernelInfo:
    name: str
    source_file: str  # absolute path at capture time
    first_line: int  # line of `def` (decorators excluded)
    last_line: int
    source: str = ""  # the whole source file as it was at capture time

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source_file": self.source_file,
            "first_line": self.first_line,
            "last_line": self.last_line,
        }


@dataclass
class Specialization:
    """What the JIT specialized on. `triton` is Triton's own serialization (the `preload` format)."""

    signature: dict[str, str]  # parameter → Triton type: *fp16, i32, constexpr, …
    constexprs: dict[str, Any]  # parameter → value, JSON-rendered
    attrs: dict[str, list]  # parameter → [["tt.divisibility", 16], …]
    options: dict[str, Any]  # num_warps, num_stages, num_ctas, …, as the backend parsed them
    triton: str = ""  # JSON string accepted by JITFunction.preload

    def to_json(self) -> dict[str, Any]:
        return {
            "signature": self.signature,
            "constexprs": self.constexprs,
            "attrs": self.attrs,
            "options": self.options,
            "triton": self.triton,
        }


@dataclass
class CompileFailure:
    stage: str | None
    pass_arg: str | None
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"stage": self.stage, "pass_arg": self.pass_arg, "message": self.message}


@dataclass(frozen=True)
class Remark:
    """One diagnostic the compiler printed during a pass: "MMA version 3 acceleration not applied …"."""

    snapshot: int  # index of the snapshot of the pass that printed it
    stage: str
    pass_arg: str
    severity: str  # remark | warning | error
    message: str
    line: int | None  # the kernel's line it points at (through "called from" notes), None when none does
    location: str  # where the compiler pointed, FILE:LINE:COL ("" when it named no file)
    notes: tuple[str, ...] = ()  # notes attached to it ("Target compute capability (90) supports MMA v3.")
    count: int = 1  # times the pass printed it (a rewrite pattern may report the same op on every attempt)

    @property
    def text(self) -> str:
        """The message with its notes: how a hazard cites it, and so how L3 tells a cited remark."""
        return " ".join((self.message, *self.notes))

    def to_json(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.__dict__.items()}


@dataclass
class Trajectory:
    kernel: KernelInfo
    target: Target
    specialization: Specialization
    snapshots: list[Snapshot] = field(default_factory=list)
    artifacts: dict[str, Artifact] = field(default_factory=dict)
    resources: dict[str, Any] = field(default_factory=dict)  # registers, spills, shared, local bytes, warps
    times: dict[str, Any] = field(default_factory=dict)  # capture_s, stage_ms{…}
    versions: dict[str, str] = field(default_factory=dict)
    error: CompileFailure | None = None
    created: str = ""
    complete: bool = True  # False when loaded from a journal of a capture that died
    derivation: dict[str, Any] | None = None  # compiled from another trajectory with edits (irscope.whatif)
    origin: dict[str, Any] | None = None  # read from another tool's trace (irscope import), not compiled here
    root: Path | None = None

    @property
    def stages(self) -> list[str]:
        seen: list[str] = []
        for s in self.snapshots:
            if s.stage not in seen:
                seen.append(s.stage)
        return seen

    def stage_snapshots(self, stage: str) -> list[Snapshot]:
        return [s for s in self.snapshots if s.stage == stage]

    def stage_output(self, stage: str) -> Snapshot:
        """The last snapshot of a stage: byte-identical to what the compiler handed to the next stage."""
        snaps = self.stage_snapshots(stage)
        if not snaps:
            raise KeyError(f"no snapshots for stage {stage!r}; stages: {', '.join(self.stages)}")
        return snaps[-1]

    def passes(self) -> Iterator[Snapshot]:
        """Snapshots that follow a pass (stage inputs excluded)."""
        return (s for s in self.snapshots if s.stage_index >= 0)

    def changed_passes(self) -> list[Snapshot]:
        return [s for s in self.passes() if s.changed]

    def find(self, query: str | int) -> Snapshot:
        """A snapshot by index, by `stage[i]`, or by the first pass whose argument or adder contains `query`."""
        if isinstance(query, int) or str(query).isdigit():
            i = int(query)
            if not 0 <= i < len(self.snapshots):
                raise KeyError(f"snapshot {i} out of range 0..{len(self.snapshots) - 1}")
            return self.snapshots[i]
        q = str(query)
        if "[" in q and q.endswith("]"):
            stage, idx = q[:-1].split("[", 1)
            for s in self.snapshots:
                if s.stage == stage and s.stage_index == int(idx):
                    return s
        for s in self.snapshots:
            if q == s.pass_arg or q == s.pass_name or (s.adder and q in s.adder) or q in s.pass_arg:
                return s
        raise KeyError(f"no snapshot matches {query!r}")

    def remarks(self, severities: tuple[str, ...] = SEVERITIES) -> list[Remark]:
        """The compiler's diagnostics of every pass, in pass order, identical ones of a pass counted once."""
        out: list[Remark] = []
        for snap in self.snapshots:
            counts = Counter(d for d in parse_diagnostics(snap.diagnostics) if d.severity in severities)
            for d, n in counts.items():  # insertion order: as printed
                line = next((f.line for f in d.frames if f.file == self.kernel.source_file), None)
                where = str(d.frames[0]) if d.frames else ""
                out.append(
                    Remark(snap.index, snap.stage, snap.pass_arg, d.severity, d.message, line, where, d.notes, n)
                )
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "format": "irscope-trajectory",
            "format_version": FORMAT_VERSION,
            "created": self.created,
            "kernel": self.kernel.to_json(),
            "target": self.target.to_json(),
            "specialization": self.specialization.to_json(),
            "snapshots": [s.to_json() for s in self.snapshots],
            "artifacts": {k: a.to_json() for k, a in self.artifacts.items()},
            "resources": self.resources,
            "times": self.times,
            "versions": self.versions,
            "error": self.error.to_json() if self.error else None,
            "complete": self.complete,
            **({"derivation": self.derivation} if self.derivation is not None else {}),
            **({"origin": self.origin} if self.origin is not None else {}),
        }
