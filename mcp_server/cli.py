"""`irscope mcp` (also `irscope-mcp`): serve the tools over stdio, or over streamable HTTP on the loopback
interface with --http PORT."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DEFAULT_DB = "out/compiler-index.db"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="irscope mcp",
        description="Serve irscope, compiler-index, the pattern cards and the ladder to a coding agent over the "
        "Model Context Protocol (docs/mcp.md).",
    )
    p.add_argument(
        "--workspace",
        type=Path,
        default=Path.cwd(),
        help="the one directory tools read and write (default: the current directory)",
    )
    p.add_argument("--db", type=Path, default=Path(DEFAULT_DB), help=f"compiler index (default: {DEFAULT_DB})")
    p.add_argument("--http", type=int, metavar="PORT", help="streamable HTTP on 127.0.0.1:PORT instead of stdio")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds a capture or diagnosis may run (300)")
    p.add_argument(
        "--unsafe-no-sandbox",
        action="store_true",
        help="where no confinement (bubblewrap) works on this machine, run the kernels' code unconfined, as you, "
        "with your files and network, instead of refusing capture, diagnose and validate_candidate",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    try:
        from mcp_server.server import build
    except ModuleNotFoundError as e:  # the SDK: the `mcp` extra
        print(
            f"irscope mcp: error: it needs the mcp extra ({e.name} is missing): pip install 'irscope[mcp]'",
            file=sys.stderr,
        )
        return 2
    from mcp_server.app import App
    from mcp_server.workspace import WorkspaceError

    try:
        app = App.create(a.workspace, a.db, a.timeout, a.unsafe_no_sandbox)
    except WorkspaceError as e:
        print(f"irscope mcp: error: {e}", file=sys.stderr)
        return 2
    server = build(app)
    if a.http is not None:
        server.run("streamable-http", host="127.0.0.1", port=a.http)
    else:
        server.run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
