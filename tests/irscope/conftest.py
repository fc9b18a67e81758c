"""Trajectories captured once per test session from real Triton compiles (no GPU needed)."""

import pytest

import irscope
from irscope.examples import EXAMPLES


def capture_example(name: str, target: str = "cuda:90", out_dir=None):
    ex = EXAMPLES[name]
    return irscope.capture(ex.kernel, target=target, out_dir=out_dir, kernel_kwargs=ex.args, **ex.options)


@pytest.fixture(scope="session")
def matmul_dump(tmp_path_factory):
    out = tmp_path_factory.mktemp("matmul")
    return capture_example("matmul", out_dir=out), out


@pytest.fixture(scope="session")
def argmax_traj():
    return capture_example("top2_argmax")


@pytest.fixture(scope="session")
def value_traj():
    return capture_example("top2_value")
