"""irscope.capture.loader.load_module: the one way the project imports a file by path, and its errors."""

import sys

import pytest

from irscope.capture.loader import KernelLoadError, load_kernel, load_module


def test_loads_a_file_with_sibling_imports(tmp_path):
    (tmp_path / "helper_for_loader_test.py").write_text("SCALE = 3\n")
    (tmp_path / "mod.py").write_text(
        "from helper_for_loader_test import SCALE\n\ndef forward(x):\n    return x * SCALE\n"
    )
    mod = load_module(tmp_path / "mod.py", "loader_test_mod")
    assert mod.forward(2) == 6
    assert sys.modules["loader_test_mod"] is mod
    assert str(tmp_path) not in sys.path  # only while the file runs


def test_missing_file(tmp_path):
    with pytest.raises(KernelLoadError, match="no such file"):
        load_module(tmp_path / "absent.py", "loader_test_absent")


def test_a_failing_import_names_the_file_and_the_error_and_leaves_no_module(tmp_path):
    path = tmp_path / "broken.py"
    path.write_text("x = 1\nraise RuntimeError('boom at import')\n")
    with pytest.raises(KernelLoadError) as e:
        load_module(path, "loader_test_broken")
    assert str(e.value) == f"{path}: importing it failed: RuntimeError: boom at import"
    assert "loader_test_broken" not in sys.modules
    path.write_text("def f(:\n")
    with pytest.raises(KernelLoadError) as e:
        load_module(path, "loader_test_broken")
    assert str(e.value) == f"{path}: importing it failed: {path}:1: syntax error: invalid syntax; fix it and run again"


def test_load_kernel_names_the_kernels_it_has(tmp_path):
    path = tmp_path / "k.py"
    path.write_text("import triton\n\n@triton.jit\ndef add_kernel(x):\n    pass\n\nNOT_A_KERNEL = 1\n")
    assert load_kernel(f"{path}:add_kernel").fn.__name__ == "add_kernel"
    with pytest.raises(KernelLoadError, match=r"no name 'nope'; @triton\.jit kernels in it: add_kernel"):
        load_kernel(f"{path}:nope")
    with pytest.raises(KernelLoadError, match=r"is a int, not a @triton\.jit function"):
        load_kernel(f"{path}:NOT_A_KERNEL")
