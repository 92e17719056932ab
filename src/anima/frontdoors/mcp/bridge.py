"""``anima mcp --url``: stdio for a desktop client, bridged to a running ``anima serve``'s
``/mcp`` (streamable HTTP, with its token): tools (progress and the client's cancel carried
through), resources and the prompt are the remote robot's."""

from __future__ import annotations

import logging
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared._httpx_utils import create_mcp_http_client

from anima.errors import AnimaError
from anima.version import __version__

log = logging.getLogger(__name__)


async def run_bridge(url: str, token: str | None) -> None:
    """Serve stdin/stdout as ``url``'s MCP server until the client closes stdin."""
    headers = {"Authorization": f"Bearer {token}"} if token else None
    try:
        async with (
            create_mcp_http_client(headers=headers) as http,
            Client(streamable_http_client(url, http_client=http), mode="legacy") as remote,
        ):
            await _serve(remote, url)
    except AnimaError:
        raise
    except Exception as exc:  # the remote refused, is unreachable, or went away
        raise AnimaError(f"mcp: the bridge to {url} failed: {exc}") from exc


async def _serve(remote: Client, url: str) -> None:
    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        result: types.ListToolsResult = await remote.list_tools(cache_mode="bypass")
        return result

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        async def forward(progress: float, total: float | None, message: str | None) -> None:
            await ctx.session.report_progress(progress, total, message)

        result: types.CallToolResult = await remote.call_tool(
            params.name, dict(params.arguments or {}), progress_callback=forward
        )
        return result

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        result: types.ListResourcesResult = await remote.list_resources(cache_mode="bypass")
        return result

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        result: types.ReadResourceResult = await remote.read_resource(
            str(params.uri), cache_mode="bypass"
        )
        return result

    async def list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        result: types.ListPromptsResult = await remote.list_prompts(cache_mode="bypass")
        return result

    async def get_prompt(
        ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        result: types.GetPromptResult = await remote.get_prompt(
            params.name, dict(params.arguments or {})
        )
        return result

    info = remote.server_info
    server: Server[Any] = Server(
        "anima",
        version=__version__,
        title=f"anima robot at {url}",
        instructions=remote.instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )
    log.info("mcp: bridging stdio to %s (%s)", url, info.name if info is not None else "?")
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
