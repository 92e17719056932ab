"""What the listener sends up: one stream of typed results, to one consumer.

The listener hands each result, in order, on its worker thread, to the one callable it was given
(``results=``); the consumer takes them apart with ``match``::

    def take(result: ListenResult) -> None:
        match result:
            case WakeDetected(source="barge_in"): ...  # full duplex: a voice over the robot
            case WakeDetected(): ...                   # the phrase, a key, MQTT
            case Transcript(final=False): ...          # a partial
            case Transcript(): ...                     # the utterance's final
            case EarlyTranscript(): ...                # duplex: a pause that may end the turn
            case TurnResumed(): ...                    # … and the voice back after it
            case ListenTimeout(): ...                  # a round that heard nothing to act on
            case Notice(): ...                         # a part fell back (no Whisper, no Silero)
            case RecordingStart() | RoundReport(): ... # the round's timing, for benchmarks

The results that are :class:`~anima.events.Event` (wake, transcript, timeout, notice) are what
the outside world is told (``wake``, ``asr``, ``listen_timeout``, ``notice``): the consumer
publishes them (:func:`is_wire_event`); :class:`RecordingStart`, :class:`RoundReport`,
:class:`EarlyTranscript` and :class:`TurnResumed` stay inside (an early reading is not what the
person said: the final, which follows, is).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeGuard

from anima.events import Event, ListenTimeout, Notice, Transcript, WakeDetected
from anima.listening.outcomes import Round


@dataclass(frozen=True, kw_only=True)
class RecordingStart:
    """Recording began (``t``: clock seconds); ``restarted`` when it replaced a round."""

    t: float
    restarted: bool


@dataclass(frozen=True, kw_only=True)
class RoundReport:
    """One round's stream positions and clock times (``None``: it did not happen)."""

    round: Round
    wake_t: float  # a manual wake: when wake() was called; a phrase: when its frame arrived
    started_t: float  # when recording started (after the wake was handled)
    decided_arrival_t: float | None  # when the frame that decided the round arrived
    decided_t: float  # when the outcome had been delivered to the consumer


@dataclass(frozen=True, kw_only=True)
class EarlyTranscript:
    """Full duplex, ``listen.turn_early_s``: the utterance so far, at a pause that may end the
    turn but has not (the cues are unsure). Its final follows (the same words when nothing
    more was said), or a :class:`TurnResumed`."""

    t: float
    text: str
    confidence: float | None = None
    alternatives: tuple[str, ...] = ()
    voiced_s: float | None = None


@dataclass(frozen=True, kw_only=True)
class TurnResumed:
    """The person spoke again after an :class:`EarlyTranscript`: the turn goes on."""

    t: float


# everything a listener sends up (see the module docstring)
ListenResult = (
    WakeDetected | RecordingStart | Transcript | EarlyTranscript | TurnResumed | ListenTimeout
    | Notice | RoundReport
)  # fmt: skip
WireEvent = WakeDetected | Transcript | ListenTimeout | Notice


def is_wire_event(result: ListenResult) -> TypeGuard[WireEvent]:
    """Whether ``result`` is an event the outside world is told of (published on the hub)."""
    return isinstance(result, Event)
