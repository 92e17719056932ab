"""The ``speech`` section: which TTS engines speak, where the audio goes, and speech's own
gestures (docs/speech.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from anima.config.speech_parts import ENGINES, check_audio_out
from anima.errors import ConfigError


@dataclass(frozen=True, kw_only=True)
class SpeechConfig:
    enabled: bool = True  # run the speech service (when an engine is available)
    engines: tuple[str, ...] = ("piper", "espeak")  # by preference (anima.config.speech_parts)
    # None/auto: the sound card if any, else null; null; sounddevice; or a .wav file's path
    # (anima.config.speech_parts.SINKS)
    audio_out: str | None = None
    espeak_wpm: int = 165  # eSpeak NG speaking rate, words per minute
    # automatic gestures in speech (a tilt on questions, beats): contextual | disabled; a text's
    # ^mode(...) changes it from there (docs/speech.md, annotated speech)
    gesture_mode: str = "contextual"
    # a body without lips but with antennas (Reachy Mini): how far speech lifts them, in the
    # antennas' units (degrees on Reachy Mini), with the mouth's opening; 0: speech leaves them
    antennas_span: float = 25.0
    # the Piper voice in its own worker process (the runtime keeps none of its ~170 MB and its
    # phonemizer never holds the runtime's GIL); false: in the runtime process, as before
    piper_process: bool = True
    # seconds with nothing to say before the Piper worker exits (its memory given back; the next
    # utterance starts it again, ~1.1 s); 0: it never exits
    piper_idle_exit_s: float = 120.0

    def __post_init__(self) -> None:
        if self.gesture_mode not in ("contextual", "disabled"):
            raise ConfigError(
                f"speech.gesture_mode must be contextual or disabled, got {self.gesture_mode!r}"
            )
        check_audio_out(self.audio_out)
        if not self.engines:
            raise ConfigError("speech.engines must name at least one engine")
        if len(self.engines) > 10:
            raise ConfigError(f"speech.engines: at most 10 engines, got {len(self.engines)}")
        for name in self.engines:
            ENGINES.check(name)
        if not (math.isfinite(self.antennas_span) and 0 <= self.antennas_span <= 120):
            raise ConfigError(
                f"speech.antennas_span must be in [0, 120], got {self.antennas_span!r}",
                key="speech.antennas_span",
            )
        if not (math.isfinite(self.piper_idle_exit_s) and 0 <= self.piper_idle_exit_s <= 86400):
            raise ConfigError(
                "speech.piper_idle_exit_s must be 0 (the worker never exits) or seconds up to"
                f" 86400, got {self.piper_idle_exit_s!r}",
                key="speech.piper_idle_exit_s",
            )
        if not 80 <= self.espeak_wpm <= 450:
            raise ConfigError(f"speech.espeak_wpm must be in [80, 450], got {self.espeak_wpm}")
