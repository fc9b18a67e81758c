"""A workspace for the MCP server: the bundled example kernels, a broken kernel file, one that does not compile,
one that reads the environment, a candidate for the harness, and symlinks that lead out of it; a hostile kernel
module to plant in it, with the loopback server it tries to reach; the corpus index (always) and the Triton
checkout's index (when there is a checkout)."""

from __future__ import annotations

import contextlib
import shutil
import socket
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from compiler_index.build import build, resolve_roots
from irscope.examples import kernels
from suite.operator import get_operator
from tests import triton_source

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "compiler_index" / "corpus"
SECRET = "sk-test-must-never-reach-a-kernel"

SECRET_READER = """\
import atexit
import json
import os
import sys
from pathlib import Path

import triton
import triton.language as tl

# what a kernel module can see of the environment it is imported in, written into the capture's output directory
# (the one place a confined module may write besides its scratch) once the capture has written it
seen = json.dumps(dict(os.environ))
out = Path(sys.argv[sys.argv.index("--out") + 1])
atexit.register(lambda: (out / "env_seen.json").write_text(seen))


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
"""

# A kernel module that, at import, tries to write outside the workspace and into its own folder, to reach a server
# on the loopback interface and to read a file outside the workspace; what it read it leaks into the capture's
# output, with a link to the file beside it, once the capture has written that (at exit). The tests check which of
# these side effects happened. Formatted with the paths and port of the test.
HOSTILE = """\
import atexit
import socket
import sys
from pathlib import Path

import triton
import triton.language as tl

OUTSIDE, SECRET_FILE, PORT = {outside!r}, {secret_file!r}, {port}
stolen = []


def attempt(what):
    try:
        what()
    except OSError:
        pass


attempt(lambda: Path(OUTSIDE).write_text("planted by a kernel module"))
attempt(lambda: Path(__file__).with_name("planted.txt").write_text("planted by a kernel module"))
attempt(lambda: socket.create_connection(("127.0.0.1", PORT), timeout=5).sendall(b"hello from a kernel module"))
attempt(lambda: stolen.append(Path(SECRET_FILE).read_text()))
out = Path(sys.argv[sys.argv.index("--out") + 1])


@atexit.register
def leak():
    if stolen:
        (out / "leak.txt").write_text(stolen[0])
    (out / "stolen").symlink_to(SECRET_FILE)


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
"""
HOSTILE_SECRET = "the-contents-of-a-file-outside-the-workspace"
COPY_ARGS = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "1024"}  # copy_kernel's, with BLOCK 128

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


@dataclass
class Hostile:
    """The hostile module planted in a workspace, and the traces it would leave: a file outside the workspace, one
    in the kernel's folder, connections to a loopback server, the secret file it would read."""

    kernel: str
    outside: Path
    beside: Path
    secret_file: Path
    connections: list[bytes]


@contextlib.contextmanager
def hostile(ws: Path) -> Iterator[Hostile]:
    """Plant HOSTILE in `ws` (a new file per call) with a loopback server listening for it while the block runs."""
    root = ws.parent
    secret_file = root / "secret.txt"
    secret_file.write_text(HOSTILE_SECRET)
    connections: list[bytes] = []
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.2)
        done = threading.Event()

        def serve() -> None:
            while not done.is_set():
                try:
                    conn, _ = listener.accept()
                except TimeoutError:
                    continue
                with conn:
                    conn.settimeout(5)
                    connections.append(conn.recv(1024))

        port = listener.getsockname()[1]
        outside = root / f"planted-{port}.txt"
        module = ws / f"hostile_{port}.py"
        module.write_text(HOSTILE.format(outside=str(outside), secret_file=str(secret_file), port=port))
        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        try:
            yield Hostile(f"{module.name}:copy_kernel", outside, ws / "planted.txt", secret_file, connections)
        finally:
            done.set()
            thread.join(5)


def files_holding(root: Path, text: str) -> list[Path]:
    """Every plain file under `root` (links not followed) whose bytes contain `text`."""
    return [p for p in root.rglob("*") if p.is_file() and not p.is_symlink() and text.encode() in p.read_bytes()]


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
def triton_index(request: pytest.FixtureRequest) -> Path | None:
    """The Triton checkout's index (tests/conftest.py's, built once per run), None without a checkout."""
    return request.getfixturevalue("triton_db") if triton_source.present() else None
