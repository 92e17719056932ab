"""The composition root: the one place that reads which parts a config enables and wires them.

:func:`build` makes a :class:`~anima.runtime.Runtime` (body, driver, motion, behaviour,
speech), then adds what the config turns on: the humanoid link (``humanoid.type``), social
attention (``vision.source`` or ``listen.mics``), the voice agent (``agent.enabled``), and the
front doors (``mqtt.enabled``, ``web.enabled``). ``anima serve``, ``Robot.local``, the
benchmarks and the tests all build their runtime here, so one config gives one robot whichever
way it is started. Nothing is started: ``runtime.start()`` starts the parts in order and stops
exactly those that started if one fails.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from anima.choices import REALTIME_BRAINS
from anima.config import AnimaConfig
from anima.runtime import Runtime

if TYPE_CHECKING:
    from anima.agent.conversation import Conversation
    from anima.agent.planners.base import Planner
    from anima.body import Body
    from anima.clock import Clock
    from anima.drivers import Driver
    from anima.listening.results import RoundReport
    from anima.listening.sources import AudioSource
    from anima.speech.base import AudioSink, TTSEngine

log = logging.getLogger(__name__)

Report = Callable[[str], None]  # a line for the person who started it (anima serve prints it)


def build(
    config: AnimaConfig | None = None,
    *,
    doors: bool = True,
    audio_in: str | AudioSource | None = None,
    on_round: Callable[[RoundReport], None] | None = None,
    report: Report | None = None,
    body: Body | None = None,
    driver: Driver | None = None,
    clock: Clock | None = None,
    tts: Sequence[TTSEngine] | None = None,
    audio_sink: AudioSink | None = None,
    planner: Planner | None = None,
) -> Runtime:
    """The runtime ``config`` describes, not started.

    ``doors``: False leaves out the MQTT and web doors whatever the config says (a script's
    robot, a test). ``audio_in`` and ``on_round``: the agent's ears (see
    :func:`~anima.agent.assembly.build_conversation`). ``report``: one line per part wired
    (logged at INFO when None). The rest replace the configured parts (tests, custom engines;
    ``planner`` is the agent's, when ``agent.enabled``).
    """
    cfg = config or AnimaConfig()
    say = report or log.info
    if cfg.agent.enabled:
        from anima.agent.persona import load_persona, speech_as

        persona = load_persona(cfg.agent.persona)  # its voice speaks first
        cfg = dataclasses.replace(cfg, speech=speech_as(cfg.speech, persona))
    humanoid = None
    if cfg.humanoid.type != "none":
        from anima.humanoid.link import HumanoidLink  # its constructor touches nothing

        humanoid = HumanoidLink(cfg.humanoid, clock)  # the simulated Adam on the runtime's clock
    runtime = Runtime(
        cfg,
        body=body,
        driver=driver,
        clock=clock,
        tts=tts,
        audio_sink=audio_sink,
        humanoid=humanoid,
    )
    # a Reachy Mini's daemon hears directions with its own array (attention.daemon_voice)
    daemon_voice = cfg.driver.type == "reachy_mini" and cfg.attention.daemon_voice
    if cfg.attention.enabled and (cfg.vision.enabled or cfg.listen.mics or daemon_voice):
        from anima.attention.part import AttentionPart

        attention = AttentionPart(
            cfg,
            runtime.engine,
            runtime.behaviour,
            runtime.clock,
            driver=runtime.driver,
            playback=runtime.playback,
            events=runtime.events,
        )
        runtime.attach_attention(attention)
        say(f"anima attention: looking at people with {attention.summary}")
        if cfg.agent.enabled and (audio_in is None or isinstance(audio_in, str)):
            # the array's channels to the voice direction as well as to the agent's ears
            audio_in = attention.ears(cfg.agent.audio_in if audio_in is None else audio_in) or (
                audio_in
            )
    if cfg.agent.enabled and cfg.agent.planner.type in REALTIME_BRAINS and planner is None:
        from anima.agent.realtime import build_realtime_agent  # replaces the conversation

        brain = build_realtime_agent(runtime, cfg, playback=runtime.playback, audio_in=audio_in)
        runtime.attach_agent(brain)
        ears = brain.source.name if brain.source is not None else "no audio"
        say(f"anima agent: realtime brain at {brain.connection.url}, streaming {ears}")
    elif cfg.agent.enabled:
        conversation = attach_agent(runtime, audio_in=audio_in, on_round=on_round, planner=planner)
        ears = "no audio (wake and ask over MQTT or the console)"
        if conversation.listener is not None:
            ears = conversation.listener.source.name
        say(f"anima agent: {cfg.agent.planner.type} planner, listening to {ears}")
    memory = getattr(runtime.agent, "memory", None)
    if memory is not None and runtime.attention is not None:
        # "my name is Ana" names the track of whoever is speaking (docs/memory.md)
        memory.on_name.append(runtime.attention.attention.name_speaker)
        memory.who_is_here = runtime.attention.attention.named_person  # while the track lives
        memory.on_forget_person.append(runtime.attention.attention.forget_name)
    if doors:
        from anima.frontdoors.registry import DOORS

        for name in DOORS.names:  # mqtt, web: each by its section's enabled
            if getattr(cfg, name).enabled:
                DOORS.load(name)(runtime, say)
    return runtime


def attach_agent(
    runtime: Runtime,
    *,
    audio_in: str | AudioSource | None = None,
    on_round: Callable[[RoundReport], None] | None = None,
    planner: Planner | None = None,
) -> Conversation:
    """Build the configured conversation for ``runtime`` and attach it (what :func:`build`
    does for ``agent.enabled``; a benchmark's own ears, e.g. a PushSource, come in here)."""
    from anima.agent.assembly import build_conversation

    conversation = build_conversation(
        runtime,
        runtime.config,
        playback=runtime.playback,
        audio_in=audio_in,
        on_round=on_round,
        planner=planner,
    )
    runtime.attach_agent(conversation)
    return conversation
