"""The default target has one owner: irscope.targets.DEFAULT_TARGET is the only place library code writes it."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("irscope", "compiler_index", "suite", "patterns", "ladder", "tools", "mcp_server")


def test_cuda_90_is_written_once_in_library_code():
    found = [
        str(path.relative_to(REPO))
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and node.value == "cuda:90"
    ]
    assert found == ["irscope/targets.py"]  # DEFAULT_TARGET
