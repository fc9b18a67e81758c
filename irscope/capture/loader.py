"""Python files by path → modules, and `FILE.py:KERNEL` → the kernel object, with clear errors for every way that
can go wrong.

`load_module` is the project's one way to import a file by path: a user's kernel, a candidate rewrite, a frozen
initial kernel. This file imports only the standard library and `triton.runtime`, because the Ascend worker runs
it in triton-ascend's environment, where the irscope package (built on Triton 3.6) cannot be imported.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from triton.runtime.autotuner import Autotuner, Heuristics
from triton.runtime.jit import JITFunction


class KernelLoadError(ValueError):
    """A kernel file or reference that cannot be loaded; the message names the file and what went wrong."""


def _is_kernel(obj: Any) -> bool:
    return isinstance(obj, JITFunction | Autotuner | Heuristics)


def load_module(path: str | Path, name: str) -> ModuleType:
    """Import the Python file `path` as module `name`. It is in sys.modules while and after it runs (dataclasses
    and pickling inside it look themselves up there), and its directory is first on sys.path while it runs
    (sibling imports). Raises KernelLoadError when there is no such file or importing it fails."""
    path = Path(path)
    if not path.is_file():
        raise KernelLoadError(f"{path}: no such file")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise KernelLoadError(f"{path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.resolve().parent))
    try:
        sys.modules[name] = module
        spec.loader.exec_module(module)
    except SyntaxError as e:  # FILE:LINE first, as compilers print it (the file may be one it imports)
        sys.modules.pop(name, None)
        raise KernelLoadError(
            f"{path}: importing it failed: {e.filename or path}:{e.lineno}: syntax error: {e.msg}; fix it and run again"
        ) from e
    except Exception as e:
        sys.modules.pop(name, None)
        raise KernelLoadError(f"{path}: importing it failed: {type(e).__name__}: {e}") from e
    finally:
        sys.path.pop(0)
    return module


def load_kernel(ref: str) -> Any:
    path_text, sep, name = ref.rpartition(":")
    if not sep or not path_text or not name:
        raise KernelLoadError(f"{ref!r}: expected FILE.py:KERNEL, e.g. kernels.py:matmul_kernel")
    path = Path(path_text)
    module = load_module(path, f"irscope_user_{abs(hash(str(path.resolve())))}")
    if not hasattr(module, name):
        kernels = sorted(n for n, v in vars(module).items() if _is_kernel(v))
        hint = f"; @triton.jit kernels in it: {', '.join(kernels)}" if kernels else "; it defines no @triton.jit kernel"
        raise KernelLoadError(f"{path}: no name {name!r}{hint}")
    obj = getattr(module, name)
    if not _is_kernel(obj):
        raise KernelLoadError(f"{path}:{name} is a {type(obj).__name__}, not a @triton.jit function")
    return obj
