"""Real triton-ascend compiles through the worker in `.venv-ascend`.

When the environment is missing, the first test that needs it builds it with scripts/ascend_env.sh (a network
install of the triton-ascend wheel); where that cannot be done, the tests skip and say why (pytest -ra).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from irscope.backends.ascend.capture import capture_ascend
from irscope.backends.ascend.environment import BUILD_SCRIPT, ENV_VAR, AscendEnvironmentError, ascend_python
from irscope.examples import EXAMPLES
from irscope.trajectory import Trajectory

KERNELS = Path(__file__).resolve().with_name("kernels.py")


@pytest.fixture(scope="session")
def ascend_env() -> Path:
    try:
        return ascend_python()
    except AscendEnvironmentError as e:
        if os.environ.get(ENV_VAR):
            pytest.skip(f"{ENV_VAR} is set but unusable: {e}")
    proc = subprocess.run(["bash", str(BUILD_SCRIPT)], capture_output=True, text=True, timeout=1200)
    if proc.returncode != 0:
        pytest.skip(
            f"no triton-ascend environment and {BUILD_SCRIPT.name} could not build it "
            f"(exit {proc.returncode}): {(proc.stderr or proc.stdout).strip()[-800:]}"
        )
    return ascend_python()


def capture_example(name: str, out_dir: Path | None = None, **kwargs) -> Trajectory:
    ex = EXAMPLES[name]
    return capture_ascend(ex.kernel, dict(ex.args), dict(ex.options), target="ascend", out_dir=out_dir, **kwargs)


def capture_probe(name: str, args: dict, options: dict, **kwargs) -> Trajectory:
    return capture_ascend(f"{KERNELS}:{name}", args, options, target="ascend", **kwargs)


@pytest.fixture(scope="session")
def argmax_dump(ascend_env, tmp_path_factory) -> tuple[Trajectory, Path]:
    out = tmp_path_factory.mktemp("ascend-argmax")
    return capture_example("top2_argmax", out), out


@pytest.fixture(scope="session")
def value_traj(ascend_env) -> Trajectory:
    return capture_example("top2_value")
