"""irscope.hazards.view on real cuda:90 captures: what each detector reads of a kernel (counters per stage and line,
loop nesting, the pass that introduced or declined something, the compiler's remarks) is right in the corners the
detectors' own cases never reach: a stage or counter or line that is absent, a loop inside a loop, an op inlined
from a helper in another file, the first snapshot, a pass that removed what it is asked about."""

from __future__ import annotations

import inspect

import pytest
import triton
import triton.language as tl

from irscope.hazards.model import PassRef
from irscope.hazards.view import KernelView
from irscope.signatures.engine import UNATTRIBUTED
from tests import trajectory_cache
from tests.irscope import view_helpers
from tests.irscope.test_hazards import CASES


@triton.jit
def nested_sum(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], tl.float32)
    for i in range(n_rows):
        for j in range(0, n_cols, BLOCK):
            x = tl.load(x_ptr + i * n_cols + j + tl.arange(0, BLOCK))
            acc += view_helpers.doubled(x)
    tl.store(out_ptr + tl.arange(0, BLOCK), acc)


def line_of(kernel, text: str) -> int:
    lines, first = inspect.getsourcelines(kernel.fn)
    return first + next(i for i, ln in enumerate(lines) if text in ln)


@pytest.fixture(scope="module")
def nested() -> KernelView:
    args = dict(x_ptr="*fp32", out_ptr="*fp32", n_rows=64, n_cols=4096)
    return KernelView(trajectory_cache.capture(nested_sum, target="cuda:90", kernel_kwargs=args, BLOCK=256))


def case(name: str) -> KernelView:
    kernel, args, options = CASES[name]
    return KernelView(trajectory_cache.capture(kernel, target="cuda:90", kernel_kwargs=args, **options))


@pytest.fixture(scope="module")
def one_stage() -> KernelView:
    return case("matmul_one_stage")


def test_loop_depth_counts_every_enclosing_loop(nested):
    assert nested.loop_depth(line_of(nested_sum, "x = tl.load")) == 2
    assert nested.loop_depth(line_of(nested_sum, "tl.store")) == 0
    assert nested.loop_depth(10**6) == 0  # no op there


def test_an_op_inlined_from_a_helper_in_another_file_is_on_the_kernels_call_line(nested):
    (mul,) = [r for r in nested.ttgir_ops if r.op.name == "arith.mulf"]
    assert mul.line == line_of(nested_sum, "view_helpers.doubled") and mul.loop_depth == 2
    assert UNATTRIBUTED not in {r.line for r in nested.ttgir_ops if r.op.name.startswith("tt.")}


def test_counters_of_an_absent_stage_counter_or_line_are_zero(one_stage):
    assert one_stage.lines("amdgcn") == {} and one_stage.total("amdgcn", "compute.dot") == 0
    assert one_stage.total("ttgir", "compute.atomic") == 0
    assert one_stage.total("ttgir", "compute.dot") == 1
    dot_line = line_of(CASES["matmul_one_stage"][0], "tl.dot")
    assert one_stage.on_lines("ttgir", [dot_line], "compute.dot") == 1
    # a line the stage has, without that counter; a line it does not have at all
    assert one_stage.on_lines("ttgir", [dot_line], "compute.atomic") == 0
    assert one_stage.on_lines("ttgir", [dot_line, 10**6], "compute.dot") == 1
    assert UNATTRIBUTED not in one_stage.lines("ttgir")


def test_the_snapshot_before_the_first_is_itself(one_stage):
    first, later = one_stage.traj.snapshots[0], one_stage.traj.snapshots[5]
    assert one_stage.before(first) is first
    assert one_stage.before(later) is one_stage.traj.snapshots[4]


def test_what_a_line_shows_is_introduced_where_that_line_got_it(one_stage):
    """The shared encoding appears in the kernel when the dot is accelerated (its operands' encoding), and on the
    dot's own line only later, in the pipeliner: asked about that line, the pipeliner is the answer."""
    dot_line = line_of(CASES["matmul_one_stage"][0], "tl.dot")
    whole = one_stage.introducing("layout.enc.shared")
    on_line = one_stage.introducing("layout.enc.shared", [dot_line])
    assert whole is not None and whole.pass_arg == "tritongpu-accelerate-matmul"
    assert on_line is not None and on_line.pass_arg == "tritongpu-pipeline"
    # nothing on a line that never shows it: the kernel's answer
    assert one_stage.introducing("layout.enc.shared", [10**6]) == whole
    assert one_stage.introducing("compute.atomic") is None


def test_a_pass_declined_only_what_was_there_before_and_after_it(one_stage):
    # the dot was there before tritongpu-accelerate-matmul and after it (as a tensor-core dot)
    assert one_stage.declined("tritongpu-accelerate-matmul", "compute.dot") == PassRef(
        16, "ttgir", "tritongpu-accelerate-matmul"
    )
    # the FMA dot it removed was declined by nobody; an atomic the kernel never had neither
    assert one_stage.declined("tritongpu-accelerate-matmul", "compute.dot_fma") is None
    assert one_stage.declined("tritongpu-accelerate-matmul", "compute.atomic") is None
    assert one_stage.declined("tritongpu-accelerate-matmul", test=lambda ops: not ops) is None


def test_every_remark_is_returned_unless_a_needle_is_given():
    view = case("ieee_dot")
    assert view.remarks() == view.traj.remarks() and view.remarks()
    assert view.remarks("MMA version 3 acceleration not applied")
    assert view.remarks("no compiler says this") == []
