"""The scripts in examples/, each run against the simulated robot."""

from __future__ import annotations

import contextlib
import importlib.util
import subprocess
import sys
import threading
from contextlib import ExitStack
from pathlib import Path
from types import ModuleType

import pytest

from anima import Robot
from anima.events import Event, SpeechEnded
from anima.humanoid.link import HumanoidLink
from anima.runtime import Runtime
from anima.testing import FakeClock

from .conftest import TIMEOUT, Served, ServeFactory, local_robot

pytestmark = pytest.mark.integration

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("transport", ["mqtt", "http"])
def test_hello_as_a_script_against_a_served_robot(served: Served, transport: str) -> None:
    script = EXAMPLES / "hello.py"
    args = [served.url, served.prefix] if transport == "mqtt" else [served.http_url]
    result = subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "RobotSnapshot(" in result.stdout  # over MQTT the state may lag the look_at
    assert "disconnected" not in result.stderr


def test_conversation_speaks_every_line_with_its_gesture(clock: FakeClock) -> None:
    module = load("conversation")
    with local_robot(clock) as robot:
        played: list[str] = []
        robot.on("animation_done", lambda e: played.append(getattr(e, "name", "")))
        said: list[Event] = []
        robot.on("start_speak", said.append)
        module.main(robot)
        assert [getattr(e, "text", "") for e in said] == [line for line, _ in module.SCRIPT]
        assert robot.state().gaze_target is None
    assert set(played) >= {gesture for _, gesture in module.SCRIPT}


def test_follow_point_sends_a_stream_of_points(clock: FakeClock) -> None:
    with local_robot(clock) as robot:
        sent = load("follow_point").main(robot, seconds=0.5)
        assert sent >= 3
        assert robot.state().looking


def held_from_the_end_of_speech(runtime: Runtime, clock: FakeClock, held: ExitStack) -> None:
    """Hold ``clock`` (until ``held`` closes) from the moment ``runtime`` ends an utterance: the
    4 s greeting the script starts before its 1.5 s of speech is still on when the test looks,
    however long its requests take in real time."""
    runtime.subscribe(lambda _event: held.enter_context(clock.hold()), SpeechEnded.kind)


def test_humanoid_greeting_with_the_simulated_adam(clock: FakeClock) -> None:
    robot: Robot = local_robot(clock, humanoid="sim")
    with robot, ExitStack() as held:
        held_from_the_end_of_speech(robot.runtime, clock, held)
        load("humanoid_greeting").main(robot)
        assert robot.humanoid.state().fsm_name == "Stand"
        assert robot.humanoid.state().current_motion == "Greeting"


class _motions_seen:  # noqa: N801 - read as what it gives: `with _motions_seen(link) as seen`
    """The simulated Adam's current motion polled every 50 ms while the block runs."""

    def __init__(self, link: HumanoidLink) -> None:
        self._link = link
        self.motions: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self._stop.wait(0.05):
            client = self._link.client
            if client is not None:
                with contextlib.suppress(Exception):  # not linked yet, or a call cut short
                    self.motions.add(client.state().current_motion)

    def __enter__(self) -> _motions_seen:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


@pytest.mark.parametrize("transport", ["http", "mqtt"])
def test_humanoid_greeting_served_with_the_simulated_adam(
    serve: ServeFactory, transport: str
) -> None:
    # on the real clock: the script's requests cross real sockets between starting the 4 s
    # greeting and the end of its speech, while fake time would race ahead of them (an HTTP
    # round trip of 50 ms on a loaded machine was a second of fake time)
    served = serve(humanoid="sim", real_time=True)
    if transport == "http":
        robot = Robot.connect(served.http_url, timeout=TIMEOUT)
    else:
        robot = Robot.connect(served.url, prefix=served.prefix, timeout=TIMEOUT)
    link = served.runtime.humanoid
    assert link is not None
    seen = _motions_seen(link)  # the 4 s greeting may be over once a loaded machine has spoken
    with robot, seen:
        load("humanoid_greeting").main(robot)
        body = robot.humanoid
        assert body.state().fsm_name == "Stand"
    # the same script as in-process: the served runtime's AdamClient did the work, as the
    # simulated Adam's own state said while it greeted
    assert "Greeting" in seen.motions
