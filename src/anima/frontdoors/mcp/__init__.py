"""The Model Context Protocol door: any AI agent (Claude Desktop, Cursor, its own) drives the
robot through the action registry's tools, watches its state, and can always stop it.

:mod:`~anima.frontdoors.mcp.tools` makes the tools, :mod:`~anima.frontdoors.mcp.robot` carries
out their calls with no MCP in it, :mod:`~anima.frontdoors.mcp.resources` reads the resources
and tells when they change, :mod:`~anima.frontdoors.mcp.server` is the official SDK's
server over stdio (``anima mcp``) and streamable HTTP (``/mcp`` on the dashboard's port).
"""
