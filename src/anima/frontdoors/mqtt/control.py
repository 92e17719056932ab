"""One message on ``<prefix>/agent/control/…``: a command for the dispatcher, or a refusal.

:class:`ControlRoute` decides on paho's thread, quickly and without I/O, in this order: a
message that ended paho's network thread once (redelivered, QoS 1) is refused; a command made
stale by a long outage is refused (``session.py``; estop never is); ``humanoid/<command>`` goes
to the humanoid worker; an unknown leaf is refused naming the known ones; the payload is
parsed by its leaf's parser; a costly request past its rate is refused (``costly.py``);
anything else is submitted to the dispatcher.
"""

from __future__ import annotations

from collections.abc import Callable

from anima.errors import AnimaError
from anima.frontdoors.dispatch import CommandDispatcher, Origin
from anima.frontdoors.mqtt.costly import CostlyLimiter
from anima.frontdoors.mqtt.humanoid_worker import HumanoidWorker
from anima.frontdoors.mqtt.session import Backlog
from anima.wire.humanoid import COMMANDS as HUMANOID_COMMANDS
from anima.wire.payloads import Parser, excerpt

HUMANOID_LEAF = "humanoid/"  # control/humanoid/<command>


class ControlRoute:
    """The control topics' route (module doc); ``refuse(topic, payload, reason)`` answers on
    the error topic."""

    def __init__(
        self,
        control: str,
        parsers: dict[str, Parser],
        *,
        dispatcher: CommandDispatcher,
        backlog: Backlog,
        humanoid: HumanoidWorker,
        refuse: Callable[[str, bytes, str], None],
    ) -> None:
        self.control = control  # the topics' common start: <prefix>/agent/control/
        self.parsers = parsers
        self.dispatcher, self.backlog, self.humanoid = dispatcher, backlog, humanoid
        self.refuse = refuse
        self.costly = CostlyLimiter()
        self.poison: tuple[str, bytes] | None = None  # the message that ended paho's thread

    def route(self, topic: str, payload: bytes) -> None:
        if self.poison == (topic, bytes(payload)):  # redelivered: it is never handled again
            self.poison = None
            self.refuse(topic, payload, "refused: handling it stopped the MQTT network thread")
            return
        leaf = topic[len(self.control) :]
        stale = self.backlog.stale(leaf)
        if stale is not None:
            self.refuse(topic, payload, stale)
            return
        if leaf.startswith(HUMANOID_LEAF):
            self.humanoid.handle(topic, leaf[len(HUMANOID_LEAF) :], payload)
            return
        parser = self.parsers.get(leaf)
        if parser is None:
            self.refuse(
                topic,
                payload,
                f"unknown control topic {leaf!r} (topics: {', '.join(sorted(self.parsers))}, "
                f"humanoid/{{{','.join(HUMANOID_COMMANDS)}}})",
            )
            return
        try:
            command = parser(payload)
        except AnimaError as exc:
            self.refuse(topic, payload, str(exc))
            return
        costly = self.costly.refusal(leaf)  # ask: an LLM request each (costly.py)
        if costly is not None:
            self.refuse(topic, payload, costly)
            return
        # any other exception: the door's boundary answers it, paho's thread lives
        self.dispatcher.submit(command, Origin("mqtt", topic, excerpt(payload)))
