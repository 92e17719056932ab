"""A restart of anima's own Mosquitto is a link cut, not a loss (issue 30 item 2).

Before, the broker ran with ``persistence false``: restarted, it forgot the door's session, and
every command a client's queue delivered before the door subscribed again was dropped (190 of
400 QoS 1 commands, 4 of 4 estops). Now the broker keeps its sessions in its folder across a
restart, so the commands sent during it reach the robot.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import pytest

from anima.testing.mosquitto import Mosquitto
from anima.testing.mqtt import MqttProbe
from anima.wire.mqtt import Credentials, new_client
from anima.wire.topics import Topics

from .conftest import RobotFactory, wait_until

pytestmark = pytest.mark.integration

COMMANDS = 40


def queued_client(mosquitto: Mosquitto) -> Any:
    """A paho client like any user's: QoS 1 publishes made while the broker is down wait in its
    queue and go out as soon as it reconnects (sooner than the door's 0.25 s backoff)."""
    client = new_client(Credentials(), client_id="restart-sender")
    client.reconnect_delay_set(0.05, 0.2)
    connected = threading.Event()
    client.on_connect = lambda *_a: connected.set()
    client.connect(mosquitto.address.host, mosquitto.address.port, keepalive=10)
    client.loop_start()
    assert connected.wait(3)
    return client


def test_commands_and_estops_sent_during_a_restart_of_anima_s_broker_all_arrive(
    make_robot: RobotFactory, prefix: str
) -> None:
    topics = Topics(prefix)
    with Mosquitto() as broker:
        runtime, door = make_robot(prefix, broker.address)
        assert broker.config_path is not None
        assert "persistence true" in broker.config_path.read_text()
        with MqttProbe(broker.address, subscribe=topics.feedback("error")) as probe:
            sender = queued_client(broker)
            try:
                broker.halt()  # the broker down, its folder kept
                wait_until(lambda: not door.connected, 2, "the door saw the broker go")
                for i in range(COMMANDS):  # queued in the client, sent at its reconnect
                    sender.publish(topics.control + "speak", f"during {i}", qos=1)
                sender.publish(topics.control + "estop", "", qos=1)
                broker.start()
                # speech is off: each speak is answered on the error topic, so each is counted
                wait_until(
                    lambda: len(probe.messages(topics.feedback("error"))) >= COMMANDS,
                    3,
                    f"all {COMMANDS} commands answered",
                )
                wait_until(lambda: runtime.engine.state().estopped, 2, "the estop applied")
            finally:
                sender.disconnect()
                sender.loop_stop()
        folder = broker.config_path.parent
    assert not folder.exists()  # closing removes it, the database with it


def test_stop_removes_the_folder_and_anima_s_broker_is_not_in_its_process_group() -> None:
    # make test left an anima-mosquitto-* folder for every broker a test stopped (not closed);
    # a Ctrl-C in anima's terminal ended its broker under the door (a reconnect WARNING, and a
    # stop slowed by paho's reconnect waits)
    broker = Mosquitto(die_with_parent=True)
    broker.start()
    try:
        assert broker.pid is not None
        assert os.getpgid(broker.pid) != os.getpgid(0)
        assert os.getsid(broker.pid) != os.getsid(0)
        assert broker.config_path is not None
        folder = broker.config_path.parent
        broker.restart()
        assert folder.exists()  # a restart keeps the sessions' database
    finally:
        broker.stop()
    assert not folder.exists()
    assert not broker.running
