"""Is that an MQTT broker? A CONNECT sent by hand and its CONNACK read, over a plain socket.

``auto`` used to take whatever accepted a TCP connection on 1883 — an HTTP server there left
MQTT dead without a word. A broker answers a CONNECT with a CONNACK (4 bytes: ``0x20 0x02``,
flags, return code) whatever it thinks of the client: a refusal (bad credentials, not
authorised) still proves an MQTT broker listens. Anything else — other bytes, silence, a closed
connection — is not one. Every step is bounded by ``timeout``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import ssl
import time
from dataclasses import dataclass
from enum import StrEnum

from anima.wire.mqtt import BrokerAddress

KEEPALIVE_S = 5  # the probe disconnects at once; a short keepalive if a DISCONNECT is lost
_CONNACK = 0x20
_DISCONNECT = b"\xe0\x00"
_REFUSALS = {
    1: "unacceptable protocol version",
    2: "identifier rejected",
    3: "server unavailable",
    4: "bad user name or password",
    5: "not authorised",
}


class Answer(StrEnum):
    MQTT = "mqtt"  # a CONNACK came back
    NOT_MQTT = "not mqtt"  # something accepted the connection but answered no CONNACK
    NOTHING = "nothing"  # no connection (refused, unreachable, unknown host)


@dataclass(frozen=True)
class ProbeResult:
    answer: Answer
    detail: str  # what was seen, for the log: "accepted", "not authorised", "sent b'HTTP/1.0'…"


def connect_packet(client_id: str, *, clean_session: bool = True) -> bytes:
    """An MQTT 3.1.1 CONNECT with no will, user name or password."""
    ident = client_id.encode("utf-8")
    flags = 0x02 if clean_session else 0x00
    variable = b"\x00\x04MQTT\x04" + bytes([flags]) + KEEPALIVE_S.to_bytes(2, "big")
    payload = len(ident).to_bytes(2, "big") + ident
    body = variable + payload
    assert len(body) < 128  # one byte of remaining length: ids here are short
    return bytes([0x10, len(body)]) + body


def probe(
    address: BrokerAddress, timeout: float = 0.5, *, tls: ssl.SSLContext | None = None
) -> ProbeResult:
    """CONNECT to ``address`` (over ``tls`` when given) and read the CONNACK, in ``timeout`` s."""
    deadline = time.monotonic() + timeout
    try:
        sock = socket.create_connection((address.host, address.port), timeout=timeout)
    except OSError as exc:
        return ProbeResult(Answer.NOTHING, exc.strerror or str(exc) or type(exc).__name__)
    if tls is not None:
        try:
            sock = tls.wrap_socket(sock, server_hostname=address.host)
        except (OSError, ssl.SSLError) as exc:
            sock.close()
            return ProbeResult(Answer.NOT_MQTT, f"TLS handshake failed: {exc}")
    with sock:
        try:
            sock.sendall(connect_packet(f"anima-probe-{os.getpid()}"))
            data = b""
            while len(data) < 4:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                sock.settimeout(left)
                chunk = sock.recv(4 - len(data))
                if not chunk:
                    break
                data += chunk
        except TimeoutError:
            if data:
                return ProbeResult(Answer.NOT_MQTT, f"sent {data[:16]!r}, then nothing")
            return ProbeResult(Answer.NOT_MQTT, f"no CONNACK within {timeout:g} s")
        except OSError as exc:
            return ProbeResult(Answer.NOT_MQTT, f"connection failed: {exc.strerror or exc}")
        if len(data) < 4 or data[0] != _CONNACK or data[1] != 2:
            shown = repr(data[:16]) if data else "nothing"
            return ProbeResult(Answer.NOT_MQTT, f"answered {shown} instead of a CONNACK")
        code = data[3]
        if code == 0:
            with contextlib.suppress(OSError):  # polite: no "connection lost" in its log
                sock.sendall(_DISCONNECT)
            return ProbeResult(Answer.MQTT, "accepted")
        return ProbeResult(Answer.MQTT, _REFUSALS.get(code, f"refused with code {code}"))
