"""Attaching each front door to a runtime (named in :data:`anima.frontdoors.registry.DOORS`)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from importlib.util import find_spec
from typing import TYPE_CHECKING

from anima.parts import Deferred

if TYPE_CHECKING:
    from anima.parts import Part
    from anima.runtime import Runtime

log = logging.getLogger(__name__)

Report = Callable[[str], None]  # a line for the person who started it (anima serve prints it)


def attach_mqtt(runtime: Runtime, say: Report) -> None:
    """The MQTT door on the configured broker, or on one it starts (stopped after the door),
    both made once the loop runs: the door's modules (~100 ms of imports) and the broker's
    choice (a probe of each candidate, or starting Mosquitto: ~30 ms) come after the first
    tick (:class:`~anima.parts.Deferred`)."""

    def make() -> list[Part]:
        from anima.frontdoors.mqtt.choice import choose_broker
        from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor
        from anima.wire.mqtt import tls_context

        m = runtime.config.mqtt
        choice = choose_broker(
            m.broker, list(m.candidates), m.embedded_port, m.embedded_broker, tls=tls_context(m)
        )
        try:
            door = MqttFrontDoor(runtime, m, choice.address)
        except BaseException:
            if choice.owned is not None:
                choice.owned.stop()  # started by the choice: not left running
            raise
        kind = "broker" if choice.owned is None else f"{choice.kind} broker started"
        say(f"anima MQTT: {kind} {choice.address}, topics {m.prefix}/agent/…")
        return [door] if choice.owned is None else [choice.owned, door]  # the broker first

    runtime.attach(Deferred(make))


def attach_web(runtime: Runtime, say: Report) -> None:
    """The dashboard and REST API; without the web extra, a warning and no dashboard."""
    # whether they are installed, without importing them (0.25 s): the door's prepare imports
    # them, once the loop runs
    if find_spec("fastapi") is None or find_spec("uvicorn") is None:
        # on by default: a core install without the web extra still serves, and says why not
        log.warning("no dashboard: install anima[web] (fastapi, uvicorn), or pass --no-web")
        return
    from anima.frontdoors.web import WebFrontDoor

    runtime.attach(WebFrontDoor(runtime, runtime.config.web))
