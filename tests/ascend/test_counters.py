"""Ascend counters on real adapter IR, each checked against an independent count over the text."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from irscope.compare import compare
from irscope.parse.mlir import parse_mlir
from irscope.signatures import by_line, counter_names, summary
from tests.ascend.conftest import capture_example, capture_probe


def _line_of(traj, needle: str) -> int:
    return next(
        i
        for i, text in enumerate(traj.kernel.source.splitlines(), start=1)
        if needle in text and traj.kernel.first_line <= i <= traj.kernel.last_line
    )


def _combiner_ops(text: str) -> int:
    """arith/math ops between each `linalg.reduce` header and its `linalg.yield`."""
    count, inside = 0, False
    for line in text.splitlines():
        if "= linalg.reduce " in line:
            inside = True
        elif inside and "linalg.yield" in line:
            inside = False
        elif inside and re.match(r"\s*%\S+ = (?:arith|math)\.", line):
            count += 1
    return count


def test_registry_has_the_ascend_counters():
    names = counter_names("npu")
    for name in (
        "sync.barrier",
        "sync.flag",
        "sync.block",
        "mem.copy",
        "mem.materialize",
        "mem.discrete_loop",
        "compute.reduce_index",
        "compute.reduce_body_ops",
        "compute.vector_ops",
        "compute.scalar_ops",
        "compute.element_access",
    ):
        assert name in names
    assert "compute.vector_ops" not in counter_names("cuda")


def test_argmax_footprint_at_the_adapter_level(argmax_dump, value_traj):
    argmax, _ = argmax_dump
    text = argmax.stage_output("ttadapter").text
    s = summary(argmax)
    assert s["ttadapter.compute.reduce"] == text.count("= linalg.reduce ") == 3
    assert s["ttadapter.compute.reduce_index"] == text.count('reduce_mode = "max_with_index"') == 1
    assert s["ttadapter.compute.reduce_body_ops"] == _combiner_ops(text) == 9  # 7 for argmax, 1 per max
    line = _line_of(argmax, "tl.argmax(")
    at_argmax = by_line(argmax)["ttadapter"][line]
    assert at_argmax["compute.reduce_index"] == 1 and at_argmax["compute.reduce_body_ops"] == 7

    value_text = value_traj.stage_output("ttadapter").text
    assert summary(value_traj)["ttadapter.compute.reduce_body_ops"] == _combiner_ops(value_text) == 3
    c = compare(argmax, value_traj)
    assert c.delta("ttadapter.compute.reduce_index") == -1
    assert c.delta("ttadapter.compute.reduce_body_ops") == -6
    assert c.delta("ttir.compute.reduce_index") == -1
    # the argmax line's adapter ops are gone in the rewrite; the index tensor (`offs`) is no longer built
    gone = {(d.line_a, d.stage): d.counters for d in c.lines if d.line_b is None}
    assert gone[(line, "ttadapter")]["compute.reduce_index"] == (1, 0)
    offs = _line_of(argmax, "tl.arange(")
    assert any(d.line_a == offs and d.counters.get("compute.vector_ops") == (1, 0) for d in c.lines)


def test_reductions_keep_their_location_and_payload():
    """linalg.reduce prints its block arguments on a line of its own and its location after the region."""
    text = """module {
  func.func @k(%arg0: tensor<128xf32>) {
    %reduced = linalg.reduce ins(%arg0 : tensor<128xf32>) outs(%1 : tensor<f32>) dimensions = [0]
      (%in: f32 loc("k.py":3:1), %init: f32 loc("k.py":3:1)) {
        %2 = arith.maxnumf %in, %init : f32 loc("k.py":3:2)
        linalg.yield %2 : f32 loc("k.py":3:2)
      } loc("k.py":7:9)
    return loc("k.py":8:1)
  } loc("k.py":1:0)
} loc("k.py":1:0)
"""
    ops = {op.name: op for op in parse_mlir(text).ops}
    assert ops["linalg.reduce"].location.frames[0].line == 7
    assert ops["arith.maxnumf"].parent is ops["linalg.reduce"]
    assert ops["linalg.reduce"].parent is ops["func.func"]


PROBES = [
    ("barrier_kernel", {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"BLOCK": 128}, "sync.barrier", r"^\s*gpu\.barrier"),
    (
        "sync_block_kernel",
        {"x_ptr": "*fp32", "out_ptr": "*fp32"},
        {"BLOCK": 128},
        "sync.block",
        r"^\s*hivm\.hir\.sync_block\b",
    ),
    (
        "gather_kernel",
        {"x_ptr": "*fp32", "idx_ptr": "*i32", "out_ptr": "*fp32"},
        {"BLOCK": 128},
        "mem.discrete_loop",
        r"^\s*\}.*\bExtractedLoadOrStore\b",
    ),
    (
        "gather_kernel",
        {"x_ptr": "*fp32", "idx_ptr": "*i32", "out_ptr": "*fp32"},
        {"BLOCK": 128},
        "mem.scalar_load",
        r"= memref\.load ",
    ),
    ("atomic_kernel", {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"BLOCK": 128}, "compute.atomic", r"GenericAtomicRMW"),
    (
        "argmin_rows_kernel",
        {"x_ptr": "*fp32", "out_ptr": "*fp32", "idx_ptr": "*i64"},
        {"M": 16, "N": 64},
        "compute.reduce_index",
        r'reduce_mode = "min_with_index"',
    ),
]


@pytest.mark.parametrize(
    ("kernel", "args", "options", "counter", "pattern"), PROBES, ids=[f"{p[0]}-{p[3]}" for p in PROBES]
)
def test_counter_matches_the_text(kernel, args, options, counter, pattern, ascend_env):
    traj = capture_probe(kernel, args, options)
    text = traj.stage_output("ttadapter").text
    expected = len(re.findall(pattern, text, re.M))
    assert expected >= 1
    assert summary(traj)[f"ttadapter.{counter}"] == expected
    lines = by_line(traj)["ttadapter"]
    assert sum(v.get(counter, 0) for line, v in lines.items() if line) == expected  # all attributed


def test_matmul_is_a_cube_dot(ascend_env):
    traj = capture_example("matmul")
    text = traj.stage_output("ttadapter").text
    assert summary(traj)["ttadapter.compute.dot"] == len(re.findall(r"= linalg\.matmul ", text)) == 1
    assert summary(traj)["ttadapter.control.loop"] == len(re.findall(r"= scf\.for ", text)) == 1
    # a plain loop: no access one element at a time
    assert summary(traj).get("ttadapter.mem.discrete_loop", 0) == text.count("ExtractedLoadOrStore") == 0


def test_vector_scalar_and_buffers_on_the_add_kernel(ascend_env):
    traj = capture_example("add")
    text = traj.stage_output("ttadapter").text
    assert "^bb0" not in text  # no structured-op bodies: every arith op is function-level code
    body = [_strip_loc(line) for line in text.splitlines() if re.match(r"\s*(?:%\S+ = )?[a-z_]+\.", line)]
    arith = [b for b in body if re.search(r"= (?:arith|math)\.(?!constant)", b)]
    on_tensors = [b for b in arith if "tensor<" in b.rsplit(":", 1)[-1]]
    scalars = [b for b in arith if "tensor<" not in b]
    structured = [b for b in body if re.search(r"\blinalg\.\w+", b)]
    s = summary(traj)
    assert s["ttadapter.compute.vector_ops"] == len(on_tensors) + len(structured) >= 2
    assert s["ttadapter.compute.scalar_ops"] == len(scalars) >= 5
    allocs = re.findall(r"memref\.alloc\(\) : memref<(\d+)xf32>", text)
    assert s["ttadapter.mem.alloc_bytes"] == sum(int(n) * 4 for n in allocs) == 2 * 1024 * 4
    assert s["ttadapter.mem.copy"] == len(re.findall(r"^\s*memref\.copy ", text, re.M)) == 2
    assert s["ttadapter.mem.materialize"] == 1


def _strip_loc(line: str) -> str:
    return line.split(" loc(", 1)[0]


# bytes of an element of a local buffer (a buffer of i1 is stored as i8 by the adapter)
ELEMENT_BYTES = {"i8": 1, "f16": 2, "bf16": 2, "i16": 2, "f32": 4, "i32": 4, "i64": 8, "f64": 8}
ALLOC_PROBES = [
    ("barrier_kernel", {"x_ptr": "*i1", "out_ptr": "*i1"}, {"BLOCK": 128}),  # memref<128xi8>
    ("barrier_kernel", {"x_ptr": "*fp16", "out_ptr": "*fp16"}, {"BLOCK": 64}),
    ("gather_kernel", {"x_ptr": "*i8", "idx_ptr": "*i32", "out_ptr": "*i8"}, {"BLOCK": 128}),
    ("argmin_rows_kernel", {"x_ptr": "*fp16", "out_ptr": "*fp16", "idx_ptr": "*i64"}, {"M": 16, "N": 64}),  # 2-D
]


@pytest.mark.parametrize(
    ("kernel", "args", "options"),
    ALLOC_PROBES,
    ids=[f"{p[0]}-{'-'.join(a.strip('*') for a in p[1].values())}" for p in ALLOC_PROBES],
)
def test_alloc_bytes_are_the_buffers_shapes_times_their_element_widths(kernel, args, options, ascend_env):
    """Every dimension of a local buffer's shape and its element's width count: one byte for i8, two for f16."""
    traj = capture_probe(kernel, args, options)
    text = traj.stage_output("ttadapter").text
    buffers = re.findall(r"memref\.alloca?\(\) : memref<((?:\d+x)+)(\w+)>", text)
    assert buffers
    expected = sum(math.prod(int(d) for d in shape.split("x") if d) * ELEMENT_BYTES[e] for shape, e in buffers)
    counted = summary(traj)["ttadapter.mem.alloc_bytes"]
    assert counted == expected
    assert isinstance(counted, int)  # a byte count: a float would be stored and shown as `512.0`


_OP = re.compile(r'\s*(?:%[\w:#]+ = )?"?([a-z_]+\.[\w.]+)')
_PAYLOAD_OWNER = re.compile(r'\s*(?:%[\w:#]+ = )?"?(?:linalg|hfusion|hivm\.hir|tt\.reduce|tt\.scan)\b')
_STRUCTURED_NOT_COMPUTE = {"linalg.yield", "linalg.index", "linalg.reduce", "linalg.matmul", "linalg.copy"}


def _ops_by_region(text: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(name, line without its location) of each op outside and inside the regions of structured ops, told apart by
    the printer's indentation: a structured op's region is every line indented deeper than its first line (its block
    label, `^bb0(…)`, is printed at the op's own indentation)."""
    outside: list[tuple[str, str]] = []
    inside: list[tuple[str, str]] = []
    owner_indent = None
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip())
        if owner_indent is not None and indent <= owner_indent and not line.lstrip().startswith("^"):
            owner_indent = None
        m = _OP.match(line)
        if not m:
            continue
        (outside if owner_indent is None else inside).append((m.group(1), _strip_loc(line)))
        if owner_indent is None and _PAYLOAD_OWNER.match(line):
            owner_indent = indent
    return outside, inside


def _on_tensors(line: str) -> bool:
    return "tensor<" in line.rsplit(":", 1)[-1]


REGION_PROBES = [
    ("argmin_rows_kernel", {"x_ptr": "*fp32", "out_ptr": "*fp32", "idx_ptr": "*i64"}, {"M": 16, "N": 64}),
    ("max_pair_kernel", {"x_ptr": "*fp32", "out_ptr": "*fp32", "idx_ptr": "*i32"}, {"M": 16, "N": 64}),
    ("gather_kernel", {"x_ptr": "*fp32", "idx_ptr": "*i32", "out_ptr": "*fp32"}, {"BLOCK": 128}),
    ("atomic_kernel", {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"BLOCK": 128}),
    ("barrier_kernel", {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"BLOCK": 128}),
    # the ops in an `scf.if` of a reduction's combiner: in the payload two regions deep
    ("branchy_reduce_kernel", {"x_ptr": "*fp32", "out_ptr": "*fp32"}, {"BLOCK": 128}),
]


@pytest.mark.parametrize(("kernel", "args", "options"), REGION_PROBES, ids=[p[0] for p in REGION_PROBES])
def test_vector_scalar_and_element_ops_leave_out_payloads(kernel, args, options, ascend_env):
    """Ops in the regions of `linalg.generic`, `linalg.reduce`, `tt.reduce`, at any depth, are per-element work:
    neither vector nor scalar ops nor element accesses; the structured ops themselves are vector ops, a reduction's
    header excepted."""
    traj = capture_probe(kernel, args, options)
    text = traj.stage_output("ttadapter").text
    outside, inside = _ops_by_region(text)
    arith = [(n, line) for n, line in outside if n.startswith(("arith.", "math.")) and n != "arith.constant"]
    structured = [n for n, _ in outside if n.startswith(("linalg.", "hfusion.")) and n not in _STRUCTURED_NOT_COMPUTE]
    vector = len(structured) + sum(_on_tensors(line) for _, line in arith)
    scalar = sum(not _on_tensors(line) for _, line in arith)
    access = sum(n in ("tensor.extract", "tensor.insert") for n, _ in outside)
    s = summary(traj)
    assert s.get("ttadapter.compute.vector_ops", 0) == vector
    assert s.get("ttadapter.compute.scalar_ops", 0) == scalar
    assert s.get("ttadapter.compute.element_access", 0) == access
    if kernel not in ("barrier_kernel", "gather_kernel"):  # the others' payloads hold arith ops
        assert any(n.startswith("arith.") for n, _ in inside)
    if kernel == "gather_kernel":  # its loop's element accesses are outside any payload
        assert access == 2
    if kernel == "branchy_reduce_kernel":  # the branches' subtraction and product, inside the combiner's `scf.if`
        assert {"scf.if", "arith.subf", "arith.mulf"} <= {n for n, _ in inside} and scalar == 0


# Shapes the adapter of triton-ascend 3.2.0 never prints for a probe kernel, in the form MLIR prints them (bishengir's
# own tests print `hfusion.reduce_with_index` so): what another adapter version, or the hfusion conversion, would hand
# these counters.
HFUSION_AND_PAIR_REDUCTIONS = Path(__file__).parent / "data" / "hfusion_and_pair_reductions.mlir"


def test_index_reductions_by_name_and_by_an_integer_input_beside_the_values():
    """`compute.reduce_index`: an `hfusion.reduce_with_index` by its name alone (its mode is `<min>`, no
    `reduce_mode` string); a `linalg.reduce` of a value and an integer index without `reduce_mode`; not a reduction
    of two float inputs, nor one of a single integer input. An hfusion elementwise op is a vector op."""
    from irscope.backends.ascend.counters import index_reduce, vector_op

    module = parse_mlir(HFUSION_AND_PAIR_REDUCTIONS.read_text())
    ops = {op.results[0] if op.results else op.name: op for op in module.ops}
    assert ops["%reduced:2"].name == "hfusion.reduce_with_index"
    counts = {name: index_reduce(ops[name], {}) for name in ("%reduced:2", "%pair:2", "%two:2", "%sum")}
    assert counts == {"%reduced:2": 1, "%pair:2": 1, "%two:2": 0, "%sum": 0}
    assert vector_op(ops["%root"], {}) == 1
    assert vector_op(ops["%2"], {}) == 0  # inside a reduction's payload: per-element work
