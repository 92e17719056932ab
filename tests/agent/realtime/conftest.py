"""What the realtime brain's tests share: the agent on a runtime connected to a scripted
server, the function outputs it sent, the runtime still running, a tone as the model's voice."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import numpy as np

from anima import commands as cmd
from anima.agent.realtime import RealtimeAgent
from anima.agent.vocabulary import robot_registry
from anima.config import AnimaConfig
from anima.config.planner import RealtimePlannerConfig
from anima.listening.sources import AudioSource
from anima.runtime import Runtime
from anima.testing.realtime_server import (
    Received,
    ScriptedRealtimeServer,
)


def quiet_config() -> AnimaConfig:
    from anima.config import BlinkConfig, BreathingConfig, MotionConfig, MqttConfig

    motion = MotionConfig(
        breathing=BreathingConfig(enabled=False), blink=BlinkConfig(enabled=False)
    )
    return AnimaConfig(mqtt=MqttConfig(enabled=False), motion=motion)


def settings(server: ScriptedRealtimeServer, **kw: float) -> RealtimePlannerConfig:
    kw.setdefault("reconnect_s", 0.05)
    kw.setdefault("reconnect_max_s", 0.2)
    return RealtimePlannerConfig(url=server.url, **kw)  # type: ignore[arg-type]


@contextlib.contextmanager
def brain(
    runtime: Runtime,
    server: ScriptedRealtimeServer,
    source: AudioSource | None = None,
    **kw: float,
) -> Iterator[RealtimeAgent]:
    """The realtime agent on ``runtime`` (attached, so started), connected to ``server``,
    hearing ``source`` (none by default)."""
    agent = RealtimeAgent(
        runtime,
        robot_registry(runtime),
        settings(server, **kw),
        runtime.config.agent,
        key="sk-t",
        source=source,
    )
    runtime.attach_agent(agent)
    try:
        server.wait_for("session.update")
        yield agent
    finally:
        runtime.detach_agent()


def outputs(server: ScriptedRealtimeServer) -> list[Received]:
    return [
        r
        for r in server.of("conversation.item.create")
        if r.event["item"]["type"] == "function_call_output"
    ]


def still_running(runtime: Runtime) -> None:
    """The loop ticks and execute answers."""
    ticks = runtime.engine.stats().ticks
    assert runtime.execute(cmd.PlayAnimation(name="nod")) is not None
    deadline = time.monotonic() + 5.0
    while runtime.engine.stats().ticks <= ticks + 5:
        assert time.monotonic() < deadline, "the loop stopped ticking"
        time.sleep(0.01)


def tone(seconds: float, hz: float = 220.0) -> bytes:
    """24 kHz PCM16 of a tone (the model's voice)."""
    t = np.arange(int(24_000 * seconds)) / 24_000
    return (6000 * np.sin(2 * np.pi * hz * t)).astype("<i2").tobytes()
