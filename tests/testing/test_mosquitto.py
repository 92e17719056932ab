"""The Mosquitto fixture and the MQTT probe anima ships for tests (``anima.testing``)."""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest

from anima.errors import MissingDependencyError
from anima.frontdoors.mqtt.broker import answers
from anima.testing import eventually
from anima.testing.mosquitto import (
    Mosquitto,
    MosquittoError,
    MosquittoNotFoundError,
    find_mosquitto,
)
from anima.testing.mqtt import MqttProbe

pytestmark = pytest.mark.integration

needs_mosquitto = pytest.mark.skipif(
    find_mosquitto() is None,
    reason="mosquitto is not installed (Debian: apt-get install mosquitto)",
)


@needs_mosquitto
def test_mosquitto_serves_on_loopback_and_restarts_on_the_same_port() -> None:
    with Mosquitto() as broker:
        address = broker.address
        assert address.host == "127.0.0.1"
        assert broker.running
        assert answers(address)
        with MqttProbe(address, subscribe="a/#") as probe:
            probe.publish("a/b", "hello", qos=1)
            assert probe.wait_for("a/b", timeout=2).payload == b"hello"
        pid = broker.pid
        broker.restart()
        assert broker.address == address
        assert broker.pid != pid
        assert broker.starts == 2
        assert answers(address)
        broker.stop()
        assert not broker.running
        assert not answers(address)
    assert not answers(address)


@needs_mosquitto
def test_a_probe_reconnects_and_resubscribes_after_a_restart() -> None:
    with Mosquitto() as broker, MqttProbe(broker.address, subscribe="a/#") as probe:
        broker.restart()
        assert probe.wait_ready(3)
        with MqttProbe(broker.address) as other:
            other.publish("a/c", "back", qos=1)
        assert probe.wait_for("a/c", timeout=2).payload == b"back"
        assert probe.connects == 2


@needs_mosquitto
def test_the_config_binds_loopback_only_with_persistence_in_its_folder() -> None:
    with Mosquitto() as broker:
        assert broker.config_path is not None
        text = broker.config_path.read_text()
        assert f"listener {broker.address.port} 127.0.0.1" in text
        assert "allow_anonymous true" in text
        assert "persistence true" in text
        assert f"persistence_location {broker.config_path.parent}/" in text
        assert "set_tcp_nodelay true" in text
        folder = broker.config_path.parent
    assert not folder.exists()  # close() removes it


@needs_mosquitto
def test_a_taken_port_is_a_clear_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))  # bound, not listening: connections are refused
        port = taken.getsockname()[1]
        broker = Mosquitto(port)
        with pytest.raises(MosquittoError, match=f"port {port}"):
            broker.start(timeout=2)
        assert broker.config_path is None  # its folder is gone


def test_a_missing_binary_names_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr("anima.frontdoors.mqtt.mosquitto._SBIN", "/nonexistent")
    assert find_mosquitto() is None
    with pytest.raises(MosquittoNotFoundError, match="apt-get install mosquitto") as caught:
        Mosquitto().start()
    assert isinstance(caught.value, MissingDependencyError)


def test_a_binary_that_cannot_run_is_a_clear_error(tmp_path: Path) -> None:
    fake = tmp_path / "mosquitto"
    fake.write_text("not a program")
    os.chmod(fake, 0o644)
    broker = Mosquitto(binary=str(fake))
    with pytest.raises(MosquittoError, match="cannot run"):
        broker.start(timeout=1)
    assert broker.config_path is None


@needs_mosquitto
def test_a_probe_wait_is_bounded_and_says_what_it_saw() -> None:
    with Mosquitto() as broker, MqttProbe(broker.address, subscribe="a/#") as probe:
        probe.publish("a/other", "x", qos=1)
        probe.wait_for("a/other", timeout=2)
        began = time.monotonic()
        with pytest.raises(TimeoutError, match=r"0/1 messages on a/never .*a/other"):
            probe.wait_for("a/never", timeout=0.2)
        assert time.monotonic() - began < 1.0


@needs_mosquitto
def test_a_subscriber_that_falls_behind_by_thousands_loses_nothing() -> None:
    """Mosquitto's default queue (1000 QoS 1 messages per client) dropped refusals in a flood."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    got: list[bytes] = []
    subscribed = threading.Event()
    with Mosquitto() as broker:
        slow = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="slow", clean_session=False)
        slow.on_subscribe = lambda *_a: subscribed.set()
        slow.on_message = lambda _c, _u, m: got.append(m.payload)
        slow.connect(broker.address.host, broker.address.port)
        slow.subscribe("flood/#", qos=1)
        slow.loop_start()
        assert subscribed.wait(3)
        slow.loop_stop()  # connected, but reads and acknowledges nothing for a while
        # paho's loop_start makes a new wake-up socket pair over the old one without closing it
        slow._reset_sockets(sockpair_only=True)
        with MqttProbe(broker.address) as publisher:
            for n in range(3000):
                publisher.publish("flood/x", str(n), qos=1)
        slow.loop_start()
        assert eventually(lambda: len(got) == 3000, 10), f"{len(got)} of 3000"
        slow.disconnect()
        slow.loop_stop()
    assert got == [str(n).encode() for n in range(3000)]
