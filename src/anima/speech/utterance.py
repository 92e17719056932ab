"""One utterance on its way out: what the speech service's worker, player and lips share.

An :class:`Utterance` is accepted by ``speak``; its :class:`Playback` is what the player thread,
the lips and the cues read while it plays; :class:`Output` is what its synthesis carries from
one segment of annotated speech to the next. :func:`leading_silence` and :func:`moved` drop an
engine's leading silence and move every mark with it.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from anima.events import SpeechEndReason
from anima.language.markup import Cue, Script
from anima.speech.base import AudioChunk, Cancel, PhonemeMark, VisemeMark, WordMark
from anima.speech.sway import Sway, SwayGenerator
from anima.speech.visemes import LipTrack

# the silence an engine puts before an utterance's first sound (Piper: 30–70 ms at the start of
# each clause) is dropped down to this much, so the voice starts as soon as it can
LEAD_KEEP_S = 0.005
AUDIBLE = 328  # |sample| above this (−40 dBFS) is sound, not an engine's silence


@dataclass
class Utterance:
    id: str
    text: str
    locale: str
    script: Script
    cancel: Cancel = field(default_factory=Cancel)
    reason: SpeechEndReason = "done"
    finished: threading.Event = field(default_factory=threading.Event)
    started: bool = False  # its start_speak was published (guarded by the service's lock)
    ended: bool = False  # its end_speak was published (guarded by the service's lock)
    # a voice stream's (anima.speech.stream): its audio comes from pump() on the worker instead
    # of a TTS engine, and on_end() is told, under the service's lock, as its end_speak goes out
    pump: Callable[[], None] | None = None
    on_end: Callable[[], None] | None = None


@dataclass
class Output:
    """What one utterance's synthesis carries from segment to segment."""

    playback: Playback | None = None
    sway: SwayGenerator | None = None
    pending: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int16))


@dataclass
class Playback:
    """What the player and the lips need of the utterance being played."""

    utterance: Utterance
    rate: int
    lips: LipTrack
    sway: list[Sway] = field(default_factory=list)
    synthesized: bool = False
    # (sample, cue) in sample order: appended by the worker, taken by the motion tick
    cues: collections.deque[tuple[int, Cue]] = field(default_factory=collections.deque)
    # a voice stream's pause (anima.speech.stream): the sink holds silence, the mouth is shut,
    # and the utterance does not end however little the sink has; on resume the sink restarts
    # its clock, and ``origin`` is where in the utterance that clock's 0 is
    paused: bool = False
    origin: int = 0


def leading_silence(chunk: AudioChunk) -> int:
    """Samples of ``chunk``'s leading silence that can go (all but LEAD_KEEP_S of it); 0 when
    the chunk is silent throughout (nothing is known of where the sound starts)."""
    loud = np.flatnonzero(np.abs(chunk.samples.astype(np.int32)) > AUDIBLE)
    if not loud.size:
        return 0
    return max(0, int(loud[0]) - round(LEAD_KEEP_S * chunk.sample_rate))


def moved(chunk: AudioChunk, trim: int, *, cut: bool, base: int = 0) -> AudioChunk:
    """``chunk`` of a segment whose first ``trim`` samples were dropped, placed ``base``
    samples into the utterance: its marks moved (one inside the dropped part starts at the
    segment's start), and, ``cut``, its own first samples gone (the first chunk, where they
    are)."""

    def at(offset: int) -> int:
        return base + max(0, offset - trim)

    if not trim and not base:
        return chunk
    return AudioChunk(
        chunk.samples[trim:] if cut else chunk.samples,
        chunk.sample_rate,
        phonemes=tuple(PhonemeMark(m.phoneme, at(m.offset)) for m in chunk.phonemes),
        visemes=tuple(VisemeMark(m.viseme, at(m.offset)) for m in chunk.visemes),
        words=tuple(WordMark(m.char, at(m.offset)) for m in chunk.words),
    )
