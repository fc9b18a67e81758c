"""The signature engine's own rules: which kernel line a helper's instruction is charged to, the PTX line a SASS
instruction names, a per-line maximum, and the fast path for LLVM-dialect giants (irscope/signatures/engine.py); and
the registry's (irscope/signatures/registry.py): which rules a backend gets, one aggregation per counter."""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass

import pytest

from irscope.parse.asm import Instr
from irscope.parse.locations import Frame
from irscope.signatures import Analyzer
from irscope.signatures.core_rules import CORE_RULES
from irscope.signatures.engine import (
    UNATTRIBUTED,
    LineResolver,
    PtxLines,
    Signature,
    attribute,
    instr_signature,
    is_llvm_dialect,
    mlir_signature,
)
from irscope.signatures.registry import counter_names, declared_aggregation, rules_for
from irscope.signatures.rules import MAX, SUM, InstrRule, OpRule
from tests.trajectory_cache import capture

from . import counter_kernels as k

KERNEL = "k.py"
HELPER = Frame("triton/language/standard.py", 40, 1)  # a `tl.*` helper line that kernel lines 3, 5 and 9 call


def _resolver() -> LineResolver:
    resolver = LineResolver(KERNEL, [])
    resolver.callers[(HELPER.file, HELPER.line)] = {3, 5, 9}
    resolver.callers[("triton/language/math.py", 7)] = {6}
    return resolver


@dataclass
class _Instr:
    frame: Frame | None
    line_no: int = 0


def test_a_helper_line_called_from_one_kernel_line_is_that_line_and_from_several_the_nearest_in_order():
    r = _resolver()
    assert r.line(Frame(KERNEL, 4, 1), 9) == 4  # the kernel's own line
    assert r.line(Frame("triton/language/math.py", 7, 1), 9) == 6  # one caller, wherever the previous was
    assert r.line(HELPER, 5) == 5  # the caller seen last
    assert r.line(HELPER, 4) == 5 and r.line(HELPER, 6) == 9  # else the next one after it
    assert r.line(HELPER, 10) == 9  # else the last one before it
    assert r.line(HELPER, UNATTRIBUTED) == 3
    assert r.line(Frame("triton/language/core.py", 1, 1), 5) == UNATTRIBUTED and r.line(None, 5) == UNATTRIBUTED


def test_attribution_carries_the_last_attributed_line_forward_past_unattributed_instructions():
    instrs = [_Instr(HELPER), _Instr(Frame(KERNEL, 6, 1)), _Instr(None), _Instr(HELPER), _Instr(Frame(KERNEL, 4, 1))]
    # the first helper instruction: no line seen yet, the first caller; the second: after line 6, the next caller
    assert attribute(instrs, _resolver()) == [3, 6, UNATTRIBUTED, 9, 4]


def test_a_sass_instruction_takes_the_kernel_line_of_the_ptx_line_it_names_or_of_the_instruction_before():
    ptx = PtxLines([_Instr(None, 10), _Instr(None, 20), _Instr(None, 30)], [3, 7, 9])
    assert ptx.line(10) == 3 and ptx.line(25) == 7 and ptx.line(30) == 9
    assert ptx.line(4) == 3  # before the first instruction: the first one's line
    assert PtxLines([], []).line(10) is None


def test_a_sass_instruction_that_names_no_ptx_line_keeps_its_own_attribution():
    ptx = PtxLines([_Instr(None, 10)], [3])
    named = Instr("LDG.E.128", False, 1, HELPER, "LDG.E.128 R0, [R2.64] ;", ptx_line=10)
    unnamed = Instr("LDG.E.128", False, 2, Frame(KERNEL, 8, 1), "LDG.E.128 R4, [R2.64+0x10] ;")
    loads = InstrRule("mem.global_load", "sass", re.compile(r"^LDG"))
    sig = instr_signature([named, unnamed], "sass", [loads], _resolver(), ptx)
    assert sig.lines == {3: {"mem.global_load": 1}, 8: {"mem.global_load": 1}}


def test_a_max_counter_keeps_the_largest_value_per_line_and_over_the_kernel():
    s = Signature()
    s.add("mem.load_bits_max", 128, 5, MAX)
    s.add("mem.load_bits_max", 32, 5, MAX)
    s.add("mem.load_bits_max", 64, 7, MAX)
    s.add("mem.load_bits_max", 0, 8, MAX)  # nothing counted: no line entry
    assert s.counters == {"mem.load_bits_max": 128}
    assert s.lines == {5: {"mem.load_bits_max": 128}, 7: {"mem.load_bits_max": 64}}


def test_the_fast_path_for_llvm_dialect_giants_counts_what_the_full_parse_counts(monkeypatch):
    """LLVM-dialect text beyond FULL_PARSE_LIMIT / 4 is scanned line by line instead of parsed: on a real kernel's
    `llir` both give the same counts on the same lines, so where the limit lies decides only the time taken."""
    traj = capture(k.matmul_kernel, "*fp16", "*fp16", "*fp32", 256, BM=64, BN=64, BK=32, num_stages=3)
    llir = [s for s in traj.stage_snapshots("llir") if is_llvm_dialect(s.text)][-1]
    analyzer = Analyzer(traj)
    rules, kernel_file = analyzer.op_rules, analyzer.kernel_file
    parsed = mlir_signature(llir.text, "llir", rules, kernel_file)
    assert parsed.counters  # the rules count something here
    monkeypatch.setattr("irscope.signatures.engine.FULL_PARSE_LIMIT", 0)
    scanned = mlir_signature(llir.text, "llir", rules, kernel_file)
    assert (scanned.counters, scanned.lines) == (parsed.counters, parsed.lines)


def test_rules_of_one_counter_that_disagree_on_how_it_aggregates_are_refused_by_name():
    """A rule added for a maximum (the deepest pipeline) without `aggregate=MAX` would add its values up: the registry
    refuses it, naming the counter and both aggregations, where the core rules alone declare one per counter."""
    assert declared_aggregation(CORE_RULES)["control.pipeline_stages"] == MAX
    assert declared_aggregation(CORE_RULES)["control.loop"] == SUM
    stray = OpRule("control.pipeline_stages", ("scf.while",))  # the default aggregation: a sum
    with pytest.raises(ValueError, match=r"^counter control\.pipeline_stages: .* \(max, sum\); declare one"):
        declared_aggregation([*CORE_RULES, stray])


def test_a_backend_without_an_adapter_is_counted_by_the_triton_wide_rules_alone():
    """Intel's `xpu` has no adapter here: its TTIR and TTGIR are Triton's own dialects, which the core rules count; it
    has no instruction rules, and none of another backend's counters."""
    ops, instrs = rules_for("xpu")
    assert (ops, instrs) == (CORE_RULES, [])
    assert counter_names("xpu") == sorted({r.counter for r in CORE_RULES})
    assert "compute.mma_wgmma" in counter_names("cuda") and "compute.mma_wgmma" not in counter_names("xpu")


def test_a_slice_of_an_mma_layout_counts_as_a_slice_not_as_the_mma_layout_it_names():
    """The row maximum of a matmul's accumulator, scaled: the product's tensor is `#ttg.slice<{dim = 1, parent =
    #mma}>`. Its kind is the outermost attribute's (docs/signatures.md: op results using each encoding), so the line
    counts slices and no MMA layout, and the accumulator's own ops count theirs."""
    traj = capture(k.matmul_row_max_kernel, "*fp16", "*fp16", "*fp32", BM=64, BN=64, BK=32)
    ttgir = traj.stage_snapshots("ttgir")[-1]
    scaled = next(line for line in ttgir.text.splitlines() if "arith.mulf" in line)
    assert "#ttg.slice<{dim = 1, parent = #mma}>" in scaled
    signature = Analyzer(traj).signature(ttgir)
    source, first = inspect.getsourcelines(k.matmul_row_max_kernel.fn)
    line = first + next(i for i, text in enumerate(source) if "row_max * 2.0" in text)
    counted = signature.lines[line]
    assert counted["layout.enc.slice"] == 2 and "layout.enc.mma" not in counted  # the product and its constant
    assert signature.counters["layout.enc.mma"] > 0
