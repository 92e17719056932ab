"""Commands sent while anima's link is down (issue 12 item 4): queued, then answered.

Before, the door connected with a clean session and a client id with the pid in it: during a
3 s cut the broker acknowledged ``nod``, a bad name and ``estop`` and kept none of them for
anima. Now the session is persistent (``clean_session`` false, id ``anima-<prefix>``): the
link is cut with a TCP proxy between anima and a real Mosquitto, commands are sent at QoS 1
during the cut, and each is answered after the reconnect — or refused as stale after an outage
longer than ``mqtt.stale_after_s``, estop excepted. The age logic itself runs on a fake clock.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Iterator

import pytest

from anima.config import AnimaConfig, MqttConfig
from anima.drivers.sim import SimDriver
from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor
from anima.frontdoors.mqtt.session import Backlog
from anima.runtime import Runtime
from anima.testing import FakeClock
from anima.testing.mosquitto import Mosquitto, find_mosquitto
from anima.testing.mqtt import Message, MqttProbe
from anima.wire.mqtt import BrokerAddress
from anima.wire.topics import Topics

from .conftest import robot_config, wait_until
from .proxy import LinkProxy

pytestmark = pytest.mark.integration

CUT_S = 3.0


# ---------------------------------------------------------------------------- the age logic
def test_a_short_outage_delivers_the_backlog_and_a_long_one_refuses_it_but_estop() -> None:
    clock = FakeClock()
    backlog = Backlog(stale_after_s=10.0, clock=clock.now)
    assert backlog.connected(session_present=False, marker="m1") == 0.0  # first connect
    assert backlog.stale("animation") is None  # live commands are never stale

    backlog.disconnected()
    clock.advance(3.0)
    assert backlog.connected(session_present=True, marker="m2") == pytest.approx(3.0)
    assert backlog.catching_up
    assert backlog.stale("animation") is None  # 3 s ≤ 10 s: carried out
    assert not backlog.marker_arrived("m1")  # an older marker does not end this backlog
    assert backlog.marker_arrived("m2")
    assert not backlog.catching_up

    backlog.disconnected()
    clock.advance(4.0)
    backlog.disconnected()  # a second report of the same outage does not restart it
    clock.advance(8.0)
    assert backlog.connected(session_present=True, marker="m3") == pytest.approx(12.0)
    reason = backlog.stale("animation")
    assert reason is not None
    assert "12.0 s" in reason
    assert "mqtt.stale_after_s = 10 s" in reason
    assert backlog.stale("humanoid/speed") is not None
    assert backlog.stale("estop") is None  # never dropped
    backlog.marker_arrived("m3")
    assert backlog.stale("animation") is None  # live again


def test_a_session_found_at_the_first_connect_holds_commands_of_unknown_age() -> None:
    backlog = Backlog(stale_after_s=10.0, clock=FakeClock().now)
    assert math.isinf(backlog.connected(session_present=True, marker="m"))
    reason = backlog.stale("reset")
    assert reason is not None
    assert "earlier run" in reason
    assert backlog.stale("estop") is None


def test_without_a_session_nothing_is_a_backlog() -> None:
    clock = FakeClock()
    backlog = Backlog(stale_after_s=1.0, clock=clock.now)
    backlog.connected(session_present=False, marker="a")
    backlog.disconnected()
    clock.advance(60.0)
    assert backlog.connected(session_present=False, marker="b") == pytest.approx(60.0)
    assert backlog.stale("animation") is None  # the broker kept nothing: all is live


# ---------------------------------------------------------------------------- on a real link
@pytest.fixture
def mosquitto() -> Iterator[Mosquitto]:
    if find_mosquitto() is None:
        pytest.skip("mosquitto is not installed (Debian: apt-get install mosquitto)")
    with Mosquitto() as broker:
        yield broker


def start(cfg: AnimaConfig, address: BrokerAddress) -> tuple[Runtime, MqttFrontDoor]:
    runtime = Runtime(cfg, driver=SimDriver())
    door = MqttFrontDoor(runtime, cfg.mqtt, address)
    runtime.attach(door)
    runtime.start()
    assert door.wait_connected(5)
    return runtime, door


def error_for(probe: MqttProbe, topics: Topics, payload: str, since: int) -> Message:
    return probe.wait_for(
        topics.feedback("error"),
        since=since,
        timeout=5,
        where=lambda m: m.json()["payload"] == payload,
    )


def cut_and_send(
    proxy: LinkProxy, door: MqttFrontDoor, probe: MqttProbe, topics: Topics, seconds: float
) -> float:
    """Cut the link, send nod, a bad name and estop at QoS 1, restore it; the reconnect time."""
    began = time.monotonic()
    proxy.cut()
    wait_until(lambda: not door.connected, 2, "the door sees the link down")
    # the broker noticed too (the will): from now on it queues for anima's session
    probe.wait_for(topics.status, timeout=3, where=lambda m: m.payload == b"offline")
    for leaf, payload in (("animation", "nod"), ("animation", "no_such_move"), ("estop", "")):
        probe.publish(topics.control + leaf, payload, qos=1)  # acknowledged by the broker
    # the outage's length is what is tested (queued, or stale past mqtt.stale_after_s)
    time.sleep(max(0.0, seconds - (time.monotonic() - began)))
    proxy.restore()
    back = time.monotonic()
    wait_until(lambda: door.connected, 5, "the door reconnects")
    return time.monotonic() - back


def test_commands_sent_during_a_3_s_cut_are_all_answered_after_the_reconnect(
    mosquitto: Mosquitto, prefix: str
) -> None:
    topics = Topics(prefix)
    with (
        LinkProxy(mosquitto.address) as proxy,
        MqttProbe(mosquitto.address, subscribe=f"{prefix}/agent/#") as probe,
    ):
        runtime, door = start(robot_config(prefix), proxy.address)
        try:
            mark = probe.mark()
            reconnect_s = cut_and_send(proxy, door, probe, topics, CUT_S)
            # the bad name: refused with the parser's reason
            bad = error_for(probe, topics, "no_such_move", mark)
            assert "unknown animation 'no_such_move'" in bad.json()["reason"]
            # estop: carried out
            wait_until(lambda: runtime.engine.state().estopped, 3, "the queued estop")
            # nod reached the runtime: played (then cut by the estop), flushed by it, or — the
            # estop being a system command that overtakes the ordered lane when the backlog
            # arrives in one burst — refused because the estop was already applied
            answers: list[str] = []

            def nod_answered() -> bool:
                answers[:] = [
                    m.json().get("reason", "")
                    for m in probe.messages(since=mark)
                    if m.topic in (topics.feedback("animation_done"), topics.feedback("error"))
                    and (m.json().get("name") == "nod" or m.json().get("payload") == "nod")
                ]
                return bool(answers)

            wait_until(nod_answered, 3, "nod answered")
            assert answers[0] in (
                "done",
                "estop",
                "flushed by an emergency stop",
                "'nod' refused: emergency stop is active (reset to resume)",
            ), answers
            assert door.connects == 2
            # the outage: the cut, plus up to two attempts at the 2 s backoff cap after it
            assert CUT_S - 0.5 < door.last_outage_s < CUT_S + 4.5
            assert reconnect_s < 4.5  # the backoff is capped at 2 s (a loaded machine: twice)
            print(f"reconnected {reconnect_s:.2f} s after the link came back")
        finally:
            runtime.stop(ease=False)


def test_after_an_outage_over_the_bound_the_backlog_is_refused_as_stale_but_estop(
    mosquitto: Mosquitto, prefix: str
) -> None:
    topics = Topics(prefix)
    base = robot_config(prefix)
    cfg = dataclasses.replace(base, mqtt=dataclasses.replace(base.mqtt, stale_after_s=1.0))
    with (
        LinkProxy(mosquitto.address) as proxy,
        MqttProbe(mosquitto.address, subscribe=f"{prefix}/agent/#") as probe,
    ):
        runtime, door = start(cfg, proxy.address)
        try:
            mark = probe.mark()
            cut_and_send(proxy, door, probe, topics, 2.0)
            nod = error_for(probe, topics, "nod", mark)
            assert nod.json()["reason"].startswith("stale: the broker queued it while")
            assert "mqtt.stale_after_s = 1 s" in nod.json()["reason"]
            assert "stale" in error_for(probe, topics, "no_such_move", mark).json()["reason"]
            wait_until(lambda: runtime.engine.state().estopped, 3, "estop is never stale")
            # and live commands after the backlog are carried out, not refused
            later = probe.mark()
            probe.publish(topics.control + "reset", "", qos=1)
            wait_until(lambda: not runtime.engine.state().estopped, 3, "a live reset")
            assert probe.messages(topics.feedback("error"), since=later) == []
        finally:
            runtime.stop(ease=False)


def test_a_clean_stop_ends_the_session_so_nothing_waits_for_the_next_start(
    mosquitto: Mosquitto, prefix: str
) -> None:
    topics = Topics(prefix)
    with MqttProbe(mosquitto.address, subscribe=f"{prefix}/agent/#") as probe:
        runtime, door = start(robot_config(prefix), mosquitto.address)
        runtime.stop(ease=False)
        probe.publish(topics.control + "animation", "nod", qos=1)  # to a robot switched off
        runtime, door = start(robot_config(prefix), mosquitto.address)
        try:
            mark = probe.mark()
            probe.publish(topics.control + "sentinel", "", qos=1)
            error_for(probe, topics, "", mark)
            assert door.received == 1  # the sentinel only: nod was not kept for this start
        finally:
            runtime.stop(ease=False)


def test_two_robots_with_different_prefixes_share_a_broker_without_taking_over(
    mosquitto: Mosquitto, prefix: str
) -> None:
    a, b = Topics(prefix + "a"), Topics(prefix + "b")
    errors = [a.feedback("error"), b.feedback("error")]
    with MqttProbe(mosquitto.address, subscribe=errors) as probe:
        one, door_one = start(robot_config(prefix + "a"), mosquitto.address)
        two, door_two = start(robot_config(prefix + "b"), mosquitto.address)
        try:
            assert door_one.client_id == f"anima-{prefix}a"
            assert door_two.client_id == f"anima-{prefix}b"
            # a takeover happens at the second CONNECT: a round trip through each door after
            # it would come back only over a new connection, and the count would show it
            for topics in (a, b):
                mark = probe.mark()
                probe.publish(topics.control + "sentinel", "", qos=1)
                probe.wait_for(topics.feedback("error"), since=mark, timeout=5)
            assert (door_one.connects, door_two.connects) == (1, 1)
            assert door_one.connected
            assert door_two.connected
        finally:
            two.stop(ease=False)
            one.stop(ease=False)


def test_the_client_id_is_stable_and_can_be_set() -> None:
    assert MqttConfig(prefix="nadine").client_id is None
    runtime = Runtime(robot_config("nadine"), driver=SimDriver())
    assert MqttFrontDoor(runtime, MqttConfig(prefix="nadine"), BrokerAddress("h", 1)).client_id == (
        "anima-nadine"
    )
    custom = MqttConfig(prefix="nadine", client_id="lab/robot+1")
    door = MqttFrontDoor(runtime, custom, BrokerAddress("h", 1))
    assert door.client_id == "lab/robot+1"
    assert door.topics.session(door.client_id) == "nadine/agent/session/lab_robot_1"
