"""Which MQTT broker ``anima serve`` uses: one that answers, or one it starts and owns.

``auto`` (the default) sends each of ``mqtt.candidates`` an MQTT CONNECT and takes the first
that answers with a CONNACK; something listening that is not a broker (an HTTP server on 1883)
is skipped with a warning naming it. When none answers, anima starts its own broker on
127.0.0.1 (``mqtt.embedded_port``, another free port if that one is taken):

- Debian's **Mosquitto** when its binary is installed (``make run`` installs it): a child process
  with its own config, stopped with the runtime and ended by the kernel if anima dies;
- otherwise **amqtt** in-process, the fallback (MQTT 3.1.1 only, ~5k msg/s; see ``broker.py``).

``embedded`` skips the candidates; ``HOST:PORT`` names the broker.
"""

from __future__ import annotations

import logging
import ssl
from dataclasses import dataclass

from anima.errors import ConfigError
from anima.frontdoors.mqtt.broker import EmbeddedBroker, answers, free_port
from anima.frontdoors.mqtt.mosquitto import (
    Mosquitto,
    MosquittoError,
    MosquittoNotFoundError,
    find_mosquitto,
)
from anima.frontdoors.mqtt.probe import Answer, probe
from anima.wire.mqtt import BrokerAddress

log = logging.getLogger(__name__)

EMBEDDED_KINDS = ("auto", "mosquitto", "amqtt")


class OwnedMosquitto:
    """The Mosquitto ``anima serve`` started: ``stop()`` ends it and removes its folder."""

    def __init__(self, mosquitto: Mosquitto) -> None:
        self.mosquitto = mosquitto

    @property
    def address(self) -> BrokerAddress:
        return self.mosquitto.address

    @property
    def running(self) -> bool:
        return self.mosquitto.running

    def prepare(self) -> None:
        """Nothing to load: the broker is a process of its own."""

    def start(self) -> None:
        self.mosquitto.start()

    def stop(self, timeout: float = 5.0) -> None:
        self.mosquitto.close(timeout)


@dataclass(frozen=True)
class BrokerChoice:
    address: BrokerAddress
    owned: OwnedMosquitto | EmbeddedBroker | None  # the broker we started, to stop at the end
    kind: str  # "broker" (found), "Mosquitto" or "amqtt" (started here), for the log


def choose_broker(
    mode: str,
    candidates: list[str],
    embedded_port: int = 1883,
    embedded: str = "auto",
    *,
    tls: ssl.SSLContext | None = None,
) -> BrokerChoice:
    """``auto``: first candidate that answers MQTT, else start one; ``embedded``; ``HOST:PORT``.

    ``tls``: the candidates are probed over TLS (the door's ``mqtt.tls_*`` settings).
    """
    if embedded not in EMBEDDED_KINDS:
        raise ConfigError(f"mqtt.embedded_broker must be auto, mosquitto or amqtt: {embedded!r}")
    if mode == "embedded":
        return start_broker(embedded_port, embedded)
    if mode != "auto":
        return BrokerChoice(BrokerAddress.parse(mode), None, "broker")
    for text in candidates:
        address = BrokerAddress.parse(text)
        result = probe(address, tls=tls)
        if result.answer is Answer.MQTT:
            log.info("using the MQTT broker at %s (CONNECT: %s)", address, result.detail)
            return BrokerChoice(address, None, "broker")
        if result.answer is Answer.NOT_MQTT:
            log.warning(
                "%s accepts connections but is not an MQTT broker (%s): skipped",
                address,
                result.detail,
            )
    log.info("no MQTT broker answers (%s): starting one", ", ".join(candidates) or "none listed")
    return start_broker(embedded_port, embedded)


def start_broker(port: int, kind: str = "auto") -> BrokerChoice:
    """Start Mosquitto (``auto`` when installed, or ``mosquitto``) or amqtt on 127.0.0.1."""
    if answers(BrokerAddress("127.0.0.1", port)):
        taken, port = port, free_port()
        log.info("port %d is taken: the broker listens on %d", taken, port)
    if kind != "amqtt":
        binary = find_mosquitto()
        if binary is not None:
            return _start_mosquitto(port, binary)
        if kind == "mosquitto":
            raise MosquittoNotFoundError()
        log.warning(
            "mosquitto is not installed: using the in-process amqtt broker instead "
            "(slower under floods; Debian: apt-get install mosquitto)"
        )
    broker = EmbeddedBroker(port)
    broker.start()
    return BrokerChoice(broker.address, broker, "amqtt")


def _start_mosquitto(port: int, binary: str) -> BrokerChoice:
    # die_with_parent: the kernel ends it if anima dies; started on the caller's (main) thread
    mosquitto = Mosquitto(port, binary=binary, die_with_parent=True)
    try:
        mosquitto.start()
    except MosquittoError as exc:  # the port was taken between the check and the bind
        log.info("mosquitto could not use port %d (%s): trying a free one", port, exc)
        mosquitto.close()
        mosquitto = Mosquitto(binary=binary, die_with_parent=True)
        mosquitto.start()
    log.info("started Mosquitto (%s) on %s", binary, mosquitto.address)
    return BrokerChoice(mosquitto.address, OwnedMosquitto(mosquitto), "Mosquitto")
