""":func:`build_realtime_agent`: the realtime brain the config describes, for a robot."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from anima.agent.realtime.agent import RealtimeAgent
from anima.config.planner import SECTION, GeminiLivePlannerConfig, RealtimePlannerConfig
from anima.errors import ConfigError

if TYPE_CHECKING:
    from anima.agent.port import RobotPort
    from anima.config import AnimaConfig
    from anima.listening.sources import AudioSource
    from anima.speech.reference import PlaybackReference


def build_realtime_agent(
    robot: RobotPort,
    config: AnimaConfig,
    *,
    playback: PlaybackReference | None = None,
    audio_in: str | AudioSource | None = None,
    environ: dict[str, str] | None = None,
) -> RealtimeAgent:
    """The agent for ``agent.planner.type: openai_realtime`` or ``gemini_live``: the robot's
    registry as tools, the microphone (``audio_in``, default ``agent.audio_in``; through the
    echo canceller when ``listen.duplex``, fed what the sink plays: ``playback``). With
    ``listen_after_wake`` the wake phrase's spotter is ``listen.wake``'s, as the offline
    listener's. A missing key is a ConfigError naming its variable (``anima serve`` says it in
    one line and exits 2): without a key the session could only fail, over and over."""
    from anima.agent.persona import agent_as, load_persona
    from anima.agent.remembering import open_memory
    from anima.agent.vocabulary import robot_registry
    from anima.listening.makers import make_source

    settings = config.agent.planner
    if not isinstance(settings, RealtimePlannerConfig | GeminiLivePlannerConfig):
        raise ConfigError(
            f"{SECTION}.type must be openai_realtime or gemini_live for the realtime brain"
        )
    env = os.environ if environ is None else environ
    key = env.get(settings.key_env, "").strip()
    keyless = isinstance(settings, RealtimePlannerConfig) and settings.auth == "none"
    if not key and not keyless:
        raise ConfigError(
            f"{SECTION}.type {settings.type} needs an API key: set {settings.key_env} "
            f"(or name another variable in {SECTION}.api_key_env; a local server that asks "
            f"for none: {SECTION}.auth none)",
            key=f"{SECTION}.api_key_env",
        )
    registry = robot_registry(robot, user_actions=config.agent.user_actions)
    memory = open_memory(config.agent.memory, registry)  # remember/forget among its tools
    persona = load_persona(config.agent.persona)
    persona.check_actions(set(registry.names()))
    agent = agent_as(config.agent, persona)  # the persona's instructions before the config's
    wanted = config.agent.audio_in if audio_in is None else audio_in
    source = make_source(wanted) if isinstance(wanted, str) else wanted
    duplex = source is not None and config.listen.duplex
    vad = None
    if source is not None and duplex:
        from anima.listening.echo.source import echo_cancelled
        from anima.listening.vad import load_vad

        source = echo_cancelled(source, config.listen, playback)
        vad = load_vad(config.listen.vad)  # the held voice over the robot, as offline
    spotter = None
    if source is not None and settings.listen_after_wake:
        from anima.listening.makers import make_spotter

        spotter = make_spotter(config.listen)  # the listener's (listen.wake), made, not loaded
    brain = RealtimeAgent(
        robot,
        registry,
        settings,
        agent,
        key=key,
        source=source,
        echo_cancelled=duplex,
        barge_in_s=config.listen.barge_in_s,
        vad=vad,
        spotter=spotter,
        memory=memory,
    )
    brain.persona = persona
    return brain
