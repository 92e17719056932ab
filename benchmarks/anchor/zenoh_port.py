"""Moves reachy-mini 1.2.11's Zenoh link off its fixed port, for the daemon and the anchor alike.

The SDK hard-codes ``tcp/localhost:7447`` in its Zenoh server (the daemon) and client (the
anchor's ``ReachyMini``); another daemon on this machine may hold that port. Both processes
call :func:`use_port` before the SDK opens a session: every Zenoh config the SDK builds then
names ``tcp/127.0.0.1:<port>`` instead. Only the address changes; what is sent does not.
"""

from __future__ import annotations

import os

import zenoh

ENV = "ANCHOR_ZENOH_PORT"  # the port both processes agree on, set by side_by_side.py
SDK_ENDPOINT = "tcp/localhost:7447"


def use_port(port: int) -> None:
    """Make every ``zenoh.Config.from_json5`` of this process name ``port`` on 127.0.0.1."""
    original = zenoh.Config.from_json5
    ours = f"tcp/127.0.0.1:{port}"

    def from_json5(text: str) -> zenoh.Config:
        return original(text.replace(SDK_ENDPOINT, ours))

    zenoh.Config.from_json5 = from_json5  # type: ignore[method-assign,unused-ignore]


def use_port_from_env() -> int:
    """:func:`use_port` with the port in ``ANCHOR_ZENOH_PORT``; returns it."""
    port = int(os.environ[ENV])
    use_port(port)
    return port
