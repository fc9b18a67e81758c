"""Signatures, the stage-diff graph, attribution and comparison on real compiles, checked against independent
counts over the PTX and SASS text."""

import re

import pytest

from irscope import capture
from irscope.cli import main as cli_main
from irscope.compare import compare
from irscope.graph import build
from irscope.signatures import aggregation, by_line, summary
from irscope.trajectory import MLIR

from .conftest import capture_example
from .rowwise_kernels import row_argmax_kernel

ARGMAX_LINE = "i1 = tl.argmax(x, axis=0)"


def kernel_line(traj, text):
    return next(i for i, line in enumerate(traj.kernel.source.splitlines(), start=1) if line.strip() == text)


def count_lines(text, pattern):
    return sum(1 for line in text.splitlines() if re.search(pattern, line))


@pytest.mark.parametrize("name", ["top2_argmax", "matmul", "softmax", "add"])
def test_counters_agree_with_independent_text_counts(name, matmul_dump, argmax_traj):
    traj = {"matmul": matmul_dump[0], "top2_argmax": argmax_traj}.get(name) or capture_example(name)
    s = summary(traj)
    ptx = traj.stage_output("ptx").text
    sass = traj.artifacts["sass"].data
    assert s.get("ptx.sync.shuffle", 0) == count_lines(ptx, r"^\s*(@!?%\w+\s+)?shfl\.sync")
    assert s.get("ptx.sync.barrier", 0) == count_lines(ptx, r"^\s*(@!?%\w+\s+)?(bar|barrier)\.sync")
    assert s.get("ptx.mem.load", 0) == count_lines(ptx, r"^\s*(@!?%\w+\s+)?ld\.global")
    assert s.get("ptx.mem.load_vec4", 0) == count_lines(ptx, r"ld\.global\S*\.v4\.(b|f|s|u)32")
    widths = [int(v or 1) * int(b) for v, b in re.findall(r"ld\.global\S*?(?:\.v(\d))?\.[bfsu](\d+)\s", ptx)]
    assert s.get("ptx.mem.load_bits_max", 0) == max(widths, default=0)  # the widest load, not a sum
    assert s.get("ptx.compute.mma_wgmma", 0) == count_lines(ptx, r"wgmma\.mma_async\.")
    assert s.get("ptx.mem.cp_async", 0) == count_lines(ptx, r"cp\.async\.c[ag]\.")
    assert s.get("sass.sync.shuffle", 0) == count_lines(sass, r"\*/\s+(@!?P\w+\s+)?SHFL\.")
    assert s.get("sass.sync.barrier", 0) == count_lines(sass, r"\*/\s+(@!?P\w+\s+)?BAR\.(SYNC|RED)")
    assert s.get("sass.mem.load_vec4", 0) == count_lines(sass, r"\*/\s+(@!?P\w+\s+)?LDG\.\S*128")
    assert s.get("sass.compute.mma_wgmma", 0) == count_lines(sass, r"\*/\s+HGMMA\.")
    assert s["res.registers"] == traj.resources["registers"]


def test_argmax_line_owns_its_shuffles_and_barriers(argmax_traj):
    line = kernel_line(argmax_traj, ARGMAX_LINE)
    lines = by_line(argmax_traj)
    assert lines["ttgir"][line]["compute.reduce_index"] == 1
    ptx = lines["ptx"][line]
    assert ptx["sync.shuffle"] > 0 and ptx["sync.barrier"] > 0
    s = summary(argmax_traj)
    total_attributed = sum(c.get("sync.shuffle", 0) for ln, c in lines["ptx"].items() if ln)
    assert total_attributed == s["ptx.sync.shuffle"], "every PTX shuffle maps to a kernel line"


def test_index_reduction_with_tensor_results_is_counted():
    """argmax along axis 1 of a 2-D tile: the reduce's results are tensors (`tensor<32xf32, …>`, `tensor<32xi32,
    …>`), not bare `f32, i32`; the value-only max on the next line is no index reduction."""
    traj = capture(row_argmax_kernel, "*fp32", "*i32", "*fp32", 4096, N=64, BLOCK_M=32)
    lines = by_line(traj)["ttgir"]
    argmax = kernel_line(traj, "tl.store(idx_ptr + rows, tl.argmax(x, axis=1), mask=rows < n_rows)")
    value_max = kernel_line(traj, "tl.store(max_ptr + rows, tl.max(x, axis=1), mask=rows < n_rows)")
    assert lines[argmax]["compute.reduce_index"] == 1
    assert lines[value_max]["compute.reduce"] == 1 and "compute.reduce_index" not in lines[value_max]
    assert summary(traj)["ttir.compute.reduce_index"] == 1


def test_graph_names_pass_introducing_and_removing_convert_layout(argmax_traj):
    g = build(argmax_traj)
    intro, removed = g.introduced_by("ttg.convert_layout"), g.removed_by("ttg.convert_layout")
    assert [c.edge.pass_arg for c in intro] == ["tritongpu-coalesce"]
    # coalesce converts the three operands of the kernel's one masked tensor load (pointers, mask, other) to the
    # layout it picked; the store is scalar
    assert intro[0].before == 0 and intro[0].after == 3
    assert [c.edge.pass_arg for c in removed] == ["tritongpu-remove-layout-conversions"] and removed[0].after == 0
    shuffles = g.introduced_by("sync.shuffle")
    assert shuffles[0].edge.pass_arg == "convert-triton-gpu-to-llvm"
    assert g.first_where("sync.barrier > 0").pass_arg == "convert-triton-gpu-to-llvm"
    timeline = dict((i, v) for i, _, v in g.timeline("ttg.convert_layout"))
    # the peak over the pipeline, counted independently over every MLIR snapshot's text
    peak = max(count_lines(s.text, r"= ttg\.convert_layout ") for s in argmax_traj.snapshots if s.kind == MLIR)
    assert max(timeline.values()) == peak == 3
    # unchanged passes fold into the edges; every snapshot is either a node or folded
    folded = {i for e in g.edges() for i in e.collapsed}
    assert set(g.nodes()) | folded | {s.index for s in argmax_traj.snapshots if s.stage_index == -1} == set(
        range(len(argmax_traj.snapshots))
    )


def test_passes_touching_the_argmax_line(argmax_traj):
    g = build(argmax_traj)
    line = kernel_line(argmax_traj, ARGMAX_LINE)
    touched = {e.pass_arg: d for e, d in g.passes_touching_line(line)}
    assert touched["convert-triton-gpu-to-llvm"]["sync.shuffle"] > 0
    assert touched["convert-triton-gpu-to-llvm"]["compute.reduce_index"] == -1


def test_value_only_rewrite_removes_index_reduction(argmax_traj, value_traj):
    c = compare(argmax_traj, value_traj)
    assert c.delta("ttgir.compute.reduce_index") == -1
    assert c.delta("ptx.sync.shuffle") < 0
    line = kernel_line(argmax_traj, ARGMAX_LINE)
    gone = [ld for ld in c.lines if ld.line_a == line and ld.line_b is None and ld.stage == "ptx"]
    assert gone, "the argmax line is reported as gone"
    assert gone[0].counters["sync.shuffle"][1] == 0 and gone[0].counters["sync.shuffle"][0] > 0
    assert gone[0].counters["sync.barrier"][0] > 0
    assert all(p.op == "equal" for p in c.passes)  # same pipeline, different kernels


def test_matmul_signature(matmul_dump):
    s = summary(matmul_dump[0])
    # one tl.dot → one warp_group_dot; the example compiles with num_stages=3 (irscope/examples/registry.py)
    assert s["ttgir.compute.mma_wgmma"] == 1 and s["ttgir.control.pipeline_stages"] == 3
    assert s["ttgir.layout.enc.mma"] > 0 and s["ptx.compute.mma_wgmma"] > 0


def test_amd_counters_agree_with_amdgcn_text():
    traj = capture_example("top2_argmax", "hip:gfx942")
    s = summary(traj)
    asm = traj.stage_output("amdgcn").text
    assert s["amdgcn.sync.barrier"] == count_lines(asm, r"^\s+s_barrier\b") > 0
    assert s["amdgcn.mem.load"] == count_lines(asm, r"^\s+(global|buffer)_load")
    assert s["ttgir.compute.reduce_index"] == 1
    assert s["res.registers"] == traj.resources["vgprs"]


def widest_global_load_bits(ptx: str) -> int:
    """Independent of irscope's rules: vector count × element bits of every `ld.global` line, the largest."""
    widths = [
        int(m.group(1) or 1) * int(m.group(2))
        for m in re.finditer(r"^\s*(?:@!?%\w+\s+)?ld\.global\S*?(?:\.v(\d))?\.[bfsu](\d+)\s", ptx, re.M)
    ]
    return max(widths)


@pytest.mark.parametrize("name", ["add", "softmax"])
def test_widest_load_is_a_maximum_not_a_sum(name):
    traj = capture_example(name)
    s, lines = summary(traj), by_line(traj)
    widest = widest_global_load_bits(traj.stage_output("ptx").text)
    assert widest == {"add": 128, "softmax": 32}[name]  # add: ld.global.v4.b32; softmax: masked ld.global.b32
    for stage in ("llir", "llvm", "ptx"):
        assert s[f"{stage}.mem.load_bits_max"] == widest, stage
        assert max(c.get("mem.load_bits_max", 0) for c in lines[stage].values()) == widest, stage
    assert s["sass.mem.load_bits_max"] == widest
    assert aggregation("cuda")["mem.load_bits_max"] == aggregation("hip")["mem.load_bits_max"] == "max"


def test_amd_widest_load_is_a_maximum():
    traj = capture_example("add", "hip:gfx942")
    asm = traj.stage_output("amdgcn").text
    assert count_lines(asm, r"^\s+global_load_dwordx4\b") == 2  # two 128-bit loads: 128, not 256
    assert summary(traj)["amdgcn.mem.load_bits_max"] == 128


ACCESS_COUNTERS = (
    "mem.load_vec1",
    "mem.load_vec4",
    "mem.store_vec1",
    "mem.store_vec4",
    "mem.load_masked",
    "mem.store_masked",
    "mem.load_bits_max",
    "mem.cp_async",
    "sync.async_wait",
    "compute.special",
)


@pytest.mark.parametrize("name", ["add", "softmax", "attention"])
def test_access_widths_are_measured_where_the_lowering_creates_them(name, tmp_path, capsys):
    """Triton's NVIDIA lowering writes global accesses as inline PTX: their widths are final in the LLVM dialect,
    so the graph names convert-triton-gpu-to-llvm, not the code generation that only prints them."""
    traj = capture_example(name, out_dir=tmp_path)
    s = summary(traj)
    for counter in ACCESS_COUNTERS:
        assert s.get(f"llir.{counter}", 0) == s.get(f"llvm.{counter}", 0) == s.get(f"ptx.{counter}", 0), counter
    scalar = name == "softmax"  # n_cols=1000: the mask is not 16-aligned, every access is a 32-bit one
    counter = "mem.load_vec1" if scalar else "mem.load_vec4"
    assert s[f"ptx.{counter}"] > 0
    g = build(traj)
    assert [c.edge.pass_arg for c in g.introduced_by(counter)] == ["convert-triton-gpu-to-llvm"]
    assert cli_main(["query", str(tmp_path), "introduced-by", counter]) == 0
    out = capsys.readouterr().out
    assert "convert-triton-gpu-to-llvm" in out and "nvptx-codegen" not in out
