"""`FILE.py:KERNEL` → the kernel object, with clear errors for every way that can go wrong."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

from triton.runtime.autotuner import Autotuner, Heuristics
from triton.runtime.jit import JITFunction


class KernelLoadError(ValueError):
    """The kernel reference cannot be resolved to a @triton.jit function."""


def _is_kernel(obj: Any) -> bool:
    return isinstance(obj, JITFunction | Autotuner | Heuristics)


def load_kernel(ref: str) -> Any:
    path_text, sep, name = ref.rpartition(":")
    if not sep or not path_text or not name:
        raise KernelLoadError(f"{ref!r}: expected FILE.py:KERNEL, e.g. kernels.py:matmul_kernel")
    path = Path(path_text)
    if not path.is_file():
        raise KernelLoadError(f"{path}: no such file")
    module_name = f"irscope_user_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise KernelLoadError(f"{path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.resolve().parent))  # sibling imports of the user's file
    try:
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    except Exception as e:
        raise KernelLoadError(f"{path}: importing it failed: {type(e).__name__}: {e}") from e
    finally:
        sys.path.pop(0)
    if not hasattr(module, name):
        kernels = sorted(n for n, v in vars(module).items() if _is_kernel(v))
        hint = f"; @triton.jit kernels in it: {', '.join(kernels)}" if kernels else "; it defines no @triton.jit kernel"
        raise KernelLoadError(f"{path}: no name {name!r}{hint}")
    obj = getattr(module, name)
    if not _is_kernel(obj):
        raise KernelLoadError(f"{path}:{name} is a {type(obj).__name__}, not a @triton.jit function")
    return obj
