"""The SDK against the simulated robot, three ways: the runtime in this process (``Robot.local``),
and a real runtime served over the embedded MQTT broker and over its REST API and WebSocket
(``Robot.connect("mqtt://…")``, ``Robot.connect("http://…")``). Every runtime runs on an
autojump :class:`~anima.testing.FakeClock` (the ``clock`` fixture): speech (the scripted engine
into a null sink on that clock), animations and the simulated humanoid take fake seconds, which
pass as soon as the runtime's threads are idle. The SDK's own waits (handles, ``open``) and the
sockets stay on real time; a test that needs the runtime still while it does several things
holds the clock (``with clock.hold():``)."""

from __future__ import annotations

import dataclasses
import itertools
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from anima import Robot
from anima.build import build
from anima.config import (
    AnimaConfig,
    BehaviourConfig,
    BlinkConfig,
    BreathingConfig,
    HumanoidConfig,
    McpConfig,
    MotionConfig,
    MqttConfig,
    ServeConfig,
    SpeechConfig,
    WebConfig,
)
from anima.drivers.sim import SimDriver
from anima.frontdoors.mqtt.broker import EmbeddedBroker, free_port
from anima.frontdoors.mqtt.frontdoor import MqttFrontDoor
from anima.frontdoors.web import WebFrontDoor
from anima.runtime import Runtime
from anima.speech.sinks import NullSink
from anima.testing import FakeClock, waiting
from anima.testing.tts import ScriptedEngine

_prefixes = itertools.count(1)
TIMEOUT = 10.0  # seconds: the robots' default wait; every test finishes far sooner
TICK_S = 0.01  # one motion tick at the default 100 Hz


def sdk_config(prefix: str = "nadine", humanoid: str = "none") -> AnimaConfig:
    """Quiet idle life (no breathing, blink or periodic full blink), speech on."""
    motion = MotionConfig(
        breathing=BreathingConfig(enabled=False), blink=BlinkConfig(enabled=False)
    )
    return AnimaConfig(
        mqtt=MqttConfig(prefix=prefix),
        motion=motion,
        behaviour=BehaviourConfig(full_blink_every_s=600.0),
        # the humanoid's state read 20 times a (real) second: fresh for the tests that poll it
        humanoid=HumanoidConfig(type=humanoid, sim_port=0, state_hz=20.0),
        serve=ServeConfig(shutdown_s=0.2),  # a short ease to rest when a local robot closes
    )


def local_robot(clock: FakeClock, humanoid: str = "none") -> Robot:
    """A robot whose runtime runs in this process on ``clock``."""
    return Robot.local(
        sdk_config(humanoid=humanoid),
        driver=SimDriver(),
        clock=clock,
        tts=[ScriptedEngine()],
        audio_sink=NullSink(clock),
        timeout=TIMEOUT,
    )


@pytest.fixture
def clock() -> Iterator[FakeClock]:
    """The test's runtimes' clock: fake seconds, jumping whenever their threads are idle; closed
    after them (a fixture they use is torn down after them)."""
    with FakeClock(autojump=True) as fake:
        yield fake


@pytest.fixture(scope="session")
def embedded_broker() -> Iterator[EmbeddedBroker]:
    broker = EmbeddedBroker(free_port())
    broker.start()
    yield broker
    broker.stop()


@dataclass
class Served:
    """A runtime with an MQTT door on the embedded broker and the web door on a free port, as
    `anima serve` runs it."""

    runtime: Runtime
    url: str  # mqtt://host:port
    prefix: str
    http_url: str  # http://127.0.0.1:port/


ServeFactory = Callable[..., Served]


@pytest.fixture
def serve(embedded_broker: EmbeddedBroker, clock: FakeClock) -> Iterator[ServeFactory]:
    """``serve(speech=True, humanoid="none")``: start a served runtime on its own prefix (with
    the simulated Adam when ``humanoid="sim"``), on the test's ``clock`` (on the real one with
    ``real_time=True``); all stopped at teardown."""
    runtimes: list[Runtime] = []

    def start(*, speech: bool = True, humanoid: str = "none", real_time: bool = False) -> Served:
        prefix = f"sdk{os.getpid()}n{next(_prefixes)}"
        cfg = dataclasses.replace(
            sdk_config(prefix, humanoid),
            speech=SpeechConfig(enabled=speech),
            web=WebConfig(port=0),
            mcp=McpConfig(http=False),  # no script here speaks MCP: its stop costs 0.25 s
        )
        runtime = build(
            cfg,
            doors=False,
            driver=SimDriver(),
            clock=None if real_time else clock,
            tts=[ScriptedEngine()],
            audio_sink=NullSink(None if real_time else clock),
        )
        door = MqttFrontDoor(runtime, cfg.mqtt, embedded_broker.address)
        runtime.attach(door)
        web = WebFrontDoor(runtime, cfg.web)
        runtime.attach(web)
        runtimes.append(runtime)
        runtime.start()
        assert door.wait_connected(5), "the door did not connect"
        address = embedded_broker.address
        return Served(runtime, f"mqtt://{address.host}:{address.port}", prefix, web.url)

    yield start
    for runtime in runtimes:
        runtime.stop(ease=False)


@pytest.fixture
def served(serve: ServeFactory) -> Served:
    """A runtime with speech, served over the embedded broker."""
    return serve()


@pytest.fixture(params=["local", "mqtt", "http"])
def robot(request: pytest.FixtureRequest) -> Iterator[Robot]:
    """An open robot: in-process, or a client of a served runtime over MQTT or REST."""
    if request.param == "local":
        r = local_robot(request.getfixturevalue("clock"))
    elif request.param == "mqtt":
        s: Served = request.getfixturevalue("served")
        r = Robot.connect(s.url, prefix=s.prefix, timeout=TIMEOUT)
    else:
        s = request.getfixturevalue("served")
        r = Robot.connect(s.http_url, timeout=TIMEOUT)
    with r:
        yield r


def eventually(check: Callable[[], bool], timeout: float = 5.0) -> None:
    """Fail unless ``check`` holds within ``timeout`` seconds (:func:`anima.testing.eventually`,
    asserted)."""
    assert waiting.eventually(check, timeout, every=0.02), "the condition never held"


def tick_until(clock: FakeClock, check: Callable[[], bool], timeout: float = 5.0) -> None:
    """Inside ``clock.hold()``: move the held clock one motion tick at a time until ``check``
    holds, each tick given up to a tick of real time to show (a state message, an event on a
    socket), so the runtime runs no faster than real time here and the network keeps up with
    it; fail after ``timeout`` real seconds. No tick runs when ``check`` holds already."""
    end = time.monotonic() + timeout
    while not waiting.eventually(check, TICK_S, every=0.002):
        assert time.monotonic() < end, "the condition never held"
        clock.advance(TICK_S)
