"""The runtime's speech, made: the configured engines, the sink, the service on the loop."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from anima.config import SpeechConfig

if TYPE_CHECKING:
    from anima.behaviour.controller import Behaviour
    from anima.events import EventHub
    from anima.language.markup import Mode
    from anima.motion.engine import MotionEngine
    from anima.speech.base import AudioSink, TTSEngine
    from anima.speech.reference import PlaybackReference
    from anima.speech.service import SpeechService

log = logging.getLogger(__name__)


def speech_engines(
    config: SpeechConfig, given: Sequence[TTSEngine] | None
) -> tuple[list[TTSEngine], str]:
    """The engines to speak with (``given``, else the configured ones, their packages imported
    now, at start rather than at the first utterance), and why there are none ("" when there
    are)."""
    if not config.enabled:
        return [], "speech is disabled (speech.enabled: false)"
    from anima.speech import load_engines

    engines, problems = (list(given), []) if given is not None else load_engines(config)
    if not engines:
        problem = "no TTS engine available: " + "; ".join(problems)
        log.warning("speech unavailable: %s", problem)
        return [], problem
    return engines, ""


def start_speech(
    config: SpeechConfig,
    engines: Sequence[TTSEngine],
    *,
    engine: MotionEngine,
    behaviour: Behaviour,
    events: EventHub,
    sink: AudioSink | None = None,
    playback: PlaybackReference | None = None,
) -> SpeechService:
    """The speech service on ``engine``'s loop, started: its sink ``sink`` or the configured
    one (``speech.audio_out``), behind ``playback`` in full duplex."""
    from anima.behaviour.speech_gestures import BehaviourGestures
    from anima.speech.service import SpeechService
    from anima.speech.sinks import choose_sink

    out = sink or choose_sink(config.audio_out)
    if playback is not None:
        out = playback.attach(out)
    service = SpeechService(
        list(engines),
        out,
        engine,
        events,
        engine.clock,
        before_speaking=behaviour.prepare_to_speak,
        gestures=BehaviourGestures(behaviour, events),
        gesture_mode=cast("Mode", config.gesture_mode),  # checked by the config
        antennas_span=config.antennas_span,
    )
    service.start()
    log.info(
        "speech: engines %s, audio sink %s",
        ", ".join(e.name for e in engines),
        out.name + (f" ({config.audio_out})" if out.name == "wav" else ""),
    )
    return service


def load_voices(engines: Sequence[TTSEngine]) -> None:
    """Load the TTS voices at start, once the loop runs on its own thread (it was before the
    loop; now the first tick comes first). The speech thread loads them again — a no-op once
    loaded — and drops and reports an engine that fails, so a failure here is only noted."""
    for engine in engines:
        try:
            engine.load()
        except Exception as exc:  # the speech thread says it, as a warning and a notice
            log.debug("speech engine %s did not load at start: %s", engine.name, exc)
