"""A runtime on the simulated robot with scripted speech and no other doors, and its MCP core."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from anima.agent.vocabulary import robot_registry
from anima.build import build
from anima.config import (
    AnimaConfig,
    BlinkConfig,
    BreathingConfig,
    McpConfig,
    MotionConfig,
    MqttConfig,
    SpeechConfig,
    WebConfig,
)
from anima.frontdoors.mcp.robot import McpRobot
from anima.runtime import Runtime
from anima.testing.tts import ScriptedEngine


def quiet_config(mcp: McpConfig | None = None) -> AnimaConfig:
    """No doors, no breathing or blinking: frames move only when a tool asks."""
    motion = MotionConfig(
        breathing=BreathingConfig(enabled=False), blink=BlinkConfig(enabled=False)
    )
    return AnimaConfig(
        mqtt=MqttConfig(enabled=False),
        web=WebConfig(enabled=False),
        motion=motion,
        speech=SpeechConfig(audio_out="null"),
        mcp=mcp or McpConfig(),
    )


@pytest.fixture(scope="module")
def runtime() -> Iterator[Runtime]:
    rt = build(quiet_config(), tts=[ScriptedEngine()])
    rt.start()
    try:
        yield rt
    finally:
        rt.stop(ease=False)


def make_mcp(runtime: Runtime, config: McpConfig | None = None) -> McpRobot:
    """An MCP core on ``runtime`` (the emergency stop released first: tests share it)."""
    from anima import commands as cmd

    runtime.execute(cmd.ResetEmergencyStop())
    robot = McpRobot(runtime, robot_registry(runtime), config or McpConfig())
    robot.start()
    return robot


@pytest.fixture
def mcp(runtime: Runtime) -> Iterator[McpRobot]:
    robot = make_mcp(runtime)
    try:
        yield robot
    finally:
        robot.stop()
