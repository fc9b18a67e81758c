"""A workspace for the MCP server: the bundled example kernels, a broken kernel file, one that does not compile,
one that reads the environment, a candidate for the harness, and symlinks that lead out of it; the corpus index
(always) and the Triton checkout's index (when there is a checkout)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from compiler_index.build import build, resolve_roots
from irscope.examples import kernels
from suite.operator import get_operator

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "compiler_index" / "corpus"
TRITON = REPO / "third_party" / "triton"
SECRET = "sk-test-must-never-reach-a-kernel"

SECRET_READER = """\
import json
import os
from pathlib import Path

import triton
import triton.language as tl

# what a kernel module can see of the environment it is imported in
Path(__file__).with_name("env_seen.json").write_text(json.dumps(dict(os.environ)))


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
"""

BAD_DOT = """\
import triton
import triton.language as tl


@triton.jit
def bad_dot(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, tl.dot(x, x))  # tl.dot needs 2-D operands: the compile fails
"""

ADD_ARGS = {"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n_elements": "98432"}  # the `add` example's


def make_workspace(root: Path) -> Path:
    ws = root / "ws"
    ws.mkdir()
    shutil.copy(kernels.__file__, ws / "kernels.py")
    (ws / "broken.py").write_text("import triton\n\n@triton.jit\ndef k(x_ptr:\n    pass\n")
    (ws / "secret_reader.py").write_text(SECRET_READER)
    (ws / "bad_dot.py").write_text(BAD_DOT)
    shutil.copy(get_operator("new_gelu").kernel_path, ws / "new_gelu.py")
    outside = root / "outside"
    outside.mkdir()
    shutil.copy(kernels.__file__, outside / "kernels.py")
    (ws / "escape.py").symlink_to(outside / "kernels.py")
    (ws / "escape_dir").symlink_to(outside)
    return ws


def server_params(ws: Path, db: Path, env: dict[str, str] | None = None) -> Any:
    """`irscope mcp` over stdio, as an agent's MCP client configuration starts it."""
    from mcp import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "irscope.cli", "mcp", "--workspace", str(ws), "--db", str(db), "--timeout", "120"],
        env={"PYTHONPATH": str(REPO), **(env or {})},
    )


@pytest.fixture(scope="session")
def corpus_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("mcp-corpus") / "index.db"
    report = build(db, resolve_roots([CORPUS], [CORPUS / "python" / "toytriton"]))
    assert not report.errors, report.errors
    return db


@pytest.fixture(scope="session")
def triton_index(tmp_path_factory: pytest.TempPathFactory) -> Path | None:
    """The Triton checkout's index, None without a checkout (compiler-index fetch … --into third_party/triton)."""
    if not (TRITON / "include" / "triton").is_dir():
        return None
    db = tmp_path_factory.mktemp("mcp-triton") / "index.db"
    report = build(db, resolve_roots([TRITON], None))
    assert not report.errors, report.errors
    return db
