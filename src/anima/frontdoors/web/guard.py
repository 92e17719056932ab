"""Which browser requests the web door serves: the Host/Origin guard and JSON-only commands.

One ASGI middleware in front of the whole app (the page, ``/api``, ``/ws``, ``/mcp``):

- On a loopback host (``web.host`` 127.0.0.1, localhost, ::1), a page elsewhere must not reach
  the robot through the visitor's browser. A ``Host`` that does not name this server (a loopback
  name with the served port, or with no port) is answered **421** (a DNS-rebinding page reaches
  the socket under its own name); an ``Origin`` that is not this server's (another site,
  another port, ``null`` from a sandboxed frame or a file, anything but
  ``scheme://host[:port]``) is answered **403**.
  A request without ``Origin`` (curl, the SDK, an MCP client) is not a browser's cross-site
  request: it goes on. Browsers send ``Origin`` on every POST and every WebSocket handshake.
- Off loopback the bearer token (``web.token``, required there) is what protects: a page
  elsewhere does not know it, and the door sends no CORS headers, so a browser lets no other
  site read an answer or send the ``Authorization`` header.
- Everywhere, a POST under ``/api/`` carries its body as ``application/json`` (a ``charset``
  parameter allowed); a body of another type, or of no declared type, is answered **415**. A
  browser sends ``text/plain`` and form bodies cross-site without asking first; JSON it does
  not. A POST with no body at all (``curl -X POST …/api/estop``) needs no type.

Refusals read as every refusal of the door: ``{"v":1,"path":…,"reason":…}``; a WebSocket
handshake refused gets the same HTTP answer (or a close, on a server without the ASGI
denial-response extension).
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from anima.wire import PAYLOAD_VERSION

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
JSON_TYPE = "application/json"
BODYLESS_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_loopback(host: str) -> bool:
    """``host`` (a name or an address, IPv6 without brackets) is this machine's loopback."""
    name = host.lower().removesuffix(".")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Authority:
    """A host and port as a request names them (lower-case host, IPv6 without brackets)."""

    host: str
    port: int | None  # None: not given


def parse_authority(text: str) -> Authority | None:
    """``host``, ``host:port``, ``[v6]`` or ``[v6]:port``; None when it is anything else
    (user info, a path, an empty host, a port that is not 1-65535)."""
    if not text or any(c in text for c in "@/\\?# \t") or not text.isascii():
        return None
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            return None
        host, rest = text[1:end], text[end + 1 :]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            return None
    else:
        host, sep, port_text = text.partition(":")
        rest = sep + port_text
        if not host:
            return None
    if not rest:
        return Authority(host.lower(), None)
    if not rest.startswith(":") or not rest[1:].isdigit() or len(rest) > 6:
        return None
    port = int(rest[1:])
    if not 0 < port < 65536:
        return None
    return Authority(host.lower(), port)


def parse_origin(text: str) -> tuple[str, Authority] | None:
    """An ``Origin`` header as browsers send it: ``scheme://host[:port]`` and nothing more
    (no path, user info, query or trailing slash); None otherwise (``null`` included)."""
    scheme, sep, rest = text.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in ("http", "https"):
        return None
    authority = parse_authority(rest)
    if authority is None:
        return None
    port = DEFAULT_PORTS[scheme] if authority.port is None else authority.port
    return scheme, Authority(authority.host, port)


def media_type(value: str) -> str:
    """The media type of a ``Content-Type`` value, lower-case, without parameters."""
    return value.partition(";")[0].strip().lower()


class Guard:
    """ASGI: refuse what a foreign page could send (see the module docstring) before the app
    reads anything. ``loopback``: the door serves on a loopback host (the Host/Origin rule)."""

    def __init__(self, app: ASGIApp, *, loopback: bool) -> None:
        self.app = app
        self.loopback = loopback

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers: dict[bytes, bytes] = {}
        for key, value in scope.get("headers", []):
            if key in headers:  # a repeated Host, Origin or Content-Type: never ours
                headers[key] = b"\x00"
            else:
                headers[key] = value
        refusal = self.refusal(scope, headers)
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, reason = refusal
        refused = {"v": PAYLOAD_VERSION, "path": scope.get("path", ""), "reason": reason}
        # as the door's other refusals are encoded (Starlette's JSONResponse)
        body = json.dumps(refused, ensure_ascii=False, separators=(",", ":"))
        await _refuse(scope, receive, send, status, body.encode())

    def refusal(self, scope: Scope, headers: dict[bytes, bytes]) -> tuple[int, str] | None:
        """(status, reason) when the request is refused, else None."""
        if self.loopback:
            refused = self._foreign(scope, headers)
            if refused is not None:
                return refused
        if scope["type"] == "http":
            return _not_json(scope, headers)
        return None

    def _foreign(self, scope: Scope, headers: dict[bytes, bytes]) -> tuple[int, str] | None:
        server = scope.get("server")
        served = server[1] if server else None
        host_text = headers.get(b"host", b"").decode("latin-1")
        host = parse_authority(host_text)
        if (
            host is None
            or not is_loopback(host.host)
            or (host.port is not None and served is not None and host.port != served)
        ):
            return 421, (
                f"Host {host_text!r} is not this server: on a loopback host only "
                f"127.0.0.1, localhost or [::1] with port {served} are served "
                "(a page elsewhere may not reach the robot through a rebound name)"
            )
        origin_raw = headers.get(b"origin")
        if origin_raw is None:
            return None  # not a browser's cross-site request: curl, the SDK, an MCP client
        origin_text = origin_raw.decode("latin-1")
        origin = parse_origin(origin_text)
        if (
            origin is None
            or not is_loopback(origin[1].host)
            or (served is not None and origin[1].port != served)
        ):
            return 403, (
                f"Origin {origin_text!r} is not this server: only pages served here "
                f"(http://127.0.0.1:{served}, http://localhost:{served}) may drive the robot"
            )
        return None


# curl -d sends a form type: the hint a newcomer typing the docs' older examples needs
CURL_HINT = " (with curl: --json '{…}', or -H 'Content-Type: application/json')"


def _not_json(scope: Scope, headers: dict[bytes, bytes]) -> tuple[int, str] | None:
    if scope["method"] in BODYLESS_METHODS or not scope["path"].startswith("/api/"):
        return None
    declared = headers.get(b"content-type")
    if declared is None:
        length = headers.get(b"content-length", b"0").strip()
        if length == b"0" and b"transfer-encoding" not in headers:
            return None  # no body at all: estop, reset, stop_* need none
        return 415, f"a body needs 'Content-Type: {JSON_TYPE}' (none was given){CURL_HINT}"
    kind = media_type(declared.decode("latin-1"))
    if kind != JSON_TYPE:
        return 415, f"the body must be {JSON_TYPE}, not {kind or 'an empty type'!r}{CURL_HINT}"
    return None


async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, body: bytes) -> None:
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
        return
    await receive()  # the handshake's websocket.connect
    if "websocket.http.response" in scope.get("extensions", {}):
        start = {"type": "websocket.http.response.start", "status": status, "headers": headers}
        await send(start)
        await send({"type": "websocket.http.response.body", "body": body})
    else:
        await send({"type": "websocket.close", "code": 1008})
