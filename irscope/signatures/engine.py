"""Counters per snapshot and artifact, each count attributed to a line of the kernel's Python source."""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from dataclasses import dataclass, field

from irscope.parse.asm import Instr, parse_amdgcn, parse_ptx, parse_sass
from irscope.parse.llvmir import parse_llvm_ir
from irscope.parse.locations import Frame, LocationTable
from irscope.parse.mlir import Op, parse_mlir, scan_ops
from irscope.signatures.registry import rules_for
from irscope.signatures.rules import MAX, SUM, InstrRule, OpRule
from irscope.trajectory import LLVM_IR, MLIR, Snapshot, Trajectory

UNATTRIBUTED = 0  # line key for counts that map to no line of the kernel's file
FULL_PARSE_LIMIT = 400_000  # characters; larger MLIR texts take the regex fast path (single-line ops only)


def is_llvm_dialect(text: str) -> bool:
    """Lowered to the LLVM dialect: one op per line, no regions worth tracking, tens of thousands of ops."""
    return "llvm.func " in text


@dataclass
class Signature:
    counters: dict[str, int] = field(default_factory=dict)
    lines: dict[int, dict[str, int]] = field(default_factory=dict)  # kernel line → counter → value

    def add(self, counter: str, value: int, line: int, aggregate: str = SUM) -> None:
        if not value:
            return
        bucket = self.lines.setdefault(line, {})
        if aggregate == MAX:
            self.counters[counter] = max(self.counters.get(counter, value), value)
            bucket[counter] = max(bucket.get(counter, value), value)
        else:
            self.counters[counter] = self.counters.get(counter, 0) + value
            bucket[counter] = bucket.get(counter, 0) + value


class LineResolver:
    """Maps frames to lines of the kernel's file. Inside `tl.*` helpers (triton/language/*.py), PTX and SASS
    line tables name the helper's line only; the MLIR call-site locations say which kernel lines call that
    helper line. One caller: that line. Several: the caller most recently seen in instruction order, else the
    next caller after it (code is emitted roughly in source order), else the last before it."""

    def __init__(self, kernel_file: str, mlir_texts: list[str]):
        self.kernel_file = kernel_file
        self.callers: dict[tuple[str, int], set[int]] = defaultdict(set)
        for text in mlir_texts:
            table = LocationTable(text)
            for alias in list(table._raw):
                frames = table.resolve(alias).frames
                user = next((f for f in frames if f.file == kernel_file), None)
                if user is None:
                    continue
                for f in frames:
                    if f.file == kernel_file:
                        break
                    self.callers[(f.file, f.line)].add(user.line)

    def line(self, frame: Frame | None, previous: int) -> int:
        if frame is None:
            return UNATTRIBUTED
        if frame.file == self.kernel_file:
            return frame.line
        callers = self.callers.get((frame.file, frame.line))
        if not callers:
            return UNATTRIBUTED
        later = [c for c in callers if c >= previous]  # the one seen last, else the next after it
        return min(later) if later else max(callers)


def mlir_signature(text: str, stage: str, rules: list[OpRule], kernel_file: str) -> Signature:
    sig = Signature()
    applicable = [r for r in rules if not r.stages or stage in r.stages]
    by_name: dict[str, list[OpRule]] = defaultdict(list)
    star: list[OpRule] = []
    for r in applicable:
        for name in r.ops:
            (star if name == "*" else by_name[name]).append(r)
    ops: list[Op]
    llvm_dialect = is_llvm_dialect(text)
    if llvm_dialect:
        star = []  # after conversion to the LLVM dialect no tensor encodings remain
    # equivalent mutants of the limit: both paths count the same (tests/irscope/test_signatures_engine.py)
    small = len(text) <= FULL_PARSE_LIMIT // 4  # pragma: no mutate (equivalent, see above)
    if not llvm_dialect or small:
        parsed = parse_mlir(text)
        ops, aliases = parsed.ops, parsed.aliases
    else:
        ops, aliases = scan_ops(text, set(by_name)), {}
    for op in ops:
        named = by_name.get(op.name)
        if not named and not star:
            continue
        frame = op.location.user_frame(kernel_file)
        line = frame.line if frame is not None and frame.file == kernel_file else UNATTRIBUTED
        for rule in (named or []) + star:
            sig.add(rule.counter, rule.value(op, aliases), line, rule.aggregate)
    return sig


def attribute(instrs: list[Instr], resolver: LineResolver) -> list[int]:
    """Each instruction's kernel line, from its own line-table frame."""
    out: list[int] = []
    previous = UNATTRIBUTED
    for ins in instrs:
        line = resolver.line(ins.frame, previous)
        if line != UNATTRIBUTED:
            previous = line
        out.append(line)
    return out


class PtxLines:
    """Kernel line of each PTX text line, as the PTX's attribution gave it. SASS from `nvdisasm -gp` names the
    PTX line each instruction came from; reading its kernel line here puts SASS counts on the same lines as
    the PTX's, inlined `tl.*` code included (the SASS line table alone names only the helper's line, and
    ptxas reorders code, so the PTX-order heuristic of LineResolver would misplace it)."""

    def __init__(self, instrs: list[Instr], lines: list[int]):
        pairs = sorted(zip((i.line_no for i in instrs), lines))
        self._nos = [n for n, _ in pairs]
        self._lines = [line for _, line in pairs]

    def line(self, ptx_line: int) -> int | None:
        """The kernel line of the PTX instruction on `ptx_line` (a non-instruction line: the instruction before)."""
        if not self._nos:
            return None
        i = bisect_right(self._nos, ptx_line) - 1
        return self._lines[max(i, 0)]


def instr_signature(
    instrs: list[Instr],
    kind: str,
    rules: list[InstrRule],
    resolver: LineResolver,
    ptx_lines: PtxLines | None = None,
) -> Signature:
    sig = Signature()
    applicable = [r for r in rules if r.kind == kind]
    lines = attribute(instrs, resolver)
    for ins, line in zip(instrs, lines):
        if ptx_lines is not None and ins.ptx_line is not None:
            line = ptx_lines.line(ins.ptx_line) or line
        for rule in applicable:
            sig.add(rule.counter, rule.count(ins), line, rule.aggregate)
    return sig


def llvm_ir_signature(text: str, rules: list[InstrRule], kernel_file: str) -> Signature:
    sig = Signature()
    applicable = [r for r in rules if r.kind == LLVM_IR]
    for ins, frames in parse_llvm_ir(text):
        user = next((f for f in frames if f.file == kernel_file), None)
        line = user.line if user else UNATTRIBUTED
        for rule in applicable:
            sig.add(rule.counter, rule.count(ins), line, rule.aggregate)
    return sig


class Analyzer:
    """Signatures of one trajectory's snapshots and artifacts, computed once per distinct text."""

    def __init__(self, traj: Trajectory):
        self.traj = traj
        self.op_rules, self.instr_rules = rules_for(traj.target.backend)
        self.kernel_file = traj.kernel.source_file
        # (stage, digest of the text): a stage's rules may count the same text differently. A cache only: equivalent
        # mutants of its lines (a broken one computes the same signature again) are marked
        self._computed: dict[tuple[str, str], Signature] = {}
        self._resolver: LineResolver | None = None

    @property
    def resolver(self) -> LineResolver:
        if self._resolver is None:
            texts = []
            for stage in ("ttgir", "llir"):
                mlir = [s for s in self.traj.stage_snapshots(stage) if s.kind == MLIR]
                if mlir:
                    texts.append(mlir[-1].text)
            self._resolver = LineResolver(self.kernel_file, texts)
        return self._resolver

    def signature(self, snap: Snapshot) -> Signature:
        key = (snap.stage, snap.sha1)
        hit = self._computed.get(key)  # pragma: no mutate (a cache, above)
        if hit is not None:
            return hit
        text = snap.text
        if snap.kind == MLIR:
            sig = mlir_signature(text, snap.stage, self.op_rules, self.kernel_file)
        elif snap.kind == LLVM_IR:
            sig = llvm_ir_signature(text, self.instr_rules, self.kernel_file)
        elif snap.kind == "ptx":
            sig = instr_signature(parse_ptx(text), "ptx", self.instr_rules, self.resolver)
        else:
            sig = instr_signature(parse_amdgcn(text), "amdgcn", self.instr_rules, self.resolver)
        self._computed[key] = sig  # pragma: no mutate (a cache, above)
        return sig

    def ptx_lines(self) -> PtxLines | None:
        ptx = [s for s in self.traj.snapshots if s.kind == "ptx"]
        if not ptx:
            return None
        instrs = parse_ptx(ptx[-1].text)  # the PTX ptxas compiled: the stage's output
        return PtxLines(instrs, attribute(instrs, self.resolver))

    def sass(self) -> Signature | None:
        art = self.traj.artifacts.get("sass")
        if art is None:
            return None
        key = ("sass", art.sha1)  # pragma: no mutate (a cache, above)
        if key not in self._computed:
            try:
                text = str(art.data)
            except RuntimeError:  # nvdisasm failed (made on first use): no SASS counts, the rest stands
                return None
            instrs = parse_sass(text)
            ptx_lines = self.ptx_lines()  # read only for the instructions that name a PTX line
            self._computed[key] = instr_signature(instrs, "sass", self.instr_rules, self.resolver, ptx_lines)
        return self._computed[key]

    def stage_signatures(self) -> dict[str, Signature]:
        """Summary stages → signature of the stage's final text: ttir, ttgir, llir (last LLVM-dialect MLIR),
        llvm (LLVM IR), ptx / amdgcn, sass."""
        out: dict[str, Signature] = {}
        for stage in self.traj.stages:
            snaps = self.traj.stage_snapshots(stage)
            mlir = [s for s in snaps if s.kind == MLIR]
            if mlir:
                out[stage] = self.signature(mlir[-1])
            for s in snaps:
                if s.kind == LLVM_IR:
                    out["llvm"] = self.signature(s)
                elif s.kind in ("ptx", "amdgcn"):
                    out[s.kind] = self.signature(s)
        if (sass := self.sass()) is not None:
            out["sass"] = sass
        return out
