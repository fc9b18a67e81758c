"""`make lint` (and so `make test`) checks the project's own files: what git tracks. A user who follows the
README and leaves `my_kernels.py` or a `dump/` folder of theirs in the checkout must not see the build fail in
ruff on their files before any test runs."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("make") is None or shutil.which("git") is None, reason="needs make and git")
def test_lint_checks_tracked_files_only(tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(clone)], check=True)
    (clone / "my_kernels.py").write_text("import os, sys\nx=1;y=2\n")  # unused imports, two statements a line
    (clone / "dump").mkdir()
    (clone / "dump" / "kernel.py").write_text("import json\n")
    dry = subprocess.run(
        ["make", "-n", "lint"], cwd=clone, capture_output=True, text=True, check=True, env={"PATH": "/usr/bin:/bin"}
    ).stdout
    ruff = [line for line in dry.splitlines() if "ruff check" in line]
    assert ruff, dry
    assert "irscope/cli.py" in ruff[0]  # a tracked file is checked ...
    assert "my_kernels.py" not in ruff[0] and "dump/kernel.py" not in ruff[0]  # ... the user's are not
