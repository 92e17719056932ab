"""What the robot sees, over REST: ``GET /api/vision/frame.jpg``, the newest frame its face
detector ran on with the faces boxed (the one attention looks at in orange): the dashboard's
camera view (docs/attention.md). 409 without a camera, or before its first frame (as
``/api/humanoid`` answers without a humanoid)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import APIRouter
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

if TYPE_CHECKING:
    from anima.frontdoors.web.access import RefusedError as _Refused
    from anima.runtime import Runtime


def add_vision_routes(api: APIRouter, runtime: Runtime, refused: type[_Refused]) -> None:
    @api.get(
        "/vision/frame.jpg",
        summary="The newest frame the face detector saw, faces boxed (JPEG)",
        response_class=Response,
        responses={
            200: {"content": {"image/jpeg": {}}},
            409: {"description": "no camera, or no frame yet"},
        },
    )
    async def frame() -> Response:
        seen = runtime.attention
        if seen is None or seen.pipeline is None:
            raise refused(409, "no camera (vision.source: none): docs/attention.md")
        jpeg = await run_in_threadpool(seen.view)  # encoding takes a few ms: off the loop
        if jpeg is None:
            raise refused(409, "the camera has not delivered a frame yet")
        return Response(jpeg, media_type="image/jpeg", headers={"Cache-Control": "no-store"})
