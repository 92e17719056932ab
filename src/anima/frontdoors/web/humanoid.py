"""The humanoid over REST: mode, stand motions, stand posture, walking and state.

Payloads are parsed by :mod:`anima.wire.humanoid` into typed commands, as MQTT's are, and
carried out by the runtime's ``execute``: the robot's client reads its state first and refuses
what its enable lists do not allow now; the answer is the robot's (202), or the refusal with its
reason (400 bad value, 409 not allowed now or no humanoid). The gRPC round trip runs in a worker
thread, never on the server's event loop.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from anima import commands as cmd
from anima.errors import AnimaError, CommandNotAllowedError, HumanoidError, InvalidCommandError
from anima.frontdoors.web import schemas
from anima.humanoid.spec import POSTURE
from anima.wire import PAYLOAD_VERSION
from anima.wire.humanoid import POSTURE_KEYS, parse_humanoid
from anima.wire.jsontypes import JsonObject

if TYPE_CHECKING:
    from anima.frontdoors.web.access import RefusedError as _Refused
    from anima.runtime import Runtime

_T = TypeVar("_T")


def posture_ranges() -> dict[str, list[float]]:
    """The documented stand-posture ranges, for the page's sliders."""
    return {k: [POSTURE[f"stand_{k}"].low, POSTURE[f"stand_{k}"].high] for k in POSTURE_KEYS}


def add_humanoid_routes(
    api: APIRouter, runtime: Runtime, refused: Callable[[int, str], _Refused]
) -> None:
    async def ask(fn: Callable[[], _T]) -> _T:
        try:
            return await run_in_threadpool(fn)
        except CommandNotAllowedError as exc:
            raise refused(409, str(exc)) from None
        except InvalidCommandError as exc:
            raise refused(400, str(exc)) from None
        except (HumanoidError, AnimaError) as exc:
            raise refused(409, str(exc)) from None

    def command_route(command: str, summary: str) -> None:
        async def endpoint(request: Request) -> JSONResponse:
            try:
                parsed = parse_humanoid(command, await request.body())
            except AnimaError as exc:
                raise refused(400, str(exc)) from None
            answer = await ask(lambda: runtime.execute(parsed).answer)
            return JSONResponse({"v": PAYLOAD_VERSION, "answer": answer}, status_code=202)

        api.add_api_route(
            f"/humanoid/{command}",
            endpoint,
            methods=["POST"],
            status_code=202,
            summary=summary,
            openapi_extra=schemas.HUMANOID[command],
            name=f"humanoid_{command}",
        )

    command_route("mode", "Switch the humanoid's mode")
    command_route("motion", "Run a stand motion")
    command_route("posture", "Set the stand posture (rad, rad, rad, m)")
    command_route(
        "speed", "Walk at a velocity (m/s, m/s, rad/s) until told otherwise; needs Walk or Run"
    )

    @api.get(
        "/humanoid/state",
        summary="The humanoid's own state (GetRobotState's fields)",
        response_model=None,
    )
    async def state() -> JsonObject:
        s = await ask(lambda: runtime.execute(cmd.ReadHumanoidState()))
        return {"v": PAYLOAD_VERSION, **dataclasses.asdict(s)}

    @api.get(
        "/humanoid/ranges", summary="The stand posture's documented ranges", response_model=None
    )
    def ranges() -> JsonObject:
        return {"v": PAYLOAD_VERSION, "posture": posture_ranges()}
