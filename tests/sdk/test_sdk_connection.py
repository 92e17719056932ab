"""Opening and closing a Robot, and the errors when there is no robot to talk to."""

from __future__ import annotations

import contextlib
import dataclasses
import http.server
import threading

import pytest

from anima import Robot
from anima.config import SpeechConfig, WebConfig
from anima.drivers.sim import SimDriver
from anima.errors import (
    CommandRefusedError,
    CommandRejectedByRobotError,
    ConfigError,
    NonFiniteValueError,
    NotSupportedError,
    RobotNotConnectedError,
)
from anima.frontdoors.mqtt.broker import EmbeddedBroker, free_port
from anima.frontdoors.web import WebFrontDoor
from anima.runtime import Runtime
from anima.speech.sinks import NullSink
from anima.testing import FakeClock
from anima.testing.tts import ScriptedEngine

from .conftest import Served, ServeFactory, local_robot, sdk_config

pytestmark = pytest.mark.integration


def test_a_robot_that_is_not_open_says_so(clock: FakeClock) -> None:
    robot = local_robot(clock)
    assert not robot.is_open
    with pytest.raises(RobotNotConnectedError, match="not open"):
        robot.say("hello")
    with pytest.raises(RobotNotConnectedError):
        robot.state()
    remote = Robot.connect("mqtt://127.0.0.1:1", prefix="nowhere")
    with pytest.raises(RobotNotConnectedError, match="not open"):
        remote.play("nod")


def test_the_context_manager_opens_and_closes(clock: FakeClock) -> None:
    held = contextlib.ExitStack()
    held.enter_context(clock.hold())  # the speech cannot end before the robot closes …
    with local_robot(clock) as robot:
        assert robot.is_open
        assert robot.runtime.engine.running
        # … which ends it (shutdown): then time moves again, and the motion loop can stop
        robot.on("end_speak", lambda _event: held.close())
        handle = robot.say("one two three four five six seven eight nine ten eleven twelve")
    held.close()
    assert not robot.is_open
    with pytest.raises(RobotNotConnectedError):
        handle.wait(5)  # closing fails what was still waiting
    with pytest.raises(RobotNotConnectedError):
        robot.look_at(1.0, 0.0, 0.0)


def test_no_broker_at_the_address() -> None:
    robot = Robot.connect(f"mqtt://127.0.0.1:{free_port()}", timeout=1.0)
    with pytest.raises(RobotNotConnectedError, match="no MQTT broker answered"):
        robot.open()
    assert not robot.is_open


def test_a_broker_without_a_runtime_on_that_prefix(embedded_broker: EmbeddedBroker) -> None:
    address = embedded_broker.address
    robot = Robot.connect(f"mqtt://{address.host}:{address.port}", prefix="empty", timeout=1.0)
    with pytest.raises(RobotNotConnectedError, match="no anima runtime is online on empty/"):
        robot.open()


def test_the_served_robot_is_reached_and_closed(served: Served) -> None:
    robot = Robot.connect(served.url, prefix=served.prefix, timeout=5.0)
    with robot:
        assert repr(robot).endswith("open)")
        with pytest.raises(NotSupportedError, match="no runtime in this process"):
            _ = robot.runtime
    with pytest.raises(RobotNotConnectedError):
        robot.stop_speaking()


@pytest.mark.parametrize(
    "url", ["tcp://host:1883", "host:1883", "mqtt://", "mqtt://host:notaport", "http://host:x"]
)
def test_bad_addresses_are_config_errors(url: str) -> None:
    with pytest.raises(ConfigError, match="robot address"):
        Robot.connect(url)


def test_speech_refused_in_process_says_why(clock: FakeClock) -> None:
    cfg = dataclasses.replace(sdk_config(), speech=SpeechConfig(enabled=False))
    with Robot.local(cfg, driver=SimDriver(), clock=clock) as robot:
        refused = pytest.raises(CommandRefusedError, match="speech is not available")
        with refused:
            robot.say("hello")


def test_speech_refused_over_mqtt_carries_the_runtimes_reason(serve: ServeFactory) -> None:
    mute = serve(speech=False)
    with Robot.connect(mute.url, prefix=mute.prefix, timeout=5.0) as robot:
        errors: list[object] = []
        robot.on("error", errors.append)
        handle = robot.say("hello", wait=False)
        with pytest.raises(CommandRejectedByRobotError, match="speech is not available") as info:
            handle.wait()
        assert info.value.command == f"{mute.prefix}/agent/control/speak"
        assert "speech is disabled" in info.value.reason


def test_no_dashboard_at_the_address() -> None:
    robot = Robot.connect(f"http://127.0.0.1:{free_port()}", timeout=2.0)
    with pytest.raises(RobotNotConnectedError, match="no anima dashboard answers at"):
        robot.open()
    assert not robot.is_open


def test_a_dashboard_with_a_token_needs_it(clock: FakeClock) -> None:
    cfg = dataclasses.replace(sdk_config(), web=WebConfig(port=0, token="s3cret"))
    runtime = Runtime(
        cfg, driver=SimDriver(), clock=clock, tts=[ScriptedEngine()], audio_sink=NullSink(clock)
    )
    door = WebFrontDoor(runtime, cfg.web)
    runtime.attach(door)
    with runtime:
        with pytest.raises(RobotNotConnectedError, match="token"):
            Robot.connect(door.url, timeout=5.0).open()
        with Robot.connect(door.url, token="s3cret", timeout=5.0) as robot:
            assert robot.state().driver_connected
            assert robot.play("LOOKUPPostureDefaultBlink", wait=True).reason == "done"


def test_over_rest_a_refusal_is_the_answer_an_estop_refusal_too(
    served: Served,
) -> None:
    with Robot.connect(served.http_url, timeout=5.0) as robot:
        with pytest.raises(CommandRejectedByRobotError, match="unknown animation") as info:
            robot.play("nodd")  # refused in the answer: no waiting needed
        assert info.value.command == "/api/animation"
        with pytest.raises(CommandRejectedByRobotError, match="'nod' is a gesture, not a posture"):
            robot.look_at_target("nod")
        with pytest.raises(NonFiniteValueError, match="z is not finite"):
            robot.look_at(1.0, 0.0, 1e400)  # caught before sending
        errors: list[object] = []
        robot.on("error", errors.append)
        robot.estop()
        # refused by the estopped runtime, in the answer too (issue 30: no 202 then an event)
        with pytest.raises(CommandRejectedByRobotError, match="emergency stop") as refused:
            robot.play("nod")
        assert refused.value.command == "/api/animation"
        robot.reset()
    assert any("emergency stop" in str(getattr(e, "reason", "")) for e in errors)


def test_the_served_robot_is_reached_over_rest_and_closed(served: Served, clock: FakeClock) -> None:
    robot = Robot.connect(served.http_url, timeout=5.0)
    with clock.hold(), robot:  # the speech cannot end before the robot closes
        assert "(REST)" in repr(robot)
        handle = robot.say("one two three four five six seven eight nine ten eleven twelve")
    with pytest.raises(RobotNotConnectedError):
        handle.wait(5)  # closing fails what was still waiting
    with pytest.raises(RobotNotConnectedError):
        robot.stop_speaking()


def test_over_rest_the_event_stream_comes_back_after_the_server_restarts(
    clock: FakeClock,
) -> None:
    port = free_port()
    cfg = dataclasses.replace(sdk_config(), web=WebConfig(port=port))
    runtime = Runtime(
        cfg, driver=SimDriver(), clock=clock, tts=[ScriptedEngine()], audio_sink=NullSink(clock)
    )
    door = WebFrontDoor(runtime, cfg.web)
    runtime.attach(door)
    with runtime, Robot.connect(f"http://127.0.0.1:{port}", timeout=5.0) as robot:
        with clock.hold():  # the speech cannot end before the dashboard goes away
            speech = robot.say("one two three four five six seven eight nine ten eleven twelve")
            door.stop()  # the dashboard goes away (a restart of anima serve looks the same)
            with pytest.raises(RobotNotConnectedError, match="event stream"):
                speech.wait(5)  # its end_speak can no longer arrive: it fails, it does not hang
        door.start()
        # the stream reconnects by itself; events finish handles again
        assert robot.play("LOOKUPPostureDefaultBlink", wait=True, timeout=10).reason == "done"


def test_a_server_without_the_event_stream_is_not_a_robot() -> None:
    """Something answers /api/state but has no /ws: a clear RobotNotConnectedError."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # the stdlib's name
            body = b'{"v": 1, "t": 0}' if self.path == "/api/state" else b"{}"
            self.send_response(200 if self.path == "/api/state" else 404)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        robot = Robot.connect(f"http://127.0.0.1:{server.server_port}", timeout=3.0)
        with pytest.raises(RobotNotConnectedError, match="no event stream"):
            robot.open()
        assert not robot.is_open
    finally:
        server.shutdown()
        server.server_close()  # its listening socket, else left to the garbage collector
        thread.join(5)
