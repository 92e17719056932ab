"""What the robot remembers, and who it is, over REST (token-guarded like every ``/api`` route;
docs/memory.md, docs/web.md):

- ``GET /api/memory[?who=&search=&limit=]``: the person talking, how many memories, the newest
  (or those sharing words with ``search``);
- ``GET /api/memory/export``: every memory, replaced ones too (``anima memory import`` reads it);
- ``GET /api/memory/{id}``; ``DELETE /api/memory/{id}`` (with what it replaced);
- ``DELETE /api/memory?who=NAME`` (everything about a person) or ``?all=true`` (everything);
- ``POST /api/memory/import`` with an export's JSON list (each record checked first: a bad one
  adds nothing; within the request body's limit — larger files: ``anima memory import``);
- ``GET /api/persona``: the voice agent's persona.

409 when the voice agent is not running or its memory is off (``anima memory …`` reads the file
without it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from anima.errors import AnimaError
from anima.wire import PAYLOAD_VERSION

if TYPE_CHECKING:
    from anima.agent.remembering import Remembering
    from anima.frontdoors.web.access import RefusedError as _Refused
    from anima.runtime import Runtime

MAX_LIMIT = 1000
T = TypeVar("T")


def add_memory_routes(api: APIRouter, runtime: Runtime, refused: type[_Refused]) -> None:
    def memory() -> Remembering:
        held = getattr(runtime.agent, "memory", None)
        if held is None:
            raise refused(
                409, "no memory: the voice agent is not running (anima serve --agent) or "
                "agent.memory.enabled is false; anima memory … reads the file",
            )  # fmt: skip
        return held  # type: ignore[no-any-return]

    @api.get("/memory", summary="What the robot remembers: the person talking, the newest")
    async def listed(
        who: str | None = None, search: str | None = None, limit: str = "50"
    ) -> dict[str, Any]:
        count = _number(refused, limit, "limit", MAX_LIMIT)
        held = memory()

        def read() -> dict[str, Any]:
            store = held.store
            found = (
                store.search(search, who=[who] if who else None, limit=count)
                if search
                else store.recent(who=who, limit=count)
            )
            return {
                "v": PAYLOAD_VERSION, "person": held.person, "count": store.count(),
                "memories": [m.as_dict() for m in found],
            }  # fmt: skip

        return await _guarded(refused, read)

    @api.get("/memory/export", summary="Every memory, replaced ones too (a JSON list)")
    async def exported() -> list[dict[str, Any]]:
        held = memory()
        return await _guarded(refused, held.store.export)

    @api.get("/memory/{memory_id}", summary="One memory")
    async def one(memory_id: str) -> dict[str, Any]:
        held = memory()
        wanted = _number(refused, memory_id, "a memory's id", 2**62)
        found = await _guarded(refused, lambda: held.store.get(wanted))
        if found is None:
            raise refused(404, f"no memory #{wanted}")
        return {"v": PAYLOAD_VERSION, **found.as_dict()}

    @api.delete("/memory/{memory_id}", summary="Forget one memory (and what it replaced)")
    async def forget_one(memory_id: str) -> dict[str, Any]:
        held = memory()
        wanted = _number(refused, memory_id, "a memory's id", 2**62)
        gone = await _guarded(refused, lambda: held.store.forget([wanted]))
        if not gone:
            raise refused(404, f"no memory #{wanted}")
        return {"v": PAYLOAD_VERSION, "forgotten": gone}

    @api.delete("/memory", summary="Forget everything about a person (?who=) or all (?all=true)")
    async def forget_many(who: str | None = None, all: str | None = None) -> dict[str, Any]:
        everything = all is not None and _flag(refused, all, "all")
        if (who is None) == (not everything):
            raise refused(400, "say what to forget: ?who=NAME or ?all=true (one of them)")
        held = memory()
        if everything:
            gone = await _guarded(refused, held.store.clear)
        else:
            assert who is not None
            gone = await _guarded(refused, lambda: held.forget(who=who, everything=True).rows)
        return {"v": PAYLOAD_VERSION, "forgotten": gone}

    @api.post("/memory/import", summary="Add an export's memories (all checked first)")
    async def imported(request: Request) -> dict[str, Any]:
        held = memory()
        try:
            records = json.loads(await request.body())
        except ValueError:
            raise refused(400, "the body must be a JSON list of memories") from None
        added = await _guarded(refused, lambda: held.store.import_records(records))
        return {"v": PAYLOAD_VERSION, "imported": added}

    @api.get("/persona", summary="Who the voice agent is (its persona file)")
    async def persona() -> dict[str, Any]:
        held = getattr(runtime.agent, "persona", None)
        if held is None:
            raise refused(409, "no persona: the voice agent is not running (anima serve --agent)")
        return {"v": PAYLOAD_VERSION, **held.as_dict()}


async def _guarded(refused: type[_Refused], work: Callable[[], T]) -> T:
    """``work()`` off the event loop (SQLite waits on the disk); an anima error → 400."""
    try:
        return await run_in_threadpool(work)
    except AnimaError as exc:
        raise refused(400, str(exc)) from None


def _number(refused: type[_Refused], text: str, what: str, most: int) -> int:
    """A query or path number from 1 to ``most``, refused in anima's words (not FastAPI's
    422: every refusal of the API has one shape)."""
    try:
        value = int(text)
    except ValueError:
        raise refused(400, f"{what} must be an integer, got {text[:20]!r}") from None
    if not 1 <= value <= most:
        raise refused(400, f"{what} must be 1 to {most}, got {value}")
    return value


def _flag(refused: type[_Refused], text: str, what: str) -> bool:
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise refused(400, f"{what} must be true or false, got {text[:20]!r}")
