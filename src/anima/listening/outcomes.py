"""What the :class:`~anima.listening.recorder.Recorder` answers a frame, a wake or the stream's
end with: the round's steps (:data:`Outcome`), and :class:`Round`, where one round's milestones
fell in the stream. The listener turns them into the results it sends up
(:mod:`anima.listening.results`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Round:
    """Where one round's milestones fell in the stream (sample positions; None: never)."""

    wake_source: str  # the spotter's name (asr, keyphrase) | manual | keyboard | …
    start_position: int  # first sample the round records (the phrase's end, or pre-buffer)
    wake_position: int  # stream position when the wake was acted upon
    asr_first_position: int | None = None  # first sample fed to the ASR
    speech_start_position: int | None = None  # VAD: the first frame of speech
    speech_end_position: int | None = None  # VAD: the end of the last frame of speech
    endpoint_position: int | None = None  # where the round was decided (endpoint or timeout)
    text: str = ""
    outcome: str = ""  # final | restarted | a GaveUp reason


@dataclass(frozen=True, kw_only=True)
class Woke:
    source: str
    phrase: str


@dataclass(frozen=True, kw_only=True)
class RecordingStarted:
    restarted: bool  # a round was in progress and was dropped


@dataclass(frozen=True, kw_only=True)
class Partial:
    text: str


@dataclass(frozen=True, kw_only=True)
class Final:
    text: str
    confidence: float | None = None  # the recognizer's (0-1; None: it gives none)
    alternatives: tuple[str, ...] = ()  # the recognizer's other readings, best first
    voiced_s: float | None = None  # how long the voice was (the round's voiced frames)


@dataclass(frozen=True, kw_only=True)
class Early:
    """The utterance so far, at a pause that may end the turn (see the module docstring)."""

    text: str
    confidence: float | None = None
    alternatives: tuple[str, ...] = ()
    voiced_s: float | None = None


@dataclass(frozen=True, kw_only=True)
class Resumed:
    """The voice came back after an :class:`Early`: the same utterance goes on."""


@dataclass(frozen=True, kw_only=True)
class GaveUp:
    reason: str  # no_speech | silence | too_short | max_length | source_ended
    waited_s: float  # audio seconds recorded in the round
    text: str = ""


@dataclass(frozen=True, kw_only=True)
class RoundEnded:
    round: Round


Outcome = Woke | RecordingStarted | Partial | Early | Resumed | Final | GaveUp | RoundEnded
