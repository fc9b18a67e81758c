"""The MCP wiring: one MCPServer holding every tool group and the resources, with argument errors reported on
one line like every other failure."""

from __future__ import annotations

from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver.context import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ValidationError

from irscope.version import __version__
from mcp_server import cards, index, ladder_tools, resources, trajectories
from mcp_server.app import App
from mcp_server.errors import validation_reason

INSTRUCTIONS = """\
Compiler-grounded evidence for Triton kernels. Typical session: capture FILE.py:KERNEL (args as irscope dump
spells them) → trajectory_summary → query_trajectory introduced-by OP → index_conditions / index_explain for
the compiler code that decided it → diagnose for the ladder's verdict; validate_candidate checks a rewrite
against a suite operator. Every list answer is a page: pass next_offset back as offset for more. Paths are
relative to the workspace root and must stay inside it."""


class IrscopeServer(MCPServer[Any]):
    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as e:
            if isinstance(e.__cause__, ValidationError):
                raise ToolError(f"{name}: bad arguments: {validation_reason(e.__cause__)}") from e.__cause__
            raise


def build(app: App) -> IrscopeServer:
    server = IrscopeServer("irscope", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    for group in (trajectories, index, cards, ladder_tools, resources):
        group.register(server, app)
    return server
