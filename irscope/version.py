"""irscope's version, and the `--version` flag every command line of the project (irscope, compiler-index,
patterns, ladder) shares: one release number for the four."""

from __future__ import annotations

import argparse

__version__ = "0.1.0"


def add_version_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}", help="print the version")
