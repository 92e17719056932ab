"""The SDK against the simulated robot, three ways: the runtime in this process (``Robot.local``),
and a real runtime served over the embedded MQTT broker and over its REST API and WebSocket
(``Robot.connect("mqtt://…")``, ``Robot.connect("http://…")``). Speech is the scripted engine
into a real-time null sink, so utterances take real (short) time."""

from __future__ import annotations

import dataclasses
import itertools
import os
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
from anima.testing import waiting
from anima.testing.tts import ScriptedEngine

_prefixes = itertools.count(1)
TIMEOUT = 10.0  # seconds: the robots' default wait; every test finishes far sooner


def sdk_config(prefix: str = "nadine", humanoid: str = "none") -> AnimaConfig:
    """Quiet idle life (no breathing, blink or periodic full blink), speech on."""
    motion = MotionConfig(
        breathing=BreathingConfig(enabled=False), blink=BlinkConfig(enabled=False)
    )
    return AnimaConfig(
        mqtt=MqttConfig(prefix=prefix),
        motion=motion,
        behaviour=BehaviourConfig(full_blink_every_s=600.0),
        humanoid=HumanoidConfig(type=humanoid, sim_port=0),
        serve=ServeConfig(shutdown_s=0.2),  # a short ease to rest when a local robot closes
    )


def local_robot(humanoid: str = "none") -> Robot:
    return Robot.local(
        sdk_config(humanoid=humanoid),
        driver=SimDriver(),
        tts=[ScriptedEngine()],
        audio_sink=NullSink(),
        timeout=TIMEOUT,
    )


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
def serve(embedded_broker: EmbeddedBroker) -> Iterator[ServeFactory]:
    """``serve(speech=True, humanoid="none")``: start a served runtime on its own prefix (with
    the simulated Adam when ``humanoid="sim"``); all stopped at teardown."""
    runtimes: list[Runtime] = []

    def start(*, speech: bool = True, humanoid: str = "none") -> Served:
        prefix = f"sdk{os.getpid()}n{next(_prefixes)}"
        cfg = dataclasses.replace(
            sdk_config(prefix, humanoid),
            speech=SpeechConfig(enabled=speech),
            web=WebConfig(port=0),
        )
        runtime = build(
            cfg, doors=False, driver=SimDriver(), tts=[ScriptedEngine()], audio_sink=NullSink()
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
        r = local_robot()
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
