"""The agent's composition: :func:`build_conversation` makes the configured conversation for a
robot — its registry, planner, executor, and a listener on the configured audio source.

It is given the robot's port (the runtime) and the config; the composition root
(:func:`anima.build.build`) calls it and attaches the conversation to the runtime."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from anima.agent.actions import ActionRegistry
from anima.agent.conversation import Conversation
from anima.agent.executor import Executor

if TYPE_CHECKING:
    from anima.agent.planners.base import Planner
    from anima.agent.port import RobotPort
    from anima.config import AnimaConfig, ListenConfig
    from anima.listening.results import ListenResult, RoundReport
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
    from anima.agent.persona import agent_as, load_persona
    from anima.agent.planners import create_planner
    from anima.agent.remembering import open_memory
    from anima.agent.vocabulary import robot_registry
    from anima.listening.making import make_listener
    from anima.listening.results import RoundReport

    registry = robot_registry(robot, user_actions=config.agent.user_actions)
    memory = open_memory(config.agent.memory, registry)
    persona = load_persona(config.agent.persona)
    persona.check_actions(set(registry.names()))
    cfg = agent_as(config.agent, persona)  # its name, locale and instructions
    if planner is None:
        planner = create_planner(cfg, registry, robot, wake_phrase=config.listen.wake_phrase)
    speak_as = getattr(planner, "speak_as", None)
    if callable(speak_as):
        speak_as(persona)  # the rule planner's "who made you", "hello", "what can you do"
    remember_with = getattr(planner, "remember_with", None)
    if memory is not None and callable(remember_with):
        remember_with(memory)  # the rule planner's "my name is …", "what's my name" …
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

    conversation.memory, conversation.persona = memory, persona

    def take(result: ListenResult) -> None:
        if isinstance(result, RoundReport):
            if on_round is not None:
                on_round(result)
        else:
            conversation.take(result)

    conversation.listener = make_listener(
        config.listen,
        audio_in if audio_in is not None else cfg.audio_in,
        phrases=lambda asr: recognizer_phrases(registry, asr),
        free_speech=cfg.planner.type != "rules",
        playback=playback,
        results=take,
    )
    return conversation


def listening_phrases(registry: ActionRegistry, listen: ListenConfig) -> list[str]:
    """The phrases the recognizer ``listen`` names is given (:func:`recognizer_phrases`)."""
    from anima.listening.makers import recognizer_name

    return recognizer_phrases(registry, recognizer_name(listen))


def recognizer_phrases(registry: ActionRegistry, recognizer: str) -> list[str]:
    """The phrases the listener's ``recognizer`` (whisper | pocketsphinx:
    :func:`~anima.listening.makers.recognizer_name`) is given. Whisper: its bias, one phrase
    per call, each of the most asked-for kinds of action in turn, a slotted one by its fixed
    words ("say", "walk forward"; the understanding's ``prompt_phrases``) — its prompt holds
    ~25 words, which the grammar's alphabetical list would fill with rare ones. pocketsphinx:
    the grammar's phrases, all of them."""
    if recognizer != "whisper":
        return registry.grammar_phrases()
    from anima.agent.understanding import prompt_phrases

    return prompt_phrases(registry)
