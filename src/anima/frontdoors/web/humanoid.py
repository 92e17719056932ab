"""The humanoid over REST: mode, stand motions, stand posture, walking and state, via AdamClient.

Each call goes through the runtime's :class:`~anima.humanoid.client.AdamClient`, which reads the
robot's state first and refuses what its enable lists do not allow now; the answer is the
robot's (202), or the refusal with its reason (400 bad value, 409 not allowed now or no
humanoid). The gRPC round trip runs in a worker thread, never on the server's event loop.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from anima.errors import AnimaError, CommandNotAllowedError, HumanoidError, InvalidCommandError
from anima.frontdoors.state import PAYLOAD_VERSION
from anima.humanoid.spec import POSTURE

if TYPE_CHECKING:
    from anima.frontdoors.web.app import RefusedError as _Refused
    from anima.humanoid.client import AdamClient
    from anima.runtime import Runtime

_POSTURE_KEYS = ("pitch", "roll", "yaw", "height")
_SPEED_KEYS = ("x", "y", "yaw")
_T = TypeVar("_T")


def posture_ranges() -> dict[str, list[float]]:
    """The documented stand-posture ranges, for the page's sliders."""
    return {k: [POSTURE[f"stand_{k}"].low, POSTURE[f"stand_{k}"].high] for k in _POSTURE_KEYS}


def add_humanoid_routes(
    api: APIRouter, runtime: Runtime, refused: Callable[[int, str], _Refused]
) -> None:
    async def body(request: Request) -> dict[str, Any]:
        try:
            data = json.loads(await request.body() or b"{}")
        except ValueError as exc:
            raise refused(400, f"invalid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise refused(400, "expected a JSON object")
        return data

    async def ask(fn: Callable[[AdamClient], _T]) -> _T:
        link = runtime.humanoid
        if link is None or link.client is None:
            raise refused(409, "no humanoid is linked (anima serve --humanoid sim|adam)")
        client = link.client
        try:
            return await run_in_threadpool(fn, client)
        except CommandNotAllowedError as exc:
            raise refused(409, str(exc)) from None
        except InvalidCommandError as exc:
            raise refused(400, str(exc)) from None
        except (HumanoidError, AnimaError) as exc:
            raise refused(409, str(exc)) from None

    async def call(fn: Callable[[AdamClient], object]) -> JSONResponse:
        answer = await ask(fn)
        return JSONResponse({"v": PAYLOAD_VERSION, "answer": str(answer)}, status_code=202)

    def numbers(data: dict[str, Any], keys: tuple[str, ...]) -> list[float]:
        values: list[float] = []
        for key in keys:
            v = data.get(key)
            if isinstance(v, bool) or not isinstance(v, int | float):
                raise refused(400, f"{key!r} must be a number")
            values.append(float(v))
        return values

    def text(data: dict[str, Any], key: str) -> str:
        if key not in data:
            raise refused(400, f"missing field {key!r} (a string)")
        value = data[key]
        if not isinstance(value, str) or not value.strip():
            raise refused(400, f"{key!r} must be a non-empty string, got {value!r}")
        return value.strip()

    @api.post("/humanoid/mode", status_code=202, summary="Switch the humanoid's mode")
    async def mode(request: Request) -> JSONResponse:
        name = text(await body(request), "mode")
        return await call(lambda c: c.set_mode(name))

    @api.post("/humanoid/motion", status_code=202, summary="Run a stand motion")
    async def motion(request: Request) -> JSONResponse:
        name = text(await body(request), "motion")
        return await call(lambda c: c.stand_motion(name))

    @api.post("/humanoid/posture", status_code=202, summary="Set the stand posture")
    async def posture(request: Request) -> JSONResponse:
        pitch, roll, yaw, height = numbers(await body(request), _POSTURE_KEYS)
        return await call(lambda c: c.posture(pitch, roll, yaw, height))

    @api.post(
        "/humanoid/speed",
        status_code=202,
        summary="Walk at a velocity (m/s, m/s, rad/s) until told otherwise; needs Walk or Run",
    )
    async def speed(request: Request) -> JSONResponse:
        x, y, yaw = numbers(await body(request), _SPEED_KEYS)
        return await call(lambda c: c.speed(x, y, yaw, continuous=True))

    @api.get("/humanoid/state", summary="The humanoid's own state (GetRobotState's fields)")
    async def state() -> dict[str, Any]:
        s = await ask(lambda c: c.state())
        return {"v": PAYLOAD_VERSION, **dataclasses.asdict(s)}

    @api.get("/humanoid/ranges", summary="The stand posture's documented ranges")
    def ranges() -> dict[str, Any]:
        return {"v": PAYLOAD_VERSION, "posture": posture_ranges()}
