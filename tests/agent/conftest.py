"""Shared fixtures for the agent tests: a started runtime on the simulated robot, on autojump fake
time, with a scripted TTS engine and a null sink on that clock; the same stepped by hand
(FakeTimeRobot); an event recorder with bounded, event-driven waits; and a scripted
OpenAI-compatible server with a planner on it."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest

from anima.agent.actions import ActionRegistry
from anima.agent.assembly import build_conversation
from anima.agent.conversation import Conversation
from anima.agent.executor import Executor
from anima.agent.planners.openai import OpenAIPlanner
from anima.agent.vocabulary import builtin_registry, robot_registry
from anima.config import AnimaConfig, BlinkConfig, BreathingConfig, MotionConfig, MqttConfig
from anima.drivers.sim import SimDriver
from anima.events import CommandRejected, Event, EventHub, MoveStarted
from anima.runtime import Runtime
from anima.speech.sinks import NullSink
from anima.testing.clock import FakeClock
from anima.testing.events import EventRecorder
from anima.testing.fake_time import FakeTimeRobot
from anima.testing.llm import ScriptedOpenAIServer
from anima.testing.tts import ScriptedEngine


class Recorder(EventRecorder):
    """Every event the runtime publishes (anima.testing.EventRecorder; subscribed by the
    fixture); ``wait_for`` raises AssertionError when the awaited event never came."""


class Ears:
    """The listener as the conversation sees it: a recognizer, a gate, start and stop (so a
    test can give a conversation a fake recognizer without audio)."""

    def __init__(self, recognizer: object) -> None:
        self.recognizer = recognizer

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def gate(self, flag: bool) -> None: ...


def started_conversation(runtime: Runtime, **kw: Any) -> Conversation:
    """The agent's conversation on a started ``runtime`` (no audio in), attached as its agent
    (which starts it)."""
    conv = build_conversation(runtime, runtime.config, audio_in="none", **kw)
    runtime.attach_agent(conv)
    return conv


def quiet_config() -> AnimaConfig:
    """No MQTT, no breathing or blinking: the frames move only when the agent asks."""
    motion = MotionConfig(
        breathing=BreathingConfig(enabled=False), blink=BlinkConfig(enabled=False)
    )
    return AnimaConfig(mqtt=MqttConfig(enabled=False), motion=motion)


def agent_config(config: AnimaConfig | None = None) -> AnimaConfig:
    """``config`` (default :func:`quiet_config`) with the agent on."""
    cfg = config or quiet_config()
    return dataclasses.replace(cfg, agent=dataclasses.replace(cfg.agent, enabled=True))


@pytest.fixture
def robot() -> Iterator[FakeTimeRobot]:
    """The runtime with the configured agent (the rules planner, no audio in), on fake time."""
    with FakeTimeRobot(agent_config(), history=5000) as fake:
        yield fake


def agent_moves(robot: FakeTimeRobot, name: str, *, within: float = 5.0) -> MoveStarted:
    """Wait for the agent's thread to queue a move, then tick to the start of ``name``."""
    mark = robot.recorder.mark()
    robot.settle(lambda: robot.runtime.moving or robot.recorder.of(MoveStarted, since=mark))
    started = robot.advance_until(
        lambda e: isinstance(e, MoveStarted) and e.name == name, within=within, since=mark
    )
    assert isinstance(started, MoveStarted)
    return started


@contextlib.contextmanager
def autojump_runtime(
    config: AnimaConfig | None = None, *, clock: FakeClock | None = None, **parts: Any
) -> Iterator[Runtime]:
    """A started runtime (default :func:`quiet_config`) on autojump fake time: its threads run
    as on a real clock, and its time jumps to the next deadline whenever they all wait, so a
    5 s utterance plays in a blink of real time (:class:`~anima.testing.FakeClock`). ``parts``
    replace the simulated driver, the scripted voice or the null sink on that clock (``clock``,
    to build a part on it first); the clock is closed with the runtime."""
    clock = clock or FakeClock(autojump=True)
    parts.setdefault("driver", SimDriver(history=5000))
    parts.setdefault("tts", [ScriptedEngine()])
    parts.setdefault("audio_sink", NullSink(clock))
    rt = Runtime(config or quiet_config(), clock=clock, **parts)
    try:
        rt.start()
        try:
            yield rt
        finally:
            rt.stop(ease=False)
    finally:
        clock.close()  # its watcher ends, and any wait left on it returns


def fake_clock(runtime: Runtime) -> FakeClock:
    """The autojump clock ``runtime`` runs on (to hold it: ``with fake_clock(rt).hold():``)."""
    clock = runtime.clock
    assert isinstance(clock, FakeClock)
    return clock


@pytest.fixture
def runtime() -> Iterator[Runtime]:
    """The runtime on autojump fake time (:func:`autojump_runtime`)."""
    with autojump_runtime() as rt:
        yield rt


@pytest.fixture
def real_time_runtime() -> Iterator[Runtime]:
    """The runtime on the real clock, for a test whose subject is real time."""
    rt = Runtime(
        quiet_config(),
        driver=SimDriver(history=5000),
        audio_sink=NullSink(),
        tts=[ScriptedEngine()],
    )
    rt.start()
    try:
        yield rt
    finally:
        rt.stop(ease=False)


@pytest.fixture
def recorder(runtime: Runtime) -> Recorder:
    rec = Recorder()
    runtime.events.subscribe(rec)
    return rec


@pytest.fixture
def registry(runtime: Runtime) -> ActionRegistry:
    return robot_registry(runtime)


@pytest.fixture
def executor(runtime: Runtime) -> Iterator[Executor]:
    """An executor whose plan (if a test leaves one running) is canceled at teardown."""
    ex = Executor(runtime)
    try:
        yield ex
    finally:
        ex.close()


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as srv:
        yield srv


@pytest.fixture
def hub() -> EventHub:
    return EventHub()  # not started: the test drains it


def openai_planner(
    server: ScriptedOpenAIServer, hub: EventHub | None = None, **kw: Any
) -> OpenAIPlanner:
    """A planner on ``server`` with the built-in actions (``nod`` and ``LOOKUP_Waving``)."""
    return OpenAIPlanner(
        builtin_registry(animations=["nod", "LOOKUP_Waving"]),
        base_url=server.base_url,
        model="test-model",
        events=hub,
        **kw,
    )


def rejections(hub: EventHub) -> list[CommandRejected]:
    """The CommandRejected events published on ``hub`` so far (drains it)."""
    seen: list[Event] = []
    unsubscribe = hub.subscribe(seen.append, CommandRejected.kind)
    hub.drain()
    unsubscribe()
    return [e for e in seen if isinstance(e, CommandRejected)]
