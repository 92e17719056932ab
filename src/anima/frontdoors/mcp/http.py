"""MCP over streamable HTTP at ``/mcp`` on the dashboard's port (``mcp.http``).

The same rules as the REST API: the bearer token when ``web.token`` is set (401 otherwise),
and, on a loopback host, the web door's Host/Origin guard (:mod:`anima.frontdoors.web.guard`,
in front of the whole app: a foreign ``Host`` is answered 421, a foreign or ``null``
``Origin`` 403, with the origin parsed, not glob-matched as the SDK's guard does). Sessions are
capped: at most :data:`MAX_SESSIONS` open (a new one past that is answered 503 "Too many open
sessions"), each closed after :data:`SESSION_IDLE_S` without a request (the SDK's defaults,
10,000 and 30 minutes, let a client hold ~54 kB each without end). The SDK is loaded and the
session manager started at the first request (within the web server's lifespan);
:class:`McpHttp` also owns the MCP core's start and stop.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from anima.errors import MissingDependencyError

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

    from anima.frontdoors.mcp.robot import McpRobot
    from anima.frontdoors.mcp.server import McpServer

log = logging.getLogger(__name__)

PATH = "/mcp"
MAX_SESSIONS = 32  # MCP clients at once: an agent or two, and room for their reconnects
SESSION_IDLE_S = 120.0  # a session no request touched for this long is closed
START_S = 30.0  # the most the first request waits for the SDK to load (~1.2 s here)


class Bearer:
    """ASGI: the request goes on when ``token_ok`` accepts its bearer token, else 401."""

    def __init__(self, app: ASGIApp, token_ok: Callable[[str | None], bool]) -> None:
        self.app = app
        self.token_ok = token_ok

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = None
            for key, value in scope.get("headers", []):
                if key == b"authorization" and value.lower().startswith(b"bearer "):
                    given = value[7:].strip().decode("latin-1")
            if not self.token_ok(given):
                from starlette.responses import JSONResponse

                body = {"v": 1, "path": PATH, "reason": "missing or wrong token (Bearer …)"}
                response = JSONResponse(
                    body, status_code=401, headers={"WWW-Authenticate": "Bearer"}
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class McpHttp:
    """The MCP core, its server and the HTTP sessions for one web door (which may be stopped
    and started again: each run of the web server gets a session manager of its own).

    The SDK (~1.2 s of CPU and ~27 MB to import) is loaded at the first request to ``/mcp``,
    not at the door's start: a robot nobody drives over MCP never pays for it. That request
    waits for it (up to :data:`START_S`); the import runs on a worker thread, so the web
    server's loop keeps answering meanwhile."""

    def __init__(self, robot: McpRobot, *, token_ok: Callable[[str | None], bool]):
        self.robot = robot
        self.server: McpServer | None = None  # made at the first request, kept across runs
        self._app: Any = None  # the running session manager's ASGI app
        self._wanted: Any = None  # anyio.Event: a request came (set while the server runs)
        self._ready: Any = None  # anyio.Event: the sessions run, or could not be started
        self._failure: str | None = None  # why MCP could not start (answered with 503)
        self.endpoint: Any = Bearer(self._serve, token_ok)

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = self._app
        if app is None:
            app = await self._started()
        if app is None:  # between runs of the web server, or the SDK would not load
            from starlette.responses import PlainTextResponse

            reason = self._failure or "MCP is starting"
            await PlainTextResponse(reason, status_code=503)(scope, receive, send)
            return
        await app(scope, receive, send)

    async def _started(self) -> Any:
        """The session manager's app once it runs (started by this request when it is the
        first); None between runs, on a failure, or after :data:`START_S`."""
        import anyio

        wanted, ready = self._wanted, self._ready
        if wanted is None or ready is None:
            return None
        wanted.set()
        with anyio.move_on_after(START_S):
            await ready.wait()
        return self._app

    @asynccontextmanager
    async def lifespan(self, _app: Any) -> AsyncIterator[None]:
        """The web server's lifespan: the session manager runs within it from the first
        request on (one run each: the SDK's manager cannot be run twice)."""
        import anyio

        self._wanted, self._ready = anyio.Event(), anyio.Event()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(self._run_sessions, self._wanted, self._ready)
            try:
                yield
            finally:
                self._wanted = self._ready = None
                tasks.cancel_scope.cancel()

    async def _run_sessions(self, wanted: Any, ready: Any) -> None:
        import anyio

        await wanted.wait()
        try:
            if self.server is None:
                started = time.monotonic()
                self.server = await anyio.to_thread.run_sync(self._make_server)
                log.info("MCP at %s ready (the SDK loaded in %.2f s)", PATH,
                         time.monotonic() - started)  # fmt: skip
            from mcp.server.streamable_http_manager import (
                StreamableHTTPASGIApp,
                StreamableHTTPSessionManager,
            )
        except Exception as exc:  # a broken SDK: every request says why, the rest serves on
            self._failure = f"MCP is not available: {type(exc).__name__}: {exc}"
            log.error("%s", self._failure)
            ready.set()
            return
        server = self.server
        sessions = StreamableHTTPSessionManager(
            app=server.server,
            json_response=False,
            stateless=False,
            # no security_settings: the web door's guard already checked Host and Origin
            session_idle_timeout=SESSION_IDLE_S,
            max_sessions=MAX_SESSIONS,
        )
        server.updates.bind()
        try:
            async with sessions.run():
                self._app = StreamableHTTPASGIApp(sessions)
                ready.set()
                await anyio.sleep_forever()
        finally:
            self._app = None
            server.updates.unbind()

    def _make_server(self) -> McpServer:
        """Import the SDK and make the core, the garbage collector paused as at the runtime's
        start (its full passes during these imports held the interpreter 30-50 ms: ticks
        missed) and what was loaded frozen out of its reach."""
        from anima.motion.priority import collector_paused

        with collector_paused():
            try:
                from anima.frontdoors.mcp.server import McpServer
            except ImportError as exc:
                raise MissingDependencyError("mcp", "mcp") from exc
            return McpServer(self.robot)

    def start(self) -> None:
        self.robot.start()

    def stop(self, timeout: float = 5.0) -> None:
        self.robot.stop(timeout)


def mount(
    app: Any, robot: McpRobot, *, host: str = "", token_ok: Callable[[str | None], bool]
) -> McpHttp:
    """Serve ``robot`` at ``/mcp`` on ``app`` (a FastAPI app made by
    :func:`anima.frontdoors.web.app.create_app`, whose guard checks Host and Origin by the
    door's host, so ``host`` changes nothing here), with the session manager in the app's
    lifespan (the web server must run it: uvicorn ``lifespan="on"``)."""
    from starlette.routing import Route

    served = McpHttp(robot, token_ok=token_ok)
    app.router.routes.append(Route(PATH, endpoint=served.endpoint))
    app.router.lifespan_context = served.lifespan
    return served
