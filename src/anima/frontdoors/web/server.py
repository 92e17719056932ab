"""``WebFrontDoor``: uvicorn on its own thread, owned and stopped by the runtime."""

from __future__ import annotations

import importlib.util
import logging
import socket
import threading
import time
from typing import TYPE_CHECKING, Any

from anima.config import WebConfig
from anima.errors import AnimaError, ConfigError, MissingDependencyError
from anima.events import Event
from anima.frontdoors.dispatch import CommandDispatcher
from anima.frontdoors.state import (
    StateReader,
    animations_description,
    body_description,
)
from anima.frontdoors.web.access import token_matches
from anima.frontdoors.web.connections import Gate, GateCounts
from anima.frontdoors.web.stream import Clients, dumps
from anima.wire import PAYLOAD_VERSION
from anima.wire.events import event_fields
from anima.wire.jsontypes import JsonObject
from anima.wire.payloads import MAX_PAYLOAD

if TYPE_CHECKING:
    import asyncio

    from anima.frontdoors.mcp.http import McpHttp
    from anima.frontdoors.web.limits import WebSocketCap
    from anima.frontdoors.web.mdns import Announcer
    from anima.runtime import Runtime

log = logging.getLogger(__name__)

START_TIMEOUT_S = 5.0  # uvicorn must be serving within this
BACKLOG = 128  # connections the kernel holds for accepting; asyncio accepts as many at a time


class WebFrontDoor:
    """The dashboard, REST API and WebSocket of one runtime, served by uvicorn on a thread."""

    def __init__(self, runtime: Runtime, config: WebConfig) -> None:
        self.runtime = runtime
        self.config = config
        self.dispatcher = CommandDispatcher(runtime.execute, runtime.events)
        self.reader = StateReader(runtime)
        self.clients = Clients()
        self.rejected = 0
        # the connections' limits (web.max_connections, the timeouts), shared by all of them
        self.gate = Gate(
            max_connections=config.max_connections,
            header_timeout_s=config.header_timeout_s,
            body_timeout_s=config.body_timeout_s,
            write_stall_s=config.write_stall_s,
        )
        self._ws_cap: WebSocketCap | None = None  # made by prepare()
        self.loop: asyncio.AbstractEventLoop | None = None  # the server's, once it runs
        self._state: tuple[float, JsonObject] | None = None  # (made at, the state message)
        self._state_ttl_s = 0.5 / config.updates_hz  # each client's is at most this old
        self.port = config.port  # the bound port once started (config.port may be 0)
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._unsubscribe: Any = None
        self._uvicorn: Any = None  # made by prepare()
        self.mdns: Announcer | None = None  # web.mdns: the dashboard announced on the LAN
        self.mcp: McpHttp | None = None  # MCP at /mcp (mcp.http), made by prepare()

    def _make_uvicorn_config(self) -> Any:
        try:
            import uvicorn

            from anima.frontdoors.web.app import create_app
            from anima.frontdoors.web.connections import protocols
            from anima.frontdoors.web.limits import WebSocketCap
        except ImportError as exc:
            raise MissingDependencyError("fastapi/uvicorn", "web") from exc
        app = create_app(self)
        self.mcp = self._mount_mcp(app)
        self._ws_cap = WebSocketCap(app, self.config.max_ws_clients)
        http, websocket = protocols(self.gate)
        config = uvicorn.Config(
            self._ws_cap,
            http=http,  # h11's, held to the gate: a connection cap and header/body timeouts
            log_level="warning",
            access_log=False,
            lifespan="off" if self.mcp is None else "on",  # MCP's sessions run in it
            ws="websockets-sansio",
            # the page sends nothing on its WebSocket: a client's message is read and dropped,
            # so bound it as the REST bodies are instead of uvicorn's 16 MiB default
            ws_max_size=MAX_PAYLOAD,
            timeout_graceful_shutdown=2,
            # connections waiting to be accepted (uvicorn's default, 2,048, is also how many
            # asyncio accepts in a row): a flood queued ahead of a client delayed it 1.6 s
            backlog=BACKLOG,
        )
        config.load()
        config.ws_protocol_class = websocket  # load() set the named one; this one is counted
        return config

    def _mount_mcp(self, app: Any) -> McpHttp | None:
        """MCP at /mcp when ``mcp.http`` is on and the ``mcp`` extra is there (else a line
        in the log saying how to get it)."""
        if not self.runtime.config.mcp.http:
            return None
        if importlib.util.find_spec("mcp") is None:  # loaded at the first request, not now
            log.info("MCP at /mcp needs the mcp extra: pip install 'anima[mcp]'")
            return None
        from anima.agent.remembering import shared_memory
        from anima.agent.vocabulary import robot_registry
        from anima.frontdoors.mcp.http import mount
        from anima.frontdoors.mcp.robot import McpRobot

        cfg = self.runtime.config
        registry = robot_registry(self.runtime, user_actions=cfg.agent.user_actions)
        memory = shared_memory(self.runtime.agent, cfg.agent.memory, registry)
        robot = McpRobot(self.runtime, registry, cfg.mcp, memory=memory)
        return mount(app, robot, host=self.config.host, token_ok=self.token_ok)

    @property
    def url(self) -> str:
        host = self.config.host
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{self.port}/"

    def token_ok(self, given: str | None) -> bool:
        return token_matches(self.config.token, given)

    # ------------------------------------------------------------------ lifecycle
    def prepare(self) -> None:
        """At start, beside the running loop (the runtime pauses the garbage collector, whose
        full passes during these imports were the long holds): FastAPI and uvicorn imported, the
        routes built (the MCP SDK is loaded at the first request to /mcp).
        MissingDependencyError without the web extra."""
        if self._uvicorn is None:
            self._uvicorn = self._make_uvicorn_config()

    def start(self) -> None:
        import uvicorn

        self.prepare()
        cfg = self.config
        family = socket.AF_INET6 if ":" in cfg.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((cfg.host, cfg.port))
        except OSError as exc:
            sock.close()
            raise ConfigError(
                f"web: cannot serve on {cfg.host}:{cfg.port}: {exc.strerror or exc} "
                "(web.port, or anima serve --no-web)"
            ) from exc
        self.port = sock.getsockname()[1]
        server = uvicorn.Server(self._uvicorn)
        self._server = server
        self._unsubscribe = self.runtime.events.subscribe(self._on_event)
        self.dispatcher.start()
        if self.mcp is not None:
            self.mcp.start()
        self._thread = threading.Thread(target=self._serve, args=(server, sock), name="anima-web")
        self._thread.start()
        end = time.monotonic() + START_TIMEOUT_S
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > end:
                self.stop()
                sock.close()
                raise AnimaError(f"web: uvicorn did not start on {cfg.host}:{self.port}")
            time.sleep(0.005)
        log.info("dashboard at %s", self.url)
        if cfg.mdns:
            from anima.frontdoors.web.mdns import Announcer

            rt = self.runtime
            props = {"prefix": rt.config.mqtt.prefix, "body": rt.body.name,
                     "driver": rt.config.driver.type}  # fmt: skip
            name = rt.config.mqtt.name or rt.config.mqtt.prefix
            self.mdns = Announcer(name, cfg.host, self.port, props).start()

    def _serve(self, server: Any, sock: socket.socket) -> None:
        import asyncio  # here: ~65 ms of imports the first tick does not wait for

        async def serve() -> None:
            self.loop = asyncio.get_running_loop()
            self.loop.set_exception_handler(self.gate.on_loop_exception)
            await server.serve(sockets=[sock])

        asyncio.run(serve())

    def counts(self) -> GateCounts:
        """The gate's counts: connections open, refused, timed out, dropped, failed accepts."""
        return self.gate.counts()

    @property
    def ws_refused(self) -> int:
        """WebSocket clients closed at once for the cap (web.max_ws_clients)."""
        return 0 if self._ws_cap is None else self._ws_cap.refused

    def stop(self, timeout: float = 5.0) -> None:
        if self.mdns is not None:
            self.mdns.stop()
            self.mdns = None
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        server = self._server
        if server is not None:
            server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive() and server is not None:
                server.force_exit = True
                self._thread.join(2.0)
            self._thread = None
        self._server = None
        self.dispatcher.stop()
        if self.mcp is not None:
            self.mcp.stop(timeout)

    # ------------------------------------------------------------------ messages
    def hello(self) -> JsonObject:
        """The first WebSocket message: the body's channels with limits, and the animations."""
        return {
            "v": PAYLOAD_VERSION,
            "type": "hello",
            "updates_hz": self.config.updates_hz,
            "body": body_description(self.runtime),
            "animations": animations_description(self.runtime),
        }

    def state_message(self) -> JsonObject:
        """The state message, made at most once per half period and shared by every client
        (the same object: :func:`~anima.frontdoors.web.stream.dumps` encodes it once). Made
        for each client, it cost ~0.6 ms each time: 200 clients at 30 Hz starved the loop."""
        now = time.monotonic()
        made = self._state
        if made is not None and now - made[0] < self._state_ttl_s:
            return made[1]
        message: JsonObject = {
            "v": PAYLOAD_VERSION,
            "type": "state",
            **self.reader.state().to_json(),
            "values": self.reader.frame(),
        }
        self._state = (now, message)
        return message

    def _on_event(self, event: Event) -> None:
        if len(self.clients) == 0:
            return
        try:
            text = dumps({"v": PAYLOAD_VERSION, "type": "event", **event_fields(event)})
        except ValueError:  # a non-finite number in an event: report it without the fields
            text = dumps({"v": PAYLOAD_VERSION, "type": "event", "kind": event.kind})
        self.clients.broadcast(text)
