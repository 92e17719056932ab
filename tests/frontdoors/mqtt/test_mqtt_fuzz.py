"""Whatever arrives on the control topics, the door answers and the robot keeps moving (hypothesis).

Each example publishes one generated payload on one topic, then a sentinel on an unknown topic:
the sentinel's error comes after any refusal of the payload by its parser (both are answered on
paho's thread, in order), so each example is checked on its own. Refusals by the runtime
(speak without a speech service, …) come later, from the command thread; they are counted at
the end against the runtime's CommandRejected events.
"""

from __future__ import annotations

import json
import logging
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anima.errors import AnimaError
from anima.events import CommandRejected, Event
from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor
from anima.runtime import Runtime
from anima.testing.mqtt import Message, MqttProbe
from anima.wire.payloads import MAX_PAYLOAD, control_parsers
from anima.wire.topics import Topics

from .conftest import wait_until

pytestmark = [
    pytest.mark.integration,
    # a named exception: hypothesis notes any change of the global random state while it draws,
    # and here a live server's threads run beside the draws (rich's import was one such caller,
    # now imported up front in tests/conftest.py; another, not yet found, fails a run now and then)
    pytest.mark.filterwarnings(
        "ignore:Do not use the `random` module inside strategies"
        ":hypothesis.errors.HypothesisDeprecationWarning"
    ),
]

LEAVES = ["speak", "stop_speak", "look_at", "look_at_target", "animation"]
NAMES = ["nod", "shake", "smile", "blink", "Posture_LookAtZoom", "LOOKUPPostureDefault", "nodd"]

numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-3, max_value=3),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.booleans(),
    st.none(),
    st.text(max_size=4),
)
json_values = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=12,
)
payloads = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300).map(str.encode),
    json_values.map(lambda v: json.dumps(v).encode()),  # NaN and Infinity included
    st.fixed_dictionaries({"x": numbers, "y": numbers, "z": numbers}, optional={"w": numbers}).map(
        lambda d: json.dumps(d).encode()
    ),
    st.fixed_dictionaries(
        {"text": st.one_of(st.text(max_size=40), numbers)},
        optional={"locale": st.one_of(st.sampled_from(["en-US", "fr", "en_GB", ""]), numbers)},
    ).map(lambda d: json.dumps(d).encode()),
    st.sampled_from(NAMES).map(str.encode),
    st.sampled_from(
        [
            b"",
            b"[" * 60_000,
            b'{"x": ' + b"7" * 6000 + b', "y": 0, "z": 0}',
            b"n" * (MAX_PAYLOAD + 1),
            b"\xed\xa0\x80",  # a UTF-16 surrogate, invalid in UTF-8
            b"nod\x00",
        ]
    ),
)
topics_leaves = st.one_of(
    st.sampled_from(LEAVES),
    st.sampled_from(["dance", "look_at/extra", "Speak", "animation/"]),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz_/", min_size=1, max_size=12),
)


def test_fuzzed_control_payloads_are_answered_and_never_hurt_the_robot(
    probe: MqttProbe,
    topics: Topics,
    runtime: Runtime,
    door: MqttFrontDoor,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    parsers = control_parsers(runtime.library)
    refused_by_runtime: list[Event] = []
    runtime.events.subscribe(refused_by_runtime.append, CommandRejected.kind)
    counts = {"examples": 0, "parse_refused": 0}
    ticks = runtime.engine.stats().ticks
    error_topic = topics.feedback("error")
    mark0 = probe.mark()

    def parser_reason(leaf: str, payload: bytes) -> str | None:
        parser = parsers.get(leaf)
        if parser is None:
            return "unknown control topic"
        try:
            parser(payload)
        except AnimaError as exc:
            return str(exc)
        return None

    @settings(
        max_examples=150,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(leaf=topics_leaves, payload=payloads)
    def one(leaf: str, payload: bytes) -> None:
        n = counts["examples"] = counts["examples"] + 1
        expected = parser_reason(leaf, payload)
        mark = probe.mark()
        probe.publish(topics.control + leaf, payload, qos=1)
        probe.publish(topics.control + "sentinel", str(n), qos=1)

        def is_sentinel(m: Message) -> bool:
            data = m.json()
            return bool(data["topic"] == topics.control + "sentinel" and data["payload"] == str(n))

        probe.wait_for(error_topic, since=mark, timeout=3, where=is_sentinel)
        window = [m.json() for m in probe.messages(error_topic, since=mark)]
        for e in window:
            assert set(e) == {"v", "topic", "payload", "reason"}
            assert e["v"] == 1
            assert isinstance(e["reason"], str)
            assert e["reason"]
        mine = [e for e in window if e["topic"] == topics.control + leaf]
        if expected is not None:
            counts["parse_refused"] += 1
            matching = [e for e in mine if str(e["reason"]).startswith(expected)]
            assert len(matching) == 1, (leaf, payload[:60], expected, mine)

    one()

    # every refusal was answered exactly once: the parser's, the runtime's, the sentinels'
    def answered() -> int:
        return len(probe.messages(error_topic, since=mark0))

    def owed() -> int:
        return counts["examples"] + counts["parse_refused"] + len(refused_by_runtime)

    # a barrier: the command thread carries out (and the runtime refuses: no speech service)
    # this speak after every command queued before it, so no refusal comes after it
    mark = probe.mark()
    probe.publish(topics.control + "speak", "fuzz barrier", qos=1)
    probe.wait_for(
        error_topic,
        since=mark,
        timeout=3,
        where=lambda m: (
            m.json()["topic"] == topics.control + "speak" and m.json()["payload"] == "fuzz barrier"
        ),
    )
    wait_until(lambda: answered() == owed(), 3, "every refusal answered")
    assert answered() == owed() == door.rejected
    assert all(isinstance(e, CommandRejected) and e.source == "mqtt" for e in refused_by_runtime)

    # the robot is fine: the loop ticks, the door's threads live, nothing was logged as a bug
    assert runtime.engine.running
    before = runtime.engine.stats().ticks
    assert before > ticks
    wait_until(lambda: runtime.engine.stats().ticks > before + 10, 1, "the loop keeps ticking")
    names = {t.name for t in threading.enumerate() if t.is_alive()}
    assert {"anima-commands", "anima-mqtt-watch", "anima-motion"} <= names
    assert f"paho-mqtt-client-anima-{topics.prefix}" in names  # the stable client id
    assert door.connected
    assert door.connects == 1
    # anima's own records: amqtt (the embedded broker under test) logs an ERROR when a client
    # is slow to PUBACK a QoS 1 delivery under CI load ("Timeout waiting for PUBACK", seen
    # twice in fresh-clone runs); the counts above show that no command or answer was lost
    bugs = [
        r
        for r in caplog.records
        if r.name.startswith("anima") and (r.levelno >= logging.ERROR or r.exc_info)
    ]
    assert bugs == []
    # and it still obeys
    mark = probe.mark()
    probe.publish(topics.control + "animation", "nodd", qos=1)
    assert "did you mean nod" in probe.wait_for(error_topic, since=mark, timeout=3).json()["reason"]
