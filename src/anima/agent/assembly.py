"""The agent's composition: :func:`build_conversation` makes the configured conversation for a
robot — its registry, planner, executor, and a listener on the configured audio source.

It is given the robot's port (the runtime) and the config; the composition root
(:func:`anima.build.build`) calls it and attaches the conversation to the runtime."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

from anima.agent.actions import ActionRegistry
from anima.agent.conversation import Conversation
from anima.agent.executor import Executor
from anima.listening.makers import make_source

if TYPE_CHECKING:
    from anima.agent.planners.base import Planner
    from anima.agent.port import RobotPort
    from anima.config import AnimaConfig
    from anima.config.listening import ListenConfig
    from anima.listening.listener import RoundReport
    from anima.listening.sources import AudioSource
    from anima.speech.reference import PlaybackReference


def build_conversation(
    robot: RobotPort,
    config: AnimaConfig,
    *,
    playback: PlaybackReference | None = None,
    audio_in: str | AudioSource | None = None,
    on_round: Callable[[RoundReport], None] | None = None,
    planner: Planner | None = None,
) -> Conversation:
    """The configured agent for ``robot``: registry, planner, executor, and a listener on
    ``audio_in`` (``agent.audio_in``: auto | mic | none | stdin | a WAV file path; or a source
    object, e.g. a PushSource a benchmark feeds). ``playback``: what the speech sink plays,
    for the echo canceller (``listen.duplex``). ``on_round`` gets the listener's report of
    each round (its stream positions and times: when the end of turn was decided).
    ``planner`` replaces the configured one (a test's scripted planner)."""
    from anima.agent.planners import create_planner
    from anima.agent.vocabulary import robot_registry
    from anima.choices import AsrMode

    cfg = config.agent
    registry = robot_registry(robot, user_actions=cfg.user_actions)
    if planner is None:
        planner = create_planner(cfg, registry, robot, wake_phrase=config.listen.wake_phrase)
    executor = Executor.from_config(robot, cfg, on_finish=planner.reset)
    conversation = Conversation(
        robot,
        registry,
        planner,
        executor,
        feedback_rounds=cfg.feedback_rounds,
        locale=cfg.locale,
        acknowledge_wake=cfg.acknowledge_wake,
        listen=config.listen,
        agent=cfg,
    )
    given = audio_in if audio_in is not None else cfg.audio_in
    source = make_source(given) if isinstance(given, str) else given
    if source is not None and config.listen.duplex:
        source = _echo_cancelled(config.listen, playback, source)
    if source is not None:
        from anima.listening.listener import Listener

        listen = config.listen
        whisper = _hears_whisper(listen)
        if cfg.planner.type != "rules" and not whisper:
            # pocketsphinx's open-vocabulary model for an LLM (a grammar would force every
            # request into a known phrase); asr_mode means nothing to whisper, open already
            listen = dataclasses.replace(listen, asr_mode=AsrMode.LM)
        conversation.listener = Listener(
            source,
            config=listen,
            phrases=listening_phrases(registry, listen),
            hub=robot,
            on_wake=conversation.interrupt,
            on_partial=conversation.partial,
            on_final=conversation.hear,
            on_gave_up=conversation.gave_up,
            on_round=on_round,
        )
    return conversation


def _echo_cancelled(
    listen: ListenConfig, playback: PlaybackReference | None, source: AudioSource
) -> AudioSource:
    """Full duplex: ``source`` with the robot's own voice taken out (the echo canceller fed what
    the speech sink played: ``playback``)."""
    from anima.errors import ConfigError
    from anima.listening.echo.canceller import make_echo
    from anima.listening.echo.source import EchoCancelledSource

    if playback is None:
        raise ConfigError("listen.duplex needs the runtime's speech (a TTS engine and its sink)")
    return EchoCancelledSource(source, playback.reader(), make_echo(listen.echo))


def _hears_whisper(listen: ListenConfig) -> bool:
    """Whether the listener's recognizer will be Whisper (``auto``: when it is installed)."""
    from anima.listening.registry import whisper_installed

    return listen.asr == "whisper" or (listen.asr == "auto" and whisper_installed())


def listening_phrases(registry: ActionRegistry, listen: ListenConfig) -> list[str]:
    """The phrases the listener's recognizer is given. Whisper: its bias, one phrase per call,
    each of the most asked-for kinds of action in turn, a slotted one by its fixed words
    ("say", "walk forward"; the understanding's ``prompt_phrases``) — its prompt holds ~25
    words, which the grammar's alphabetical list would fill with rare ones. pocketsphinx: the
    grammar's phrases, all of them."""
    if not _hears_whisper(listen):
        return registry.grammar_phrases()
    from anima.agent.understanding import prompt_phrases

    return prompt_phrases(registry)
