"""The speech service's worker side: which engine speaks, and how an utterance's audio is made.

The worker thread of :class:`~anima.speech.service.SpeechService` first loads every engine's
voices (:func:`load_engines`, on that thread rather than at start-up), then, for each utterance,
picks the engine that speaks its locale (:func:`engine_for`: English when none does) and hands
both to :meth:`Synthesis.make`. That synthesizes the script segment by segment into the sink,
computes the lips and the sway as the audio is written, places each cue of annotated speech at
the sample where its word is heard, and after a segment with ``^run``/``^wait`` gestures lets
it play out before they play. The first audio goes to the :class:`~anima.speech.player.Player`.

The silence an engine puts before a segment's first sound is dropped (all but
:data:`~anima.speech.utterance.LEAD_KEEP_S`; every mark moves with it), so the voice starts as
soon as it can. :func:`prepare` synthesizes a text ahead of time into an engine's cache.
"""

from __future__ import annotations

import collections
import gc
import logging
from collections.abc import Callable, Sequence

import numpy as np

from anima.clock import Clock
from anima.events import EventHub, Notice
from anima.language.markup import Segment
from anima.speech.base import AudioSink, PreparesAhead, TTSEngine
from anima.speech.cues import CuePlayer
from anima.speech.player import Player
from anima.speech.sway import SwayGenerator
from anima.speech.utterance import Output, Playback, Utterance, leading_silence, moved
from anima.speech.visemes import LipTrack

log = logging.getLogger(__name__)


def load_engines(engines: Sequence[TTSEngine], events: EventHub, clock: Clock) -> list[TTSEngine]:
    """Load every engine's voices now (on this thread); those that load, or all when none does
    (each failure is logged and published as a notice)."""
    usable = []
    for engine in engines:
        try:
            engine.load()
            usable.append(engine)
        except Exception as exc:  # a missing voice or library: the others still speak
            log.warning("speech engine %s unavailable: %s", engine.name, exc)
            events.publish(Notice(t=clock.now(), source="speech", message=f"{engine.name}: {exc}"))
    gc.freeze()  # the voices' objects live as long as the process (see Runtime.start)
    return usable or list(engines)


def engine_for(
    engines: Sequence[TTSEngine], u: Utterance, events: EventHub, clock: Clock
) -> TTSEngine:
    """The first engine that speaks ``u``'s locale; else English (``u.locale`` becomes
    ``en-US``, and a notice says so)."""
    for engine in engines:
        if engine.supports(u.locale):
            return engine
    fallback = next((e for e in engines if e.supports("en-US")), engines[0])
    events.publish(
        Notice(
            t=clock.now(),
            source="speech",
            message=f"no voice for locale {u.locale!r}: speaking English ({fallback.name})",
        )
    )
    u.locale = "en-US"
    return fallback


def prepare(engines: Sequence[TTSEngine], text: str, locale: str) -> None:
    """Synthesize ``text`` into the cache of the engine that would speak it, when that engine
    :class:`~anima.speech.base.PreparesAhead` (the others have nothing to prepare)."""
    engine = next((e for e in engines if e.supports(locale)), None)
    if not isinstance(engine, PreparesAhead):
        return
    try:
        engine.prepare(text, locale)
    except Exception as exc:  # a text that cannot be prepared is simply synthesized later
        log.warning("speech: cannot prepare %r: %s", text[:40], exc)


class Synthesis:
    """Makes one utterance's audio into the sink, on the worker thread (see the module
    docstring). ``made(False)`` says the worker waits on the playback (a hold), ``made(True)``
    that it makes audio again."""

    def __init__(
        self, sink: AudioSink, player: Player, cues: CuePlayer, made: Callable[[bool], None]
    ) -> None:
        self._sink = sink
        self._player = player
        self._cues = cues
        self._made = made

    def make(self, u: Utterance, engine: TTSEngine) -> None:
        out = Output()
        for segment in u.script.segments:
            if segment.text:
                self._speak_segment(u, engine, segment, out)
            if u.cancel.is_set:
                return
            if segment.run or segment.wait:
                self._hold(u, segment)
            if u.cancel.is_set:
                return
        pb = out.playback
        if pb is None:
            u.finished.set()  # nothing to play (cancelled or empty audio)
            return
        pb.lips.end(self._sink.written())
        self._player.synthesized(pb)

    def _speak_segment(
        self, u: Utterance, engine: TTSEngine, segment: Segment, out: Output
    ) -> None:
        """Synthesize one segment into the sink, after what the utterance already played; its
        cues are placed at the words the engine reports."""
        base = self._sink.written() if out.playback is not None else 0
        cues = collections.deque(segment.cues)
        trim: int | None = None  # leading silence dropped (every mark moves with it)
        heard = False  # the engine gave word marks
        for made in engine.synthesize(segment.text, u.locale, u.cancel):
            if u.cancel.is_set:
                return
            first = trim is None
            if trim is None:
                trim = leading_silence(made)
            chunk = moved(made, trim, cut=first, base=base)
            pb = out.playback
            if pb is None:
                self._sink.start(chunk.sample_rate)
                pb = out.playback = Playback(u, chunk.sample_rate, LipTrack(chunk.sample_rate))
                out.sway = SwayGenerator(chunk.sample_rate)
                if not self._player.show(pb):
                    return
            sway = out.sway
            assert sway is not None
            pb.lips.add_phonemes(chunk.phonemes)
            pb.lips.add_visemes(chunk.visemes)
            for word in chunk.words:
                heard = True
                while cues and cues[0].char <= word.char:
                    pb.cues.append((word.offset, cues.popleft()))
            out.pending = np.concatenate((out.pending, chunk.samples))
            while len(out.pending) >= sway.hop:
                pb.sway.append(sway.feed(out.pending[: sway.hop]))
                out.pending = out.pending[sway.hop :]
            self._sink.write(chunk.samples)
        pb = out.playback
        if pb is None:
            return
        end = self._sink.written()
        for cue in cues:  # after the last word heard, or no word timing: by characters
            share = 1.0 if heard else cue.char / max(1, len(segment.text))
            pb.cues.append((base + round(share * (end - base)), cue))
        pb.lips.end(end)  # the mouth closes between segments

    def _hold(self, u: Utterance, segment: Segment) -> None:
        """After a segment: let it play out, then its ``^run``/``^wait`` gestures (a stop ends
        the hold at once)."""
        self._made(False)  # waits on the playback from here
        self._player.wait_played(u.cancel)
        if not u.cancel.is_set:
            self._cues.hold(segment, u.cancel)
        self._made(True)
