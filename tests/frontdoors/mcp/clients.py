"""The official MCP SDK's client against anima's server, over stdio and streamable HTTP: one
scenario per check, each bounded in time (anyio's fail_after)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import yaml
from mcp import Client
from mcp.client.stdio import StdioServerParameters

QUIET = {
    "mqtt": {"enabled": False},
    "web": {"enabled": False},
    # eSpeak NG, always there in CI, starts in a blink; Piper's voice would load for seconds
    "speech": {"audio_out": "null", "engines": ["espeak"]},
    "motion": {"breathing": {"enabled": False}, "blink": {"enabled": False}},
}
Inbox = Callable[[Any], Any]


def write_config(folder: Path, **sections: Any) -> Path:
    path = folder / "anima.yaml"
    path.write_text(yaml.safe_dump({**QUIET, **sections}), encoding="utf-8")
    return path


@asynccontextmanager
async def stdio_client(
    config: Path, *, mode: str = "legacy", inbox: Inbox | None = None
) -> AsyncIterator[Client]:
    """``anima mcp -c config`` launched as a desktop client launches it."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "anima", "mcp", "--config", str(config)]
    )
    async with Client(
        params,
        mode=mode,
        message_handler=inbox,
        read_timeout_seconds=60,  # type: ignore[arg-type]
    ) as client:
        yield client


def text_of(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


def json_of(result: types.ReadResourceResult) -> Any:
    content = result.contents[0]
    assert isinstance(content, types.TextResourceContents)
    return json.loads(content.text)


@asynccontextmanager
async def http_client(
    url: str, *, token: str | None = None, mode: str = "legacy", inbox: Inbox | None = None
) -> AsyncIterator[Client]:
    """The official client over streamable HTTP at ``url`` (``…/mcp``), with a bearer token."""
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(
            streamable_http_client(url, http_client=http),
            mode=mode,  # type: ignore[arg-type]
            message_handler=inbox,  # type: ignore[arg-type]
            read_timeout_seconds=60,
        ) as client,
    ):
        yield client
