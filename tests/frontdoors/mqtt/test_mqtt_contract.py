"""The Nadine MQTT contract, end to end on each broker: paho client → broker → door → runtime →
sim driver, and feedback back out. Every wait is bounded."""

from __future__ import annotations

import json
import math
import socket
from collections.abc import Callable

import numpy as np
import pytest

from anima.body.gaze import GazeKinematics
from anima.drivers.sim import SimDriver
from anima.events import SpeechEnded, SpeechStarted
from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor
from anima.runtime import Runtime
from anima.testing.mqtt import Message, MqttProbe
from anima.wire.mqtt import BrokerAddress
from anima.wire.payloads import MAX_PAYLOAD, excerpt
from anima.wire.topics import Topics

from .conftest import RobotFactory, wait_until

pytestmark = pytest.mark.integration

Send = Callable[[str, bytes | str], None]
AUTOJUMP = pytest.mark.parametrize("autojump", [True], ids=["autojump"])  # the runtime's moves
# take no real time (the door and the broker keep theirs): for tests that wait for a move's end
ERROR_KEYS = {"v", "topic", "payload", "reason"}


def column(runtime: Runtime, sim: SimDriver, channel: str) -> np.ndarray:
    i = runtime.body.index(channel)
    return np.array([f.values[i] for f in sim.history()])


def value(runtime: Runtime, channel: str) -> float:
    return float(runtime.engine.last_frame[runtime.body.index(channel)])


def feedback(probe: MqttProbe, topics: Topics, since: int) -> list[tuple[str, dict[str, object]]]:
    """(leaf, JSON) of every feedback message after ``since``, in arrival order; an event's
    time ``t`` checked (a number, on the runtime's clock) and left out."""
    prefix = topics.feedback("")
    out = []
    for m in probe.messages(since=since):
        if m.topic.startswith(prefix):
            data = m.json()
            t = data.pop("t", 0.0)
            assert isinstance(t, float | int)
            assert t >= 0
            out.append((m.topic[len(prefix) :], data))
    return out


def errors(probe: MqttProbe, topics: Topics, since: int) -> list[dict[str, object]]:
    return [m.json() for m in probe.messages(topics.feedback("error"), since=since)]


def errors_wait(probe: MqttProbe, topics: Topics, since: int, count: int = 1) -> dict[str, object]:
    msg = probe.wait_for(topics.feedback("error"), since=since, count=count, timeout=3)
    data = msg.json()
    assert isinstance(data, dict)
    return data


# ---------------------------------------------------------------------------- status and state
def test_status_is_online_retained_at_connect_and_offline_after_stop(
    broker: BrokerAddress, prefix: str, probe: MqttProbe, make_robot: RobotFactory
) -> None:
    topics = Topics(prefix)
    runtime, _door = make_robot(prefix, broker)
    assert probe.wait_for(topics.status, timeout=2).payload == b"online"
    with MqttProbe(broker, subscribe=topics.status) as fresh:
        retained = fresh.wait_for(topics.status, timeout=2)
        assert (retained.payload, retained.retain) == (b"online", True)
    mark = probe.mark()
    runtime.stop(ease=False)
    assert probe.wait_for(topics.status, since=mark, timeout=2).payload == b"offline"
    with MqttProbe(broker, subscribe=topics.status) as fresh:
        retained = fresh.wait_for(topics.status, timeout=2)
        assert (retained.payload, retained.retain) == (b"offline", True)


def test_a_dropped_connection_publishes_the_last_will_then_online_again(
    broker: BrokerAddress, probe: MqttProbe, topics: Topics, door: MqttFrontDoor, send: Send
) -> None:
    probe.wait_for(topics.status, timeout=2)
    mark = probe.mark()
    # cut the TCP connection under paho, as a crash or a pulled cable would: no DISCONNECT
    # packet, so the broker publishes the will
    door._client.socket().shutdown(socket.SHUT_RDWR)
    will = probe.wait_for(topics.status, since=mark, timeout=3)
    assert will.payload == b"offline"
    back = probe.wait_for(topics.status, since=mark, count=2, timeout=5)
    assert back.payload == b"online"
    wait_until(lambda: door.connects == 2, 2, "the door counts its reconnect")
    with MqttProbe(broker, subscribe=topics.status) as fresh:
        assert fresh.wait_for(topics.status, timeout=2).payload == b"online"
    mark = probe.mark()
    send("animation", "nodd")  # still served
    assert "did you mean nod" in str(errors_wait(probe, topics, mark)["reason"])
    assert door.rejected == 1  # its own will (handed back by amqtt) was not answered


def test_state_is_retained_json_a_few_times_a_second(
    broker: BrokerAddress, probe: MqttProbe, topics: Topics, runtime: Runtime
) -> None:
    mark = probe.mark()
    # the rate from the messages' own arrival times: five in a row, 4 Hz loosely (2 to 8)
    probe.wait_for(topics.state, since=mark, count=5, timeout=5)
    times = [m.t for m in probe.messages(topics.state, since=mark)[:5]]
    assert 1 / 8 <= (times[-1] - times[0]) / 4 <= 1 / 2
    with MqttProbe(broker, subscribe=topics.state) as fresh:
        msg = fresh.wait_for(topics.state, timeout=2)
    assert msg.retain
    state = msg.json()
    assert set(state) == {
        "v",
        "t",
        "move",
        "queued",
        "gaze_target",
        "looking",
        "speaking",
        "conversation",
        "shutdown",
        "estop",
        "driver_connected",
        "humanoid",
        "loop",
        "measured",
        "attention",
    }
    assert state["v"] == 1
    assert state["conversation"] is None  # no voice agent here
    assert state["humanoid"] is None  # no humanoid linked
    assert state["attention"] is None  # no camera, no microphone array
    assert state["driver_connected"] is True
    assert (state["gaze_target"], state["looking"], state["shutdown"], state["estop"]) == (
        None,
        False,
        False,
        False,
    )
    assert set(state["loop"]) == {"rate_hz", "period_error_p99_ms", "missed"}
    assert state["loop"]["rate_hz"] > 50


# ---------------------------------------------------------------------------- animation
@AUTOJUMP
def test_animations_move_the_driver_and_report_done_in_order(
    probe: MqttProbe, topics: Topics, runtime: Runtime, sim: SimDriver, send: Send
) -> None:
    mark = probe.mark()
    send("animation", "nod")  # neck pitch
    send("animation", "shake")  # neck yaw, queued behind the nod
    probe.wait_for(topics.feedback("animation_done"), since=mark, count=2, timeout=10)
    assert feedback(probe, topics, mark) == [
        ("animation_done", {"v": 1, "name": "nod", "cut": False, "reason": "done"}),
        ("animation_done", {"v": 1, "name": "shake", "cut": False, "reason": "done"}),
    ]
    pitch = np.abs(column(runtime, sim, "neck_pitch") - 128)
    yaw = np.abs(column(runtime, sim, "neck_yaw") - 128)
    assert pitch.max() > 15
    assert yaw.max() > 15
    # the driver received the nod before the shake
    assert np.argmax(pitch > 10) < np.argmax(yaw > 10)


def test_a_cut_animation_is_reported_cut(
    probe: MqttProbe, topics: Topics, runtime: Runtime, send: Send
) -> None:
    mark = probe.mark()
    send("animation", "nod")
    wait_until(lambda: runtime.engine.state().move == "nod", 3, "the nod plays")
    send("animation", "LOOKUP_Waving")  # clears the queue and cuts what plays
    done = probe.wait_for(topics.feedback("animation_done"), since=mark, timeout=3).json()
    assert done["name"] == "nod"
    assert done["cut"] is True
    assert done["reason"]
    assert done["reason"] != "done"
    assert errors(probe, topics, mark) == []


# ---------------------------------------------------------------------------- gaze
@AUTOJUMP
def test_look_at_turns_head_and_eyes_toward_the_point(
    runtime: Runtime, sim: SimDriver, send: Send
) -> None:
    x, y, z = 1.0, 0.3, 0.0  # ahead and to the robot's left
    split = GazeKinematics(runtime.body).split(*GazeKinematics.direction(x, y, z))
    neck = runtime.body.channel("neck_yaw").calibration
    eyes = runtime.body.channel("eyes_yaw").calibration
    assert neck is not None
    assert eyes is not None
    want_neck, want_eyes = neck.to_units(split.head_yaw), eyes.to_units(split.eyes_yaw)
    assert want_neck > 135
    assert want_eyes > 135
    send("look_at", json.dumps({"x": x, "y": y, "z": z}))
    wait_until(
        lambda: (
            abs(value(runtime, "neck_yaw") - want_neck) < 1.0
            and abs(value(runtime, "eyes_yaw") - want_eyes) < 1.0
        ),
        3,
        f"neck_yaw → {want_neck:.1f}, eyes_yaw → {want_eyes:.1f}",
    )
    yaw = column(runtime, sim, "neck_yaw")
    assert np.all(np.diff(yaw) > -0.05)  # it went there, without turning the other way
    assert runtime.behaviour.gaze.active


def test_look_at_out_of_reach_is_clamped_with_a_notice(
    probe: MqttProbe, topics: Topics, runtime: Runtime, send: Send
) -> None:
    mark = probe.mark()
    send("look_at", '{"x": 0.1, "y": 5, "z": 0}')  # almost straight left: beyond the neck
    notice = probe.wait_for(
        topics.feedback("notice"), since=mark, timeout=3, where=lambda m: b"look_at" in m.payload
    ).json()
    assert notice["v"] == 1
    assert notice["source"] == "look_at"
    assert "out of reach" in notice["message"]
    assert errors(probe, topics, mark) == []


@AUTOJUMP
def test_look_at_target_latches_and_the_default_posture_clears_it(
    probe: MqttProbe, topics: Topics, runtime: Runtime, door: MqttFrontDoor, send: Send
) -> None:
    def gaze_target(name: str | None) -> Callable[[Message], bool]:
        return lambda m: m.json()["gaze_target"] == name

    mark = probe.mark()
    send("look_at_target", "Posture_LookAtZoom")
    probe.wait_for(topics.state, since=mark, timeout=2, where=gaze_target("Posture_LookAtZoom"))
    wait_until(lambda: abs(value(runtime, "neck_yaw") - 138) < 0.5, 3, "neck_yaw → 138")
    mark = probe.mark()
    send("look_at_target", "LOOKUPPostureDefault")
    probe.wait_for(topics.state, since=mark, timeout=2, where=gaze_target(None))
    wait_until(lambda: abs(value(runtime, "neck_yaw") - 128) < 0.5, 3, "neck_yaw → 128")
    assert errors(probe, topics, mark) == []


@AUTOJUMP
def test_look_at_releases_a_held_gaze_posture_with_a_notice(
    probe: MqttProbe, topics: Topics, runtime: Runtime, send: Send
) -> None:
    """It was silently ignored while the posture was held (the agent alone released it)."""
    mark = probe.mark()
    send("look_at_target", "Posture_LookAtZoom")
    probe.wait_for(
        topics.state, since=mark, timeout=2, where=lambda m: m.json()["gaze_target"] is not None
    )
    mark = probe.mark()
    send("look_at", '{"x": 1, "y": -0.5, "z": 0}')
    notice = probe.wait_for(
        topics.feedback("notice"), since=mark, timeout=3, where=lambda m: b"released" in m.payload
    ).json()
    assert notice["source"] == "look_at"
    assert notice["message"] == "look_at released the held gaze posture 'Posture_LookAtZoom'"
    probe.wait_for(
        topics.state, since=mark, timeout=2, where=lambda m: m.json()["gaze_target"] is None
    )
    wait_until(lambda: value(runtime, "neck_yaw") < 120, 3, "the neck turns right")
    assert errors(probe, topics, mark) == []


# ---------------------------------------------------------------------------- speech
def test_speak_without_a_speech_service_is_answered_on_the_error_topic(
    probe: MqttProbe, topics: Topics, runtime: Runtime, send: Send
) -> None:
    mark = probe.mark()
    send("speak", "Hello there")
    send("speak", '{"text": "Bonjour", "locale": "fr-FR"}')
    probe.wait_for(topics.feedback("error"), since=mark, count=2, timeout=3)
    got = errors(probe, topics, mark)
    assert [(e["topic"], e["payload"]) for e in got] == [
        (topics.control + "speak", "Hello there"),
        (topics.control + "speak", '{"text": "Bonjour", "locale": "fr-FR"}'),
    ]
    for e in got:
        assert set(e) == ERROR_KEYS
        assert e["v"] == 1
        assert str(e["reason"]).startswith("speech is not available")


def test_stop_speak_is_accepted_silently(
    probe: MqttProbe, topics: Topics, door: MqttFrontDoor, send: Send
) -> None:
    mark = probe.mark()
    before = door.dispatcher.executed
    send("stop_speak", "")
    send("stop_speak", "anything at all")
    wait_until(lambda: door.dispatcher.executed == before + 2, 2, "both stop_speak carried out")
    send("no_such_leaf", "sentinel")  # its error comes after anything the two could cause
    probe.wait_for(topics.feedback("error"), since=mark, timeout=3)
    assert [e["topic"] for e in errors(probe, topics, mark)] == [topics.control + "no_such_leaf"]


def test_speech_events_become_start_and_end_speak(
    probe: MqttProbe, topics: Topics, runtime: Runtime
) -> None:
    mark = probe.mark()
    runtime.events.publish(SpeechStarted(utterance="u-7", text="Hello", locale="en-GB"))
    runtime.events.publish(SpeechEnded(utterance="u-7", reason="stopped"))
    probe.wait_for(topics.feedback("end_speak"), since=mark, timeout=3)
    assert feedback(probe, topics, mark) == [
        ("start_speak", {"v": 1, "id": "u-7", "text": "Hello", "locale": "en-GB"}),
        ("end_speak", {"v": 1, "id": "u-7", "reason": "stopped"}),
    ]


# ---------------------------------------------------------------------------- refusals
BAD = [
    ("animation", "nodd", "unknown animation 'nodd' (did you mean nod?)"),
    ("animation", "", "empty payload"),
    ("animation", "   \n", "empty payload"),
    ("animation", b"\xff\xfenod", "payload is not UTF-8 text (byte 0)"),
    ("animation", b"n" * (MAX_PAYLOAD + 1), f"exceeds the {MAX_PAYLOAD}-byte limit"),
    ("animation", "nod\x07", "name contains control characters"),
    ("look_at_target", "nod", "'nod' is a gesture, not a posture"),
    ("look_at_target", "Posture_Nowhere", "unknown animation 'Posture_Nowhere'"),
    ("look_at", "{x: 1}", "invalid JSON"),
    ("look_at", "[1, 2, 3]", "expected a JSON object, got list"),
    ("look_at", '{"x": 1, "y": 0}', "missing field 'z'"),
    ("look_at", '{"x": 1, "y": 0, "z": 0, "w": 1}', "unknown field 'w'"),
    ("look_at", '{"x": NaN, "y": 0, "z": 0}', "'x' must be finite"),
    ("look_at", '{"x": 1, "y": -Infinity, "z": 0}', "'y' must be finite"),
    ("look_at", '{"x": 1e999, "y": 0, "z": 0}', "'x' must be finite"),
    ("look_at", '{"x": 1, "y": 0, "z": 1000}', "'z' = 1000 m is farther than 100 m"),
    ("look_at", '{"x": "1", "y": 0, "z": 0}', "'x' must be a number"),
    ("look_at", '{"x": true, "y": 0, "z": 0}', "'x' must be a number"),
    ("look_at", '{"x": 0, "y": 0, "z": 0}', "no direction to look"),
    ("look_at", "[" * 50_000, "invalid JSON: nested too deeply"),
    ("look_at", '{"x": ' + "1" * 5000 + ', "y": 0, "z": 0}', "invalid JSON: Exceeds the limit"),
    ("speak", '{"text": "hi", "locale": "english"}', "'locale' must look like 'en-US'"),
    ("speak", '{"locale": "en-US"}', "missing field 'text'"),
    ("speak", '{"text": "  "}', "'text' is empty"),
    ("speak", "x" * 2001, "text of 2001 characters exceeds the 2000 limit"),
    ("dance", "now", "unknown control topic 'dance'"),
    ("Animation", "nod", "humanoid/{mode,motion,posture,speed})"),  # the list of known topics
    ("animation/extra", "nod", "unknown control topic 'animation/extra'"),
]


def test_each_bad_payload_gets_one_specific_error_in_order(
    probe: MqttProbe, topics: Topics, runtime: Runtime, door: MqttFrontDoor, send: Send
) -> None:
    mark = probe.mark()
    ticks = runtime.engine.stats().ticks
    for leaf, payload, _reason in BAD:
        send(leaf, payload)
    send("sentinel", "end")  # the last error: nothing else may come before it
    probe.wait_for(topics.feedback("error"), since=mark, count=len(BAD) + 1, timeout=5)
    got = errors(probe, topics, mark)
    assert len(got) == len(BAD) + 1
    for (leaf, payload, reason), e in zip(BAD, got, strict=False):
        assert set(e) == ERROR_KEYS
        assert e["v"] == 1
        assert e["topic"] == topics.control + leaf
        assert e["payload"] == excerpt(payload)
        assert reason in str(e["reason"]), (leaf, payload[:40], e["reason"])
    assert got[-1]["topic"] == topics.control + "sentinel"
    assert door.rejected == len(BAD) + 1
    assert door.dispatcher.executed == 0  # nothing bad reached the runtime
    assert runtime.engine.stats().ticks > ticks  # and the loop kept going


# ---------------------------------------------------------------------------- two robots
def test_the_prefix_isolates_two_robots_on_one_broker(
    broker: BrokerAddress, prefix: str, make_robot: RobotFactory
) -> None:
    a, b = Topics(prefix + "a"), Topics(prefix + "b")
    with (
        MqttProbe(broker, subscribe=f"{a.prefix}/agent/#") as probe_a,
        MqttProbe(broker, subscribe=f"{b.prefix}/agent/#") as probe_b,
    ):
        robot_a, _ = make_robot(a.prefix, broker, autojump=True)
        robot_b, _ = make_robot(b.prefix, broker, autojump=True)
        probe_a.publish(a.control + "animation", "nod", qos=1)
        probe_a.publish(a.control + "animation", "nodd", qos=1)
        probe_a.wait_for(a.feedback("animation_done"), timeout=5)
        probe_b.publish(b.control + "sentinel", "b", qos=1)
        probe_b.wait_for(b.feedback("error"), timeout=3)
        assert [e["topic"] for e in errors(probe_b, b, 0)] == [b.control + "sentinel"]
        assert [e["topic"] for e in errors(probe_a, a, 0)] == [a.control + "animation"]
        assert probe_b.messages(b.feedback("animation_done")) == []
        # (not "only a's topics": amqtt 0.12 sometimes hands a new subscriber another
        # client's retained last will, whatever its filter)
        assert [m for m in probe_a.messages() if m.topic.startswith(b.prefix + "/")] == []
        assert [m for m in probe_b.messages() if m.topic.startswith(a.prefix + "/")] == []
        sim_a, sim_b = robot_a.driver, robot_b.driver
        assert isinstance(sim_a, SimDriver)
        assert isinstance(sim_b, SimDriver)
        assert np.ptp(column(robot_a, sim_a, "neck_pitch")) > 15
        assert np.ptp(column(robot_b, sim_b, "neck_pitch")) < 5  # breathing only
        assert math.isclose(value(robot_b, "neck_yaw"), 128.0, abs_tol=0.01)
