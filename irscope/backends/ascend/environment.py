"""Where the Ascend worker runs: the triton-ascend virtual environment that `make ascend-env` builds.

triton-ascend replaces the `triton` package (it is Triton 3.2), so it cannot share irscope's environment
(Triton 3.6); the worker runs with that environment's Python instead.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "IRSCOPE_ASCEND_PYTHON"
REPO_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_VENV = REPO_ROOT / ".venv-ascend"
WORKER = Path(__file__).resolve().with_name("worker.py")
BUILD_SCRIPT = REPO_ROOT / "scripts" / "ascend_env.sh"


class AscendEnvironmentError(RuntimeError):
    """No Python with triton-ascend to run the worker."""


def ascend_python() -> Path:
    """`$IRSCOPE_ASCEND_PYTHON`, else `.venv-ascend/bin/python` in the repository."""
    explicit = os.environ.get(ENV_VAR)
    python = Path(explicit) if explicit else DEFAULT_VENV / "bin" / "python"
    if not python.exists():
        raise AscendEnvironmentError(
            f"no triton-ascend environment: {python} does not exist. Build it with `make ascend-env` "
            f"({BUILD_SCRIPT.relative_to(REPO_ROOT)}), or set {ENV_VAR} to a Python 3.11 that has "
            f"triton-ascend 3.2.0 and pybind11 installed"
        )
    return python


def worker_environment() -> dict[str, str]:
    """The caller's environment (CANN's ASCEND_HOME_PATH, PATH, LD_LIBRARY_PATH stay) without what would make
    the worker's Python import irscope's packages instead of its own."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PYTHONNOUSERSITE"] = "1"
    return env
