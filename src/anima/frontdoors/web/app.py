"""The FastAPI application: REST commands, state, the WebSocket and the page.

Request bodies are read raw and parsed by :mod:`anima.wire.payloads`, the functions the
MQTT door uses, so a command is refused with the same reason whichever way it came; the OpenAPI
description documents the bodies without a second validator. Commands are executed in order by
the door's dispatcher, and every command route waits for its verdict (up to
:data:`VERDICT_WAIT_S`) so the answer is the runtime's: 202 when it was carried out, 409 with
the reason when it was refused at execution (an estopped engine, a full speech queue). A verdict
later than that answers 202 with ``"queued": true``; a refusal then arrives only as a
``command_rejected`` event on the WebSocket (which every refusal also is).
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from fastapi import APIRouter, Depends, FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from fastapi_offline import FastAPIOffline

from anima import commands as cmd
from anima.errors import AnimaError
from anima.frontdoors.dispatch import Origin
from anima.frontdoors.state import animations_description, body_description
from anima.frontdoors.web import schemas
from anima.frontdoors.web.access import RefusedError
from anima.frontdoors.web.frames import Buffer, FrameFeed, frames_message
from anima.frontdoors.web.guard import Guard, is_loopback
from anima.frontdoors.web.humanoid import add_humanoid_routes
from anima.frontdoors.web.limits import BodyLimit
from anima.frontdoors.web.memory import add_memory_routes
from anima.frontdoors.web.stream import Client, dumps
from anima.frontdoors.web.vision import add_vision_routes
from anima.version import __version__
from anima.wire import PAYLOAD_VERSION, payloads
from anima.wire.jsontypes import JsonObject

if TYPE_CHECKING:
    from anima.config import WebConfig
    from anima.frontdoors.dispatch import CommandDispatcher
    from anima.frontdoors.state import StateReader
    from anima.frontdoors.web.stream import Clients
    from anima.runtime import Runtime


class WebFrontDoor(Protocol):
    """What the app serves from (:class:`anima.frontdoors.web.server.WebFrontDoor`)."""

    runtime: Runtime
    config: WebConfig
    dispatcher: CommandDispatcher
    reader: StateReader
    clients: Clients
    rejected: int

    def token_ok(self, given: str | None) -> bool: ...

    def hello(self) -> JsonObject: ...

    def state_message(self) -> JsonObject: ...


STATIC = Path(__file__).with_name("static")
DOCS_ASSETS = "/static/api-docs"  # Swagger UI and ReDoc files (fastapi-offline)
VERDICT_WAIT_S = 1.0  # a command's answer waits this long at most for the runtime's verdict


ACCEPTED: dict[int | str, dict[str, Any]] = {
    202: {"description": 'carried out (or, past 1 s in the queue, queued: `"queued": true`)'},
    409: {"description": "refused at execution, with the runtime's reason (an emergency stop)"},
}
REFUSED: dict[int | str, dict[str, Any]] = {  # FastAPI's type
    400: {"description": "refused: the reason is the MQTT door's"},
    401: {"description": "missing or wrong token"},
    403: {"description": "a page from another origin (on a loopback host)"},
    413: {"description": "a body over 64 KiB: refused before it is read"},
    415: {"description": "a body that is not Content-Type: application/json"},
    421: {"description": "a Host that is not this server (on a loopback host)"},
}


def create_app(door: WebFrontDoor) -> FastAPI:
    runtime = door.runtime

    def check_token(request: Request) -> None:
        if not door.token_ok(_bearer(request)):
            raise RefusedError(401, "missing or wrong token (Authorization: Bearer …)")

    # FastAPI whose /docs (Swagger UI) and /redoc pages load their scripts from this server, not
    # a CDN: the reference works on a robot or a laptop without internet
    app = FastAPIOffline(
        title="anima",
        version=__version__,
        description="Drive one robot: the MQTT contract's commands, its state and body.",
        static_url=DOCS_ASSETS,
    )

    # bodies over the parsers' limit are refused before they are read (413), not after
    app.add_middleware(BodyLimit, limit=payloads.MAX_PAYLOAD)
    # outermost: a foreign page's request (Host, Origin, a non-JSON body) is refused before
    # anything else reads it, on every route, /ws and /mcp included (guard.py)
    # (off loopback web.token is required and protects instead; a host the config let through
    # without a token is guarded as loopback)
    guarded = is_loopback(door.config.host) or not door.config.token
    app.add_middleware(Guard, loopback=guarded)

    @app.exception_handler(RefusedError)
    async def refused(request: Request, exc: RefusedError) -> JSONResponse:
        body = {"v": PAYLOAD_VERSION, "path": request.url.path, "reason": exc.reason}
        return JSONResponse(body, status_code=exc.status)

    api = APIRouter(prefix="/api", dependencies=[Depends(check_token)])

    _add_commands(api, door)
    add_humanoid_routes(api, runtime, RefusedError)
    add_vision_routes(api, runtime, RefusedError)
    add_memory_routes(api, runtime, RefusedError)

    @api.get(
        "/state", summary="The runtime's state and the last channel values", response_model=None
    )
    def state() -> JsonObject:
        return {
            "v": PAYLOAD_VERSION,
            **door.reader.state().to_json(),
            "values": door.reader.frame(),
        }

    @api.get("/health", summary="The robot's health, with warnings to act on", response_model=None)
    def health() -> JsonObject:
        return {"v": PAYLOAD_VERSION, **runtime.health.now().to_json()}

    @api.get("/animations", summary="The library's gestures and gaze postures", response_model=None)
    def animations() -> JsonObject:
        return {"v": PAYLOAD_VERSION, **animations_description(runtime)}

    @api.get(
        "/body",
        summary="Channels with their limits and roles, and the body's postures",
        response_model=None,
    )
    def body() -> JsonObject:
        return {"v": PAYLOAD_VERSION, **body_description(runtime)}

    app.include_router(api)

    _add_stream(app, door)

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


def _add_commands(api: APIRouter, door: WebFrontDoor) -> None:
    runtime = door.runtime
    library = runtime.library

    async def submit(request: Request, parse: payloads.Parser) -> JSONResponse:
        raw = await request.body()
        try:
            command = parse(raw)
        except AnimaError as exc:
            door.rejected += 1
            raise RefusedError(400, str(exc)) from None
        if isinstance(command, cmd.Speak) and runtime.speech is None:
            raise RefusedError(409, f"speech is not available: {runtime.speech_problem}")
        path = request.url.path
        verdict = _Verdict(asyncio.get_running_loop())
        origin = Origin("rest", path, payloads.excerpt(raw), reply=verdict.tell)
        door.dispatcher.submit(command, origin)
        try:
            reason = await asyncio.wait_for(asyncio.shield(verdict.told), VERDICT_WAIT_S)
        except TimeoutError:  # a long queue: the verdict comes as an event, if a refusal
            body = {"v": PAYLOAD_VERSION, "accepted": path, "queued": True}
            return JSONResponse(body, status_code=202)
        if reason is not None:
            raise RefusedError(409, reason)
        return JSONResponse({"v": PAYLOAD_VERSION, "accepted": path}, status_code=202)

    def command_route(path: str, parse: payloads.Parser, summary: str, extra: Any = None) -> None:
        async def endpoint(request: Request) -> JSONResponse:
            return await submit(request, parse)

        responses: dict[int | str, dict[str, Any]] = {**ACCEPTED, **REFUSED}
        if path == "/speak":
            responses[409] = {"description": "no speech service runs, or refused at execution"}
        api.add_api_route(
            path,
            endpoint,
            methods=["POST"],
            summary=summary,
            status_code=202,
            responses=responses,
            openapi_extra=extra,
            name=path.strip("/"),
        )

    command_route(
        "/speak",
        lambda raw: payloads.parse_speak(raw, library),
        "Speak text (gesture markers such as ^start(nod) allowed), lips in sync",
        schemas.SPEAK,
    )
    command_route("/stop_speak", payloads.parse_stop_speak, "Interrupt the current utterance")
    command_route(
        "/animation",
        lambda raw: payloads.parse_animation(payloads.name_field(raw, "name"), library),
        "Play an animation from the library",
        schemas.ANIMATION,
    )
    command_route(
        "/look_at", payloads.parse_look_at, "Turn head and eyes to a point", schemas.LOOK_AT
    )
    command_route(
        "/look_at_target",
        lambda raw: payloads.parse_look_at_target(payloads.name_field(raw, "name"), library),
        "Take a gaze posture and hold it (the default posture clears)",
        schemas.LOOK_AT_TARGET,
    )
    command_route("/estop", payloads.parse_estop, "Emergency stop: hold still until reset")
    command_route("/reset", payloads.parse_reset, "Release the emergency stop")
    command_route("/stop_animation", payloads.parse_stop_animation, "Stop moves to a hold")
    command_route(
        "/cancel_animation",
        lambda raw: payloads.parse_cancel_animation(payloads.name_field(raw, "name"), library),
        "End one animation only (its oldest play); other moves go on",
        schemas.ANIMATION,
    )


def _add_stream(app: FastAPI, door: WebFrontDoor) -> None:
    feed = FrameFeed(door.runtime.engine)

    @app.websocket("/ws")
    async def stream(websocket: WebSocket) -> None:
        if not door.token_ok(websocket.query_params.get("token")):
            await websocket.close(code=1008)
            return
        await websocket.accept()
        client = Client(asyncio.get_running_loop())
        client.put(dumps(door.hello()))
        door.clients.add(client)
        # every commanded frame too, for a recording at the loop's rate (anima record)
        frames = feed.add() if websocket.query_params.get("frames") == "1" else None
        tasks = [
            asyncio.create_task(_tick(door, client, frames)),
            asyncio.create_task(_send(websocket, client)),
        ]
        try:
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            door.clients.remove(client)
            if frames is not None:
                feed.remove(frames)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


class _Verdict:
    """The dispatcher's verdict on one command, handed from its worker to the event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.told: asyncio.Future[str | None] = loop.create_future()

    def tell(self, reason: str | None) -> None:  # any thread
        # a closed loop (the server stopped) raises RuntimeError: nobody waits any more
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(self._set, reason)

    def _set(self, reason: str | None) -> None:
        if not self.told.done():
            self.told.set_result(reason)


def _bearer(request: Request) -> str | None:
    auth = request.headers.get("authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return request.query_params.get("token")


async def _tick(door: WebFrontDoor, client: Client, frames: Buffer | None = None) -> None:
    """Queue a state message every 1/updates_hz seconds, on a fixed schedule (and, for a
    client that asked, the frames sent since the last one)."""
    loop = asyncio.get_running_loop()
    period = 1.0 / door.config.updates_hz
    deadline = loop.time()
    while True:
        if frames is not None and (message := frames_message(frames)) is not None:
            client.put(dumps(message))
        client.put(dumps(door.state_message()))
        deadline += period
        delay = deadline - loop.time()
        if delay < -period:  # fell behind (a paused laptop): restart the schedule
            deadline = loop.time()
            delay = 0.0
        await asyncio.sleep(max(delay, 0.0))


async def _send(websocket: WebSocket, client: Client) -> None:
    while True:
        text = await client.queue.get()
        await websocket.send_text(text)
