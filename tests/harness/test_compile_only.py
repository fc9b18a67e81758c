"""The runner's compile-only first call (ladder.harness.compile_only) with the real Triton JIT compiling for sm_90
on this CPU machine: under a dry-run driver whose launcher counts the launches it is asked for."""

import json
import sys
from dataclasses import replace

import pytest
import torch
import triton
import triton.language as tl
from triton.runtime.driver import driver as driver_config

from irscope.capture.stub_driver import DryRunDriver
from irscope.targets import parse_target
from ladder.harness.compile_only import compile_only
from suite.operator import RANDOM, Case
from tests.harness.toy_ops import ROW_ARGMAX


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
@triton.jit
def tuned_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


class CountingDriver(DryRunDriver):
    """The dry-run stand-in whose launcher counts the launches that reach it."""

    def __init__(self) -> None:
        super().__init__(parse_target("cuda:90"))
        self.launches = 0

    def launcher_cls(self, src, metadata):  # type: ignore[override]
        def launch(*args, **kwargs):
            self.launches += 1

        return launch


@pytest.fixture
def counting():
    saved = driver_config._active
    stand_in = CountingDriver()
    driver_config.set_active(stand_in)
    try:
        yield stand_in
    finally:
        driver_config._active = saved


def _compiled(fn) -> int:
    return sum(len(caches[0]) for caches in fn.device_caches.values())


def test_a_launch_compiles_and_loads_its_kernel_without_running_it(counting):
    x, out = torch.ones(300), torch.empty(300)
    with compile_only():
        kernel = scale_kernel[(3,)](x, out, 300, BLOCK=128)
    assert counting.launches == 0 and _compiled(scale_kernel) == 1
    assert kernel.module is not None, "the binary is loaded, so the first real launch only launches"
    scale_kernel[(3,)](x, out, 300, BLOCK=128)
    assert counting.launches == 1 and _compiled(scale_kernel) == 1, "after the block: launched, from the cache"


def test_an_autotuner_compiles_every_config_and_chooses_none(counting):
    x, out = torch.ones(500), torch.empty(500)
    with compile_only() as built:
        tuned_kernel[(4,)](x, out, 500)
    assert counting.launches == 0
    assert _compiled(tuned_kernel.fn) == 2 and tuned_kernel.cache == {}, "both configs built, no choice from no timing"
    assert built.autotuned == 1, "the parent is told an autotuner will benchmark, so it has it tune with the GPU alone"


def test_plain_launches_and_a_one_config_autotuner_count_as_nothing_to_tune(counting):
    one = triton.autotune(configs=[triton.Config({"BLOCK": 64})], key=["n"])(scale_kernel)
    x, out = torch.ones(500), torch.empty(500)
    with compile_only() as built:
        scale_kernel[(4,)](x, out, 500, BLOCK=128)
        one[(8,)](x, out, 500)
    assert built.autotuned == 0 and counting.launches == 0


def test_the_harness_benchmarker_replaces_tritons_for_autotuners_that_name_none(counting):
    from ladder.harness import autotune

    assert counting.get_benchmarker() is not autotune.bench
    autotune.install()
    assert driver_config.active.get_benchmarker() is autotune.bench


def _shifted_transpose(case: Case, seed: int, device: str, kind: str) -> tuple:
    g = torch.Generator(device=device).manual_seed(seed)
    m, n = case.shape["M"], case.shape["N"]
    base = torch.rand(m * n + 7, generator=g, device=device)
    return base[7:].view(m, n).t(), m, 0.5


def test_placeholders_have_the_layout_of_the_case_inputs():
    op = replace(ROW_ARGMAX, make_inputs=_shifted_transpose)
    case = Case("s", {"M": 6, "N": 13})
    real, placeholders = op.make_inputs(case, 3, "cpu", RANDOM), op.placeholder_inputs(case, "cpu")
    assert placeholders[1:] == real[1:]
    p, r = placeholders[0], real[0]
    assert type(p) is torch.Tensor
    layout = (p.shape, p.stride(), p.storage_offset(), p.dtype, p.device)
    assert (
        layout
        == (r.shape, r.stride(), r.storage_offset(), r.dtype, r.device)
        == (
            torch.Size([13, 6]),
            (1, 13),
            7,
            torch.float32,
            torch.device("cpu"),
        )
    )


def test_a_layout_through_json_gives_the_placeholders_of_the_case_inputs():
    """What a parent hands a child (the layout as JSON) rebuilds the placeholders exactly: shapes, strides, offsets,
    dtypes, and the other arguments as they are, for an input that is a strided view at an offset."""
    op = replace(ROW_ARGMAX, make_inputs=_shifted_transpose)
    case = Case("s", {"M": 6, "N": 13})
    layout = json.loads(json.dumps(op.placeholder_layout(case)))
    real, placeholders = op.make_inputs(case, 3, "cpu", RANDOM), op.placeholder_inputs(case, "cpu", layout)
    assert placeholders[1:] == real[1:]
    p, r = placeholders[0], real[0]
    assert (p.shape, p.stride(), p.storage_offset(), p.dtype) == (r.shape, r.stride(), r.storage_offset(), r.dtype)


def test_every_suite_operator_has_a_layout_for_every_case():
    """The suite's inputs are tensors and integers: every case has a layout, so no child needs FakeTensorMode."""
    from suite.operator import all_operators

    for op in all_operators().values():
        for case in op.cases:
            layout = op.placeholder_layout(case)
            assert layout is not None and json.loads(json.dumps(layout)) == layout, (op.name, case.name)


def test_a_child_given_the_layout_imports_no_dynamo(tmp_path):
    """FakeTensorMode imports torch's dynamo (seconds of CPU in every runner, tuning child and capture child);
    placeholders built from a given layout must not."""
    from irscope import childproc
    from suite.operator import get_operator

    op = get_operator("softmax")
    layout = op.placeholder_layout(op.cases[0])
    code = (
        "import json, sys; from suite.operator import get_operator; op = get_operator('softmax'); "
        "x = op.placeholder_inputs(op.cases[0], 'cpu', json.loads(sys.argv[1])); "
        "print(json.dumps([list(x[0].shape), 'torch._dynamo' in sys.modules]))"
    )
    r = childproc.run(
        [sys.executable, "-c", code, json.dumps(layout)], env=childproc.child_env(tmp_path), cwd=tmp_path, timeout_s=120
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == [list(op.cases[0].shape.values()), False]
