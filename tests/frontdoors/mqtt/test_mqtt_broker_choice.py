"""Which broker ``anima serve`` uses (issue 12 items 2 and 3), on real servers and real clients.

- ``auto`` checks for a CONNACK: an HTTP server on a candidate port is skipped with a warning
  naming it (before, "using the MQTT broker at …" and MQTT stayed dead without a word);
- with no broker answering, anima starts and owns Debian's Mosquitto, which delivers every QoS 0
  message Debian's own ``mosquitto_pub`` sends (amqtt, the old default, lost them), and which
  does not outlive an anima killed with SIGKILL.
"""

from __future__ import annotations

import gc
import http.server
import logging
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from anima.config import MqttConfig
from anima.drivers.sim import SimDriver
from anima.errors import ConfigError
from anima.frontdoors.mqtt import choice
from anima.frontdoors.mqtt.broker import EmbeddedBroker, answers, free_port
from anima.frontdoors.mqtt.choice import OwnedMosquitto, choose_broker
from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor
from anima.frontdoors.mqtt.probe import Answer, probe
from anima.runtime import Runtime
from anima.testing import eventually
from anima.testing.mosquitto import Mosquitto, find_mosquitto
from anima.testing.mqtt import MqttProbe
from anima.wire.mqtt import BrokerAddress, tls_context
from anima.wire.topics import Topics

from .conftest import robot_config, wait_until

pytestmark = pytest.mark.integration

needs_mosquitto = pytest.mark.skipif(
    find_mosquitto() is None,
    reason="mosquitto is not installed (Debian: apt-get install mosquitto)",
)
MOSQUITTO_PUB = shutil.which("mosquitto_pub")
needs_mosquitto_pub = pytest.mark.skipif(
    MOSQUITTO_PUB is None,
    reason="mosquitto_pub is not installed (Debian: apt-get install mosquitto-clients)",
)


@pytest.fixture
def http_server() -> Iterator[BrokerAddress]:
    """A real HTTP server on a free loopback port: something that listens but is not MQTT."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, name="test-http", daemon=True)
    thread.start()
    yield BrokerAddress("127.0.0.1", int(server.server_address[1]))
    server.shutdown()
    server.server_close()
    thread.join(5)


def closed_port() -> BrokerAddress:
    """A loopback port where nothing listens."""
    return BrokerAddress("127.0.0.1", free_port())


# ---------------------------------------------------------------------------- the probe
@needs_mosquitto
def test_the_probe_tells_a_broker_from_an_http_server_and_from_nothing(
    http_server: BrokerAddress,
) -> None:
    with Mosquitto() as mosquitto:
        assert probe(mosquitto.address) == probe(mosquitto.address)  # repeatable
        assert probe(mosquitto.address).answer is Answer.MQTT
    began = time.monotonic()
    web = probe(http_server, timeout=0.5)
    assert web.answer is Answer.NOT_MQTT
    assert "CONNACK" in web.detail
    assert time.monotonic() - began < 2.0  # bounded, though the server never answers
    assert probe(closed_port()).answer is Answer.NOTHING


@needs_mosquitto
def test_a_tls_probe_of_a_plain_broker_is_not_taken_for_a_tls_one(tmp_path: Path) -> None:
    context = ssl.create_default_context()
    with Mosquitto() as mosquitto:
        seen = probe(mosquitto.address, tls=context)
    assert seen.answer is Answer.NOT_MQTT
    assert "TLS handshake failed" in seen.detail


def test_a_missing_tls_file_is_a_config_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "ca.pem"
    with pytest.raises(ConfigError, match=r"mqtt.tls_ca.*ca.pem.*No such file"):
        tls_context(MqttConfig(tls_ca=str(missing)))
    assert tls_context(MqttConfig()) is None


# ---------------------------------------------------------------------------- auto
@needs_mosquitto
def test_auto_skips_an_http_server_with_a_warning_and_takes_the_next_broker(
    http_server: BrokerAddress, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    with Mosquitto() as mosquitto:
        picked = choose_broker("auto", [str(http_server), str(mosquitto.address)])
        assert picked.address == mosquitto.address
        assert picked.owned is None  # found, not started: not ours to stop
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(str(http_server) in w and "not an MQTT broker" in w for w in warnings), warnings


@needs_mosquitto
def test_auto_with_only_an_http_server_starts_mosquitto_on_another_port(
    http_server: BrokerAddress, prefix: str
) -> None:
    # the HTTP server also holds the port anima would start its broker on
    picked = choose_broker("auto", [str(http_server)], embedded_port=http_server.port)
    try:
        assert isinstance(picked.owned, OwnedMosquitto)
        assert picked.kind == "Mosquitto"
        assert picked.address.port != http_server.port
        assert probe(picked.address).answer is Answer.MQTT
        folder = picked.owned.mosquitto.config_path
        assert folder is not None
        assert "listener" in folder.read_text()
    finally:
        assert picked.owned is not None
        picked.owned.stop()
    assert not answers(picked.address)
    assert not folder.exists()  # stopped with the runtime, folder removed


def test_without_mosquitto_installed_auto_falls_back_to_amqtt_and_says_so(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(choice, "find_mosquitto", lambda: None)  # as on a machine without it
    caplog.set_level(logging.WARNING)
    picked = choose_broker("auto", [str(closed_port())], embedded_port=free_port())
    try:
        assert isinstance(picked.owned, EmbeddedBroker)
        assert picked.kind == "amqtt"
        assert probe(picked.address).answer is Answer.MQTT
    finally:
        assert picked.owned is not None
        picked.owned.stop()
    assert any("apt-get install mosquitto" in r.getMessage() for r in caplog.records)


def test_an_unknown_embedded_kind_is_refused() -> None:
    with pytest.raises(ConfigError, match="auto, mosquitto or amqtt: 'rabbit'"):
        choose_broker("embedded", [], free_port(), "rabbit")


# ---------------------------------------------------------------------------- amqtt
def test_amqtt_sends_a_new_client_no_retained_message_it_did_not_subscribe_to() -> None:
    """The root of amqtt's lost QoS 0 commands: ``mosquitto_pub`` was sent others' retained
    messages, never read them, and its close reset the connection before amqtt read its PUBLISH.
    """
    broker = EmbeddedBroker(free_port())
    broker.start()
    try:
        with MqttProbe(broker.address) as robot:
            robot.publish("r/agent/status", "online", qos=1, retain=True)
        with MqttProbe(broker.address, subscribe="r/agent/status") as watcher:
            assert watcher.wait_for("r/agent/status", timeout=2).retain  # subscribed: sent
            # a bystander that holds no filter when it connects (it subscribes to its own echo
            # after the CONNACK); amqtt sends a new client what it sends at connect before it
            # starts delivering, so its own echo comes after any of that: a barrier
            with MqttProbe(broker.address, subscribe="x/echo") as bystander:
                bystander.publish("x/echo", "", qos=1)
                bystander.wait_for("x/echo", timeout=2)
                assert [m.topic for m in bystander.messages()] == ["x/echo"]
    finally:
        broker.stop()


# a raw MQTT 3.1.1 client: CONNECT (client id "nr", clean session), SUBSCRIBE f/x at QoS 0
RAW_CONNECT = b"\x10\x0e\x00\x04MQTT\x04\x02\x00\x3c\x00\x02nr"
RAW_SUBSCRIBE = b"\x82\x08\x00\x01\x00\x03f/x\x00"


def test_amqtt_leaves_no_connection_open_after_stop() -> None:
    """Connections amqtt 0.12 never closed: one that hangs up before its CONNECT, one that
    sends garbage, one idle mid-CONNECT at stop, and a subscriber that stopped reading with
    megabytes queued for it. ``stop()`` closes them all: no socket is left to the garbage
    collector (a ``ResourceWarning``, an error in this suite), and it does not hang."""
    broker = EmbeddedBroker(free_port())
    broker.start()
    address = (broker.address.host, broker.address.port)
    raw: list[socket.socket] = []
    try:
        with socket.create_connection(address, timeout=2):
            pass  # hangs up at once
        with socket.create_connection(address, timeout=2) as garbage:
            garbage.sendall(b"GET / HTTP/1.1\r\n\r\n")
        idle = socket.create_connection(address, timeout=2)
        idle.sendall(RAW_CONNECT[:5])  # half a CONNECT, then nothing
        raw.append(idle)
        deaf = socket.socket()
        deaf.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        deaf.settimeout(2)
        deaf.connect(address)
        raw.append(deaf)
        deaf.sendall(RAW_CONNECT + RAW_SUBSCRIBE)
        assert deaf.recv(4)[:1] == b"\x20"  # CONNACK; from now on it reads nothing
        with MqttProbe(broker.address, subscribe="f/done") as sender:
            payload = b"x" * 65536
            for _ in range(100):  # 6.5 MB: more than loopback's buffers hold for a deaf peer
                sender.publish("f/x", payload)
            sender.publish("f/done", "", qos=1)
            sender.wait_for("f/done", timeout=10)  # the broker still serves others
        began = time.monotonic()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            broker.stop()
            gc.collect()
        assert time.monotonic() - began < 10
        assert [str(w.message) for w in caught if w.category is ResourceWarning] == []
    finally:
        for sock in raw:
            sock.close()
        broker.stop()


def test_amqtts_flood_of_tracebacks_is_bounded_in_the_log() -> None:
    from anima.frontdoors.mqtt.broker import _FloodQuieter

    quieter = _FloodQuieter()
    try:
        raise TimeoutError("Timeout waiting for PUBACK")
    except TimeoutError:
        exc_info = sys.exc_info()
    passed = []
    for n in range(2000):
        record = logging.LogRecord(
            "amqtt.broker", logging.ERROR, __file__, 1, "Task %d failed", (n,), exc_info
        )
        if quieter.filter(record):
            passed.append(record)
    assert [r.getMessage() for r in passed] == [
        "Task 0 failed",
        "Task 1 failed",
        "Task 2 failed",
        "Task 999 failed (×1000 so far)",
        "Task 1999 failed (×2000 so far)",
    ]
    assert all(r.exc_info is None for r in passed)  # no traceback per message


# ---------------------------------------------------------------------------- delivery
def mosquitto_pub(address: BrokerAddress, topic: str, message: str) -> None:
    """Debian's own client, as a user runs it: connect, publish, disconnect at once."""
    assert MOSQUITTO_PUB is not None
    subprocess.run(
        [MOSQUITTO_PUB, "-h", address.host, "-p", str(address.port), "-t", topic, "-m", message],
        check=True,
        timeout=10,
    )


@needs_mosquitto
@needs_mosquitto_pub
def test_mosquitto_pub_at_qos_0_reaches_the_runtime_5_of_5_through_the_default_broker(
    prefix: str,
) -> None:
    picked = choose_broker("auto", [str(closed_port())], embedded_port=free_port())
    assert picked.kind == "Mosquitto"
    assert picked.owned is not None
    cfg = robot_config(prefix)
    runtime = Runtime(cfg, driver=SimDriver())
    runtime.attach(picked.owned)  # as anima serve does: stopped after the door
    door = MqttFrontDoor(runtime, cfg.mqtt, picked.address)
    runtime.attach(door)
    topic = Topics(prefix).control + "animation"
    runtime.start()
    try:
        assert door.wait_connected(5)
        for _ in range(5):
            mosquitto_pub(picked.address, topic, "LOOKUP_Waving")  # QoS 0, the default
        wait_until(lambda: door.dispatcher.executed == 5, 5, "all 5 carried out")
        assert door.received == 5
        assert door.rejected == 0
    finally:
        runtime.stop(ease=False)  # no real second easing to rest
    assert not answers(picked.address)  # the runtime stopped its broker


@needs_mosquitto_pub
def test_mosquitto_pub_at_qos_0_reaches_the_runtime_through_the_amqtt_fallback_too(
    prefix: str,
) -> None:
    picked = choose_broker("embedded", [], free_port(), "amqtt")
    assert picked.owned is not None
    cfg = robot_config(prefix)
    runtime = Runtime(cfg, driver=SimDriver())
    runtime.attach(picked.owned)
    door = MqttFrontDoor(runtime, cfg.mqtt, picked.address)
    runtime.attach(door)
    topic = Topics(prefix).control + "animation"
    runtime.start()
    try:
        assert door.wait_connected(5)
        wait_until(lambda: door.connects == 1, 1, "connected")
        for _ in range(10):  # the door's status and state are retained, as in anima serve
            mosquitto_pub(picked.address, topic, "LOOKUP_Waving")
        wait_until(lambda: door.received == 10, 5, f"all 10 arrived ({door.received})")
    finally:
        runtime.stop(ease=False)  # no real second easing to rest


@needs_mosquitto
@needs_mosquitto_pub
def test_anima_serve_starts_mosquitto_serves_mosquitto_pub_and_leaves_no_broker_when_killed(
    tmp_path: Path, prefix: str
) -> None:
    port = free_port()
    config = tmp_path / "anima.yaml"
    config.write_text(
        "mqtt:\n"
        f"  prefix: {prefix}\n"
        f"  candidates: ['{closed_port()}']\n"
        f"  embedded_port: {port}\n"
        "speech:\n  enabled: false\n"
        "serve:\n  status_interval_s: 0.5\n",
        encoding="utf-8",
    )
    # killed, anima cleans nothing up: its pid file and its broker's folder go in tmp_path
    # (make test left one of each in the temp folder every run)
    env = dict(os.environ, PYTHONUNBUFFERED="1", ANIMA_WEB__ENABLED="false",
               XDG_RUNTIME_DIR=str(tmp_path), TMPDIR=str(tmp_path))  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "anima", "serve", "--config", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    address = BrokerAddress("127.0.0.1", port)
    topics = Topics(prefix)
    try:
        end = time.monotonic() + 30
        while time.monotonic() < end and not any("mqtt connected" in x for x in lines):
            line = proc.stdout.readline()
            assert line, "serve ended early:\n" + "".join(lines)
            lines.append(line)
        text = "".join(lines)
        assert f"anima MQTT: Mosquitto broker started {address}" in text, text
        assert "| mqtt connected" in text  # the status line says MQTT hears
        with MqttProbe(address, subscribe=topics.feedback("animation_done")) as watcher:
            for _ in range(5):
                mosquitto_pub(address, topics.control + "animation", "LOOKUP_Waving")
            # each one ends (done, or preempted by the next): 5 of 5 arrived
            watcher.wait_for(topics.feedback("animation_done"), count=5, timeout=30)
        proc.send_signal(signal.SIGKILL)  # no clean-up code runs in anima
        proc.wait(10)
        # the kernel ended the broker with it (PR_SET_PDEATHSIG): the port is free again
        assert eventually(lambda: not answers(address), 5), "Mosquitto outlived anima"
        assert list(tmp_path.glob("anima-mosquitto-*"))  # where a killed anima leaves it
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)
