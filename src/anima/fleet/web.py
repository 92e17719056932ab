"""``anima fleet serve``: the fleet side by side in a browser, with an emergency stop for one
robot or all (docs/fleet.md). A :class:`~anima.fleet.FleetWatcher` keeps the view live; the page
polls ``GET /api/fleet`` and posts ``estop`` or ``reset`` to ``POST /api/fleet/{command}`` with
the robots' prefixes (none: every robot online). Off loopback it needs a token, as the
dashboard does (``--token``; ``Authorization: Bearer …`` or ``?token=``); without one (so on
loopback) the dashboard's Host/Origin guard stands in front of it, so a page on another site
cannot release every robot's emergency stop (:mod:`anima.frontdoors.web.guard`). The token
follows ``web.token``'s rule: an empty one is no token; a blank one, or one with a space at its
ends or a control character, is refused (:func:`check_exposure`)."""

from pathlib import Path
from typing import Any

from anima.config.bounds import secret
from anima.errors import ConfigError, MissingDependencyError
from anima.fleet import FleetWatcher, send
from anima.wire.jsontypes import JsonObject

STATIC = Path(__file__).parent / "static"
COMMANDS = ("estop", "reset")
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def make_app(watcher: FleetWatcher, *, token: str | None = None) -> Any:
    """The FastAPI application (the web extra's); an empty ``token`` is none (the guard stays)."""
    token = token or None
    try:
        from fastapi import Depends, FastAPI, HTTPException, Request
        from fastapi.responses import FileResponse
    except ImportError as exc:
        raise MissingDependencyError("fastapi", "web") from exc
    from anima.frontdoors.web.access import token_matches
    from anima.frontdoors.web.guard import Guard

    def check(request: Request) -> None:
        given = request.query_params.get("token")
        header = request.headers.get("authorization", "")
        if header.lower().startswith("bearer "):
            given = header[7:]
        if token is not None and not token_matches(token, given):
            raise HTTPException(401, "a token is needed: ?token=… or Authorization: Bearer …")

    app = FastAPI(title="anima fleet", docs_url=None, redoc_url=None)
    # no token: served on loopback (check_exposure), where Host and Origin are what protect
    app.add_middleware(Guard, loopback=token is None)

    @app.get("/", include_in_schema=False)
    def page() -> Any:
        return FileResponse(STATIC / "fleet.html")

    @app.get("/api/fleet", dependencies=[Depends(check)], response_model=None)
    def fleet() -> list[JsonObject]:
        return [{**r.to_json(), "row": r.row(), "online": r.online} for r in watcher.robots()]

    @app.post(
        "/api/fleet/{command}",
        status_code=202,
        dependencies=[Depends(check)],
        response_model=None,
    )
    def command(command: str, body: dict[str, Any] | None = None) -> JsonObject:
        if command not in COMMANDS:
            raise HTTPException(404, f"unknown command {command!r} (commands: estop, reset)")
        robots = watcher.robots()
        wanted = (body or {}).get("robots")
        if wanted is None:
            chosen = [r.prefix for r in robots if r.online]
        elif isinstance(wanted, list) and all(isinstance(p, str) for p in wanted):
            known = {r.prefix for r in robots}
            unknown = [p for p in wanted if p not in known]
            if unknown:
                raise HTTPException(404, f"no robot {', '.join(unknown)[:200]} on the broker")
            chosen = wanted
        else:
            raise HTTPException(422, "robots must be a list of prefixes, or absent for all")
        if not chosen:
            raise HTTPException(409, "no robot online")
        topics = send(watcher.address, chosen, command, "", watcher.credentials)
        return {"sent": topics}

    return app


def check_exposure(host: str, token: str | None) -> None:
    """Refuse a token ``web.token`` would refuse (blank: one space passed for a token that
    ``?token=%20`` then matched), and no token off loopback."""
    if token:  # "" is no token, as with web.token
        try:
            secret("fleet", token=token)
        except ConfigError as exc:
            raise ConfigError(f"anima fleet serve: {exc} (--token, ANIMA_FLEET_TOKEN)") from None
    if host not in LOOPBACK and not token:
        raise ConfigError(
            f"anima fleet serve on {host}: anyone who reaches it can estop every robot; give it "
            "a --token (or serve it on 127.0.0.1)"
        )
