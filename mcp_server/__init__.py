"""The Model Context Protocol server: irscope's trajectories, the compiler index, the pattern cards and the ladder
as tools any coding agent can call (`irscope mcp`, docs/mcp.md).

It sits above every other package in the layer order because it serves all of them; `irscope mcp` finds it at
run time. Modules: workspace (the one root it reads and writes), bounds (answers sized for an agent's context),
children (code-running tools in child processes), one module per tool group (trajectories, index, cards,
ladder_tools), resources, server (the MCP wiring) and cli.
"""
