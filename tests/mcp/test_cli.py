"""`irscope mcp` as a command: its options, and the one-line answer when the mcp extra is not installed (the GPU
machine has none: the server is a CPU tool)."""

from __future__ import annotations

import subprocess
import sys

from tests.mcp.conftest import REPO

# irscope's CLI with the SDK made unimportable, as on a machine without the extra
WITHOUT_SDK = """
import sys
from importlib.abc import MetaPathFinder

class Absent(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "mcp":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, Absent())
from irscope.cli import main
sys.exit(main(sys.argv[1:]))
"""


def irscope(*args: str, code: str | None = None) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-c", code, *args] if code else [sys.executable, "-m", "irscope.cli", *args]
    return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120, env={"PYTHONPATH": str(REPO)})


def test_without_the_extra_it_says_what_to_install():
    r = irscope("mcp", "--workspace", ".", code=WITHOUT_SDK)
    assert r.returncode == 2
    assert "irscope mcp: error: it needs the mcp extra (mcp is missing): pip install 'irscope[mcp]'" in r.stderr
    assert "Traceback" not in r.stderr


def test_help_and_a_bad_workspace():
    assert "mcp" in irscope("--help").stdout
    r = irscope("mcp", "--help")
    assert r.returncode == 0 and "--workspace" in r.stdout and "--http PORT" in r.stdout
    assert "--unsafe-no-sandbox" in r.stdout
    bad = irscope("mcp", "--workspace", str(REPO / "no-such-dir"))
    assert bad.returncode == 2 and "not a directory" in bad.stderr
