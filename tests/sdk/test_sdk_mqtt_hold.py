"""Over MQTT the SDK holds a command while the robot is not online (issue 30 item 2): a broker
that keeps no session drops what is published before the robot subscribes again, estop
included. The robot here is a probe publishing the retained status, as the door does."""

from __future__ import annotations

import os
import threading
import time

import pytest

from anima.errors import RobotNotConnectedError
from anima.frontdoors.mqtt.broker import EmbeddedBroker
from anima.sdk.mqtt import MqttBackend
from anima.testing.mqtt import MqttProbe

pytestmark = pytest.mark.integration


def test_an_estop_is_held_until_the_robot_is_online_again_and_refused_if_it_never_is(
    embedded_broker: EmbeddedBroker,
) -> None:
    prefix = f"hold{os.getpid()}"
    status, estop = f"{prefix}/agent/status", f"{prefix}/agent/control/estop"
    address = embedded_broker.address
    with MqttProbe(address, subscribe=estop) as robot:
        robot.publish(status, "online", qos=1, retain=True)
        backend = MqttBackend(f"mqtt://{address.host}:{address.port}", prefix)
        backend.open(timeout=1.0)
        try:
            robot.publish(status, "offline", qos=1, retain=True)  # its will: the link is down
            time.sleep(0.1)  # the backend heard it
            sent = threading.Event()

            def stop_it() -> None:
                backend.estop()
                sent.set()

            threading.Thread(target=stop_it).start()
            time.sleep(0.3)
            assert not sent.is_set()
            assert robot.messages(estop) == []  # held, not published into the void
            robot.publish(status, "online", qos=1, retain=True)  # back
            assert sent.wait(2)
            robot.wait_for(estop, timeout=2)
            robot.publish(status, "offline", qos=1, retain=True)
            time.sleep(0.1)
            t0 = time.monotonic()
            with pytest.raises(RobotNotConnectedError, match=r"not sent: .* is not online"):
                backend.estop()
            assert 0.9 <= time.monotonic() - t0 < 2.0  # the Robot's timeout, 1 s here
        finally:
            backend.close()
            robot.publish(status, b"", qos=1, retain=True)
