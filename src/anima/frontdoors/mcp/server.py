"""The MCP server (the official ``mcp`` SDK's low-level :class:`~mcp.server.lowlevel.Server`)
over :class:`~anima.frontdoors.mcp.robot.McpRobot`.

- **Tools**: ``tools/list`` from :attr:`McpRobot.tools`; ``tools/call`` runs
  :meth:`McpRobot.call` on a worker thread and answers when it has finished: its text, its
  steps as ``structuredContent``, ``isError`` for a refusal or a failed step. Progress goes to
  the client's progress token. The client's cancel (``notifications/cancelled``, or a closed
  HTTP stream) cancels the handler; the plan is cancelled at once, which holds the motion.
- **Resources**: the state, the recent events, the animations, the body (JSON). A client
  hears ``notifications/resources/updated`` when the state or the event log changes: by
  ``resources/subscribe`` (protocol 2025-11-25) or a ``subscriptions/listen`` stream
  (2026-07-28); the runtime's watcher thread pushes into the server's event loop.
- **Prompt**: ``drive_robot``, how to drive this robot, from its tools.

Both protocol eras are served (the SDK picks by the client's first request). On stdio the
wire is stdout: anima logs to stderr only.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPError

from anima.frontdoors.mcp.resources import RESOURCES
from anima.frontdoors.mcp.robot import Cancel, McpRobot
from anima.version import __version__

log = logging.getLogger(__name__)

PROMPT = "drive_robot"
RESOURCE_NOT_FOUND = -32002  # the MCP spec's code for an unknown resource URI
INSTRUCTIONS = (
    "anima drives a robot. Every tool call returns when the action has finished, with each "
    "step's status; a refused call says why. run_plan runs several actions, checked whole "
    "first. stop cancels what runs; emergency_stop holds everything until "
    "reset_emergency_stop. Read anima://state for what the robot is doing."
)
NOTIFICATIONS = NotificationOptions(resources_changed=True)


class Updates:
    """``resources/updated`` for both eras, pushed from any thread into the server's loop."""

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()  # 2026-07-28: subscriptions/listen streams
        self.legacy: dict[str, set[Any]] = {}  # 2025-11-25: uri → subscribed connections
        self.token: anyio.lowlevel.EventLoopToken | None = None

    def bind(self) -> None:
        """On the server's loop: from now on :meth:`from_thread` reaches it."""
        self.token = anyio.lowlevel.current_token()

    def unbind(self) -> None:
        """As the server's loop ends: no send is handed to it any more (one handed to a loop
        that closed before running it was a coroutine never awaited)."""
        self.token = None

    async def send(self, uri: str) -> None:
        await self.bus.publish(ResourceUpdated(uri=uri))
        for connection in list(self.legacy.get(uri, ())):
            await connection.send_resource_updated(uri)

    def from_thread(self, uri: str) -> None:
        """From the runtime's watcher thread; nothing when no loop runs (yet, or any more)."""
        if self.token is None:
            return
        try:
            anyio.from_thread.run(self.send, uri, token=self.token)
        except (Exception, asyncio.CancelledError) as exc:  # the loop stopped: nobody to tell
            # (a send the stopping loop cancelled raises CancelledError, a BaseException: it
            # ended the watcher's thread when the web door stopped as the state changed)
            log.debug("mcp: %s changed, not sent: %r", uri, exc)


class McpServer:
    """The SDK's server for one :class:`McpRobot`; :meth:`run_stdio` or :attr:`server` in an
    HTTP session manager."""

    def __init__(self, robot: McpRobot) -> None:
        self.robot = robot
        self.updates = Updates()
        self._schemas = {t.name: t.input_schema for t in robot.tools}
        self._unwatch = robot.watch(self.updates.from_thread)
        self.server: Server[Any] = Server(
            "anima",
            version=__version__,
            title="anima robot",
            instructions=INSTRUCTIONS,
            lifespan=self._lifespan,
            get_tool_input_schema=self._schemas.get,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_read_resource=self._read_resource,
            on_subscribe_resource=self._subscribe,
            on_unsubscribe_resource=self._unsubscribe,
            on_subscriptions_listen=ListenHandler(self.updates.bus),
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
        )
        # the 2025-era HTTP sessions build their own options: advertise the same there
        self.server.create_initialization_options = functools.partial(  # type: ignore[method-assign]
            self.server.create_initialization_options, notification_options=NOTIFICATIONS
        )

    def close(self) -> None:
        self._unwatch()

    async def run_stdio(self) -> None:
        """Serve one client on stdin/stdout until it closes them."""
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read, write):
            await self.server.run(read, write, self.server.create_initialization_options())

    @asynccontextmanager
    async def _lifespan(self, _: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        self.updates.bind()
        try:
            yield {}
        finally:
            self.updates.unbind()

    # ------------------------------------------------------------------ tools
    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        tools = [
            types.Tool(name=t.name, description=t.description, input_schema=dict(t.input_schema))
            for t in self.robot.tools
        ]
        return types.ListToolsResult(tools=tools)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        token = anyio.lowlevel.current_token()
        cancelled = Cancel()

        def progress(done: float, total: float, message: str) -> None:
            try:
                anyio.from_thread.run(
                    ctx.session.report_progress, done, total, message, token=token
                )
            except Exception as exc:  # the call ended, or the client left
                log.debug("mcp: progress not sent: %s", exc)

        args: Mapping[str, object] = params.arguments or {}
        call = functools.partial(
            self.robot.call, params.name, args, progress=progress, cancelled=cancelled
        )
        try:
            outcome = await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            cancelled.set()  # the plan's thread cancels it: motion held on the next tick
            log.info("mcp: %s cancelled by the client", params.name)
            raise
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=outcome.text)],
            structured_content=dict(outcome.data) if outcome.data is not None else None,
            is_error=outcome.error,
        )

    # ------------------------------------------------------------------ resources
    async def _list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=r.uri,
                    name=r.name,
                    description=r.description,
                    mime_type="application/json",
                )
                for r in RESOURCES
            ]
        )

    async def _read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        try:
            text = self.robot.read(str(params.uri))
        except KeyError:
            known = ", ".join(r.uri for r in RESOURCES)
            raise MCPError(
                code=RESOURCE_NOT_FOUND,
                message=f"unknown resource {str(params.uri)[:80]!r} (resources: {known})",
            ) from None
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(uri=params.uri, mime_type="application/json", text=text)
            ]
        )

    async def _subscribe(
        self, ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        if self.updates.token is None:
            self.updates.bind()
        connection = ctx.session._connection
        subscribed = self.updates.legacy.setdefault(str(params.uri), set())
        if connection not in subscribed:
            subscribed.add(connection)
            connection.exit_stack.callback(lambda: subscribed.discard(connection))
        return types.EmptyResult()

    async def _unsubscribe(
        self, ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        connection = ctx.session._connection
        self.updates.legacy.get(str(params.uri), set()).discard(connection)
        return types.EmptyResult()

    # ------------------------------------------------------------------ prompts
    async def _list_prompts(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        prompt = types.Prompt(name=PROMPT, description="How to drive this robot, from its tools.")
        return types.ListPromptsResult(prompts=[prompt])

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        if params.name != PROMPT:
            raise MCPError(code=-32602, message=f"unknown prompt {params.name[:60]!r}")
        text = types.TextContent(type="text", text=self.robot.prompt())
        return types.GetPromptResult(
            description="How to drive this robot",
            messages=[types.PromptMessage(role="user", content=text)],
        )
