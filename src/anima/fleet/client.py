"""The fleet's MQTT client: one connection to the broker, and the fleet's error."""

from __future__ import annotations

import secrets
import threading
from typing import Any

from anima.errors import AnimaError
from anima.wire.mqtt import BrokerAddress, Credentials, connack_reason, new_client


class FleetError(AnimaError):
    """The broker could not be reached or refused us, or no robot matched."""


def connect(credentials: Credentials, address: BrokerAddress, timeout: float) -> Any:
    """A paho client connected to ``address`` (its network loop started); FleetError saying
    why when the broker does not answer or refuses within ``timeout``."""
    client = new_client(credentials, client_id=f"anima-fleet-{secrets.token_hex(4)}")
    connected = threading.Event()
    refused: list[str] = []

    def on_connect(_c: Any, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        if reason.is_failure:
            refused.append(connack_reason(reason))
        connected.set()

    client.on_connect = on_connect
    client.connect_timeout = timeout
    try:
        client.connect(address.host, address.port, keepalive=10)
    except (OSError, ValueError) as exc:
        raise FleetError(f"no MQTT broker answers at {address}: {exc}") from None
    client.loop_start()
    if not connected.wait(timeout) or refused:
        client.loop_stop()
        why = refused[0] if refused else f"no CONNACK in {timeout:g} s"
        raise FleetError(f"the broker at {address} refused anima fleet: {why}")
    return client
