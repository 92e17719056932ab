"""Voice streams: audio that arrives as it is made (a realtime model's voice), played as one
utterance of the speech service.

:meth:`~anima.speech.service.SpeechService.open_stream` queues a :class:`Stream` like any
utterance: it waits behind the one playing, gets its ``start_speak`` when its first sample goes
to the sink and one ``end_speak`` (``done`` once :meth:`Stream.finish` was called and the last
sample played; ``interrupted``/``stopped``/``estop``/``shutdown`` when stopped). A client thread
feeds it (:meth:`Stream.feed`, :meth:`Stream.visemes`, :meth:`Stream.words`), each call
returning at once; the service's worker thread runs :meth:`Stream.pump`, which resamples what
came to the sink's rate (:data:`STREAM_RATE`) a piece at a time and writes it to the sink.

In short (docs/speech.md's *Voice streams* has the why): while the sink is dry, audio plays
40 ms after it came (at once when 160 ms is there); an underrun is silence, not the end; lips
from the server's visemes, else from the loudness of each 10 ms; ``^start``/``^run``/``^stop``
in the words fire where the audio fed so far ends when they come; ``played_ms``/``stop`` are
the sink's played samples of the stream in milliseconds (floored); at most 120 s ahead.

:meth:`Stream.pause` holds playback at the sample the sink has reached (a person began to talk
over the robot, and the duplex rules have not decided yet): the sink is stopped, what it had not
played is kept, ``played_ms`` stays, the mouth shuts, no ``end_speak``, and audio still fed is
queued. :meth:`Stream.resume` plays on from that very sample, with a :data:`FADE_S` fade-in so
it does not click; :meth:`Stream.stop` after a pause returns the pause's count.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable

import numpy as np

from anima.audio import MAX_INPUT_RATE, MIN_INPUT_RATE, StreamResampler
from anima.clock import Clock
from anima.errors import InvalidCommandError, SpeechError
from anima.events import EventHub, SpeechEndReason
from anima.speech.base import AudioSink, Samples
from anima.speech.cues import CuePlayer
from anima.speech.player import Player
from anima.speech.stream_motion import SoundMotion
from anima.speech.stream_words import StreamWords
from anima.speech.utterance import Playback, Utterance
from anima.speech.visemes import LipTrack

log = logging.getLogger(__name__)

# the sink plays streams at the TTS voices' rate (Piper's, eSpeak's), so a sound card's stream
# is not reopened between an utterance and a stream (a reopen costs tens of milliseconds)
STREAM_RATE = 22050
JITTER_S = 0.04  # while the sink is dry, audio plays this long after it came: a network's jitter
BURST_S = 0.16  # ...or at once when this much is already there (a source ahead of real time)
PIECE_S = 0.1  # input resampled and written this much at a time (a stop waits at most one)
MAX_AHEAD_S = 120.0  # a stream's audio not yet played: more in a feed is refused
IDLE_S = 10.0  # no audio for this long after all has played, and no finish(): an error
FADE_S = 0.005  # a resume's fade-in: the sound resumes mid-wave, and a step would click


class Stream:
    """An open voice stream (:class:`anima.commands.VoiceStream`): see the module docstring.

    Its state is guarded by the speech service's lock (``cond``), shared with the player."""

    def __init__(
        self,
        u: Utterance,
        *,
        cond: threading.Condition,
        clock: Clock,
        sink: AudioSink,
        player: Player,
        cues: CuePlayer,
        events: EventHub,
        made: Callable[[bool], None],
        stop: Callable[[Utterance, SpeechEndReason], None],
        rate: int = STREAM_RATE,
    ) -> None:
        self.rate = rate  # the sink's, for this stream
        self._u = u
        self._cond = cond
        self._clock = clock
        self._sink = sink
        self._player = player
        self._made = made  # the service's "the worker is making audio" flag
        self._stop = stop  # the service's end of one utterance
        self.playback = Playback(u, rate, LipTrack(rate))
        self._motion = SoundMotion(self.playback, rate)  # lips (until visemes) and sway
        self._marked: LipTrack | None = None  # the lips from the server's visemes
        self._input: collections.deque[tuple[Samples, int]] = collections.deque()
        self._input_s = 0.0  # seconds of audio in _input
        self._oldest_at: float | None = None  # when the oldest audio in _input came
        self._last_at: float | None = None  # when audio last came
        self._fed_s = 0.0  # seconds of audio fed so far (where a marker is placed)
        self._finished = False  # finish() was called
        self._pumping = False  # the worker runs pump()
        self._since = 0.0  # when the worker took the stream up (the idle bound's start)
        self._dry_at = 0.0  # when the sink runs out of what was written (the idle bound's too)
        self._sounding = False  # the sink was started for this stream
        self._made_n = 0  # samples made for the sink (at self.rate): the lips' and sway's positions
        self._sent = 0  # samples written to the sink since its last start
        # what the sink was given since its last start: (its position, samples), the played
        # ones dropped as more is written; a pause takes back what it had not played
        self._given: collections.deque[tuple[int, Samples]] = collections.deque()
        self._paused = False  # pause() was called and resume() not yet
        self._pauses = 0  # pauses so far (a write that blocked across one is taken back)
        self._paused_at: int | None = None  # the sink's played count at the pause (until restart)
        self._held: collections.deque[Samples] = collections.deque()  # made, for the sink later
        self._restart = False  # the sink was stopped by a pause: start it again before a write
        self._final_ms: int | None = None  # played_ms() once ended
        self._resampler: StreamResampler | None = None
        self._words = StreamWords(self.playback, cues, events, clock)  # the transcript
        u.pump = self.pump
        u.on_end = self._ended

    # ------------------------------------------------------------------ the client's side
    @property
    def utterance(self) -> str:
        return self._u.id

    @property
    def done(self) -> bool:
        return self._u.ended

    def feed(self, pcm16: bytes, sample_rate: int) -> None:
        """Queue mono little-endian PCM16 at ``sample_rate`` Hz; ignored once stopped or
        finished. Refused (:class:`~anima.errors.InvalidCommandError`, nothing queued): a rate
        outside 8–192 kHz, an odd number of bytes, or audio that would put more than
        :data:`MAX_AHEAD_S` of this stream ahead of playback."""
        if not MIN_INPUT_RATE <= sample_rate <= MAX_INPUT_RATE:
            raise InvalidCommandError(
                f"voice stream {self._u.id}: sample rate {sample_rate} Hz is outside "
                f"{MIN_INPUT_RATE}–{MAX_INPUT_RATE} Hz"
            )
        if len(pcm16) % 2:
            raise InvalidCommandError(
                f"voice stream {self._u.id}: {len(pcm16)} bytes is not whole 16-bit samples"
            )
        seconds = len(pcm16) / 2 / sample_rate
        with self._cond:
            if self._u.cancel.is_set or self._u.ended or self._finished:
                return
            ahead = self._fed_s - self._played_ms_locked() / 1000
            if ahead + seconds > MAX_AHEAD_S:
                raise InvalidCommandError(
                    f"voice stream {self._u.id}: {seconds:.1f} s of audio in one feed, with "
                    f"{ahead:.1f} s not yet played: at most {MAX_AHEAD_S:g} s may wait"
                )
            if not pcm16:
                return
            samples = np.frombuffer(pcm16, dtype="<i2").astype(np.int16)  # a copy, native order
            now = self._clock.now()
            self._input.append((samples, sample_rate))
            self._input_s += seconds
            self._fed_s += seconds
            if self._oldest_at is None:
                self._oldest_at = now
            self._last_at = now
            if self._pumping:
                self._made(True)  # until the worker has written it (a fake-time test waits)
            self._cond.notify_all()

    def visemes(self, marks: list[tuple[int, str]]) -> None:
        """Mouth shapes timed by the server (ms from the stream's first sample, a viseme class
        of :data:`anima.speech.visemes.LIPS`; an unknown one is a neutral open mouth). From the
        first, the lips follow these marks only."""
        with self._cond:
            if self._u.cancel.is_set or self._u.ended:
                return
            track = self._marked
            if track is None:
                track = self._marked = LipTrack(self.rate)
                self.playback.lips = track  # the player reads it at its next tick
            track.add_classes((max(0, ms) * self.rate // 1000, name) for ms, name in sorted(marks))

    def words(self, text: str) -> None:
        """The next words of the transcript: ``start_speak`` shows those that came before the
        first sample (markers taken out); markers fire as the module docstring says."""
        with self._cond:
            if self._u.cancel.is_set or self._u.ended:
                return
            self._words.add(text, round(self._fed_s * self.rate))

    def finish(self) -> None:
        """No more audio: ``end_speak`` (``done``) once the last sample has played."""
        with self._cond:
            if self._u.cancel.is_set or self._u.ended or self._finished:
                return
            self._finished = True
            self._words.flush(round(self._fed_s * self.rate))
            if self._pumping:
                self._made(True)
            self._cond.notify_all()

    def stop(self, reason: SpeechEndReason = "interrupted") -> int:
        """Stop now (the sink cleared, ``end_speak`` with ``reason``; the utterances queued
        behind the stream play on); the milliseconds of this stream the sink had played."""
        self._stop(self._u, reason)
        return self.played_ms()

    def pause(self) -> bool:
        """Hold playback at the sample the sink has reached (module docstring); False when the
        stream has ended or is paused already."""
        with self._cond:
            if self._u.cancel.is_set or self._u.ended or self._paused:
                return False
            self._paused = True
            self._pauses += 1
            self.playback.paused = True
            if self._sounding and not self._restart:
                self._sink.stop()  # silence now; its clock freezes at what it played
                at = self._paused_at = self._sink.played()
                tail = [s[max(0, at - start) :] for start, s in self._given if start + len(s) > at]
                self._held.extendleft(reversed(tail))  # before what waits to be written
                self._given.clear()
                self._restart = True
            self._cond.notify_all()
        return True

    def resume(self) -> bool:
        """Play on from the sample where :meth:`pause` held it, nothing lost or skipped; False
        when the stream is not paused (or has ended)."""
        with self._cond:
            if not self._paused or self._u.cancel.is_set or self._u.ended:
                return False
            self._paused = False
            self._since = self._clock.now()  # the idle bound counts from here
            if self._restart and self._held:
                first = np.concatenate(list(self._held))
                n = min(len(first), max(1, round(FADE_S * self.rate)))
                ramp = np.linspace(0.0, 1.0, n, endpoint=False)
                first[:n] = (first[:n] * ramp).astype(np.int16)
                self._held = collections.deque([first])
            if not self._restart:
                self.playback.paused = False  # nothing was stopped: nothing to start again
            if self._pumping:
                self._made(True)  # until the worker has written it (a fake-time test waits)
            self._cond.notify_all()
        return True

    @property
    def paused(self) -> bool:
        return self._paused

    def played_ms(self) -> int:
        """The milliseconds of this stream's audio the sink has played (floored), frozen once
        the stream has ended or while it is paused; 0 before its first sample."""
        with self._cond:
            if self._final_ms is not None:
                return self._final_ms
            return self._played_ms_locked()

    # ------------------------------------------------------------------ the service's side
    def _ended(self) -> None:
        """Its end_speak goes out (the service's lock held, the sink still this stream's:
        stopped, or played out)."""
        if self._final_ms is None:
            self._final_ms = self._played_ms_locked()
        self._words.drop()

    def _played_ms_locked(self) -> int:
        if not self._sounding:
            return 0
        at = self._paused_at if self._paused_at is not None else self._sink.played()
        return (self.playback.origin + at) * 1000 // self.rate

    def _queued_s_locked(self) -> float:
        """Seconds written to the sink and not yet played."""
        if not self._sounding or self._restart:
            return 0.0
        return max(0, self._sent - self._sink.played()) / self.rate

    # ------------------------------------------------------------------ the worker's side
    def pump(self) -> None:
        """The service's worker: write the audio as it comes until finish() (then let the
        worker wait for the last sample) or a stop; raises :class:`SpeechError` after
        :data:`IDLE_S` without audio and without finish()."""
        with self._cond:
            self._pumping = True
            self._since = self._clock.now()
        try:
            while (work := self._next()) is not None:
                held, blocks = work
                if held:
                    self._give(held)
                self._given_back()
                for samples, sample_rate in blocks:
                    self._play(samples, sample_rate)
            if not self._u.cancel.is_set:
                self._close()
                self._drain()
        finally:
            with self._cond:
                self._pumping = False

    def _next(self) -> tuple[list[Samples], list[tuple[Samples, int]]] | None:
        """What to write now: the samples a pause held back (after a resume), then the audio
        that came (after the jitter buffer's wait); None: finished and all written, or
        stopped. Nothing while paused."""
        with self._cond:
            while True:
                if self._u.cancel.is_set:
                    return None
                now = self._clock.now()
                if self._paused:
                    self._made(False)
                    self._clock.wait_notified(self._cond)  # resume(), or a stop, notifies
                    continue
                if self._restart or self._held:
                    self._made(True)
                    return self._take_held_locked(), []
                if self._input:
                    wait = self._jitter_wait_locked(now)
                    if wait <= 0:
                        blocks = list(self._input)
                        self._input.clear()
                        self._input_s, self._oldest_at = 0.0, None
                        self._made(True)
                        return [], blocks
                elif self._finished:
                    return None
                else:
                    wait = self._idle_deadline_locked() - now
                    if wait <= 0:
                        raise SpeechError(
                            f"voice stream {self._u.id}: no audio for {IDLE_S:g} s and no "
                            "finish(); ended"
                        )
                self._made(False)  # waiting for the client, or for time to pass
                self._clock.wait_notified(self._cond, wait)

    def _jitter_wait_locked(self, now: float) -> float:
        """Seconds to hold the waiting audio back (≤ 0: write it now)."""
        dry = not self._sounding or self._restart or self._sink.played() >= self._sent
        if not dry or self._finished or self._input_s >= BURST_S or self._oldest_at is None:
            return 0.0
        return self._oldest_at + JITTER_S - now

    def _take_held_locked(self) -> list[Samples]:
        """The held samples, to write before anything else; the sink started again when a
        pause stopped it (its clock's 0 is then where the pause was in the stream)."""
        held = list(self._held)
        self._held.clear()
        if self._restart:
            self._restart = False
            self.playback.origin += self._paused_at or 0
            self._paused_at = None
            self._sink.start(self.rate)
            self._sent = 0
        return held

    def _given_back(self) -> None:
        """What a pause held is in the sink again: the player follows it (not before: with
        the sink restarted and still empty, it would take the utterance for played out)."""
        with self._cond:
            if self.playback.paused and not (self._paused or self._restart):
                self.playback.paused = False
                self._cond.notify_all()

    def _drain(self) -> None:
        """All was written and the player ends the utterance once the sink has played it; a
        pause meanwhile takes back what was not played, and its resume writes it here."""
        while True:
            with self._cond:
                while not (self._u.cancel.is_set or self._u.finished.is_set()) and (
                    self._paused or not (self._restart or self._held)
                ):
                    self._made(False)
                    self._clock.wait_notified(self._cond)
                if self._u.cancel.is_set or self._u.finished.is_set():
                    return
                held = self._take_held_locked()
            self._give(held)
            self._given_back()

    def _idle_deadline_locked(self) -> float:
        return max(self._since, self._last_at or 0.0, self._dry_at) + IDLE_S

    def _play(self, samples: Samples, sample_rate: int) -> None:
        """Resample ``samples`` to the sink's rate and write them, a piece at a time."""
        resampler = self._resampler
        if resampler is None or resampler.from_rate != sample_rate:
            if resampler is not None:
                self._write(resampler.flush())  # the rate changed: the old one's last samples
            resampler = self._resampler = StreamResampler(sample_rate, self.rate)
        piece = max(1, int(PIECE_S * sample_rate))
        for i in range(0, len(samples), piece):
            if self._u.cancel.is_set:
                return
            self._write(resampler.feed(samples[i : i + piece]))

    def _close(self) -> None:
        """finish() and all written: the last samples, the mouth closed, then the player ends
        the utterance once the sink has played it all."""
        if self._resampler is not None:
            self._write(self._resampler.flush())
        with self._cond:
            if not self._sounding and not self._held:
                self._u.finished.set()  # nothing was ever played
                return
            self._motion.lips.end(self._made_n)
            if self._marked is not None:
                self._marked.end(self._made_n)
        self._player.synthesized(self.playback)

    def _write(self, out: Samples) -> None:
        """Make ``out`` the stream's next samples (its lips and sway placed) and give it to
        the sink, or hold it while paused."""
        if not len(out):
            return
        with self._cond:
            if self._u.cancel.is_set:
                return
            base = self._made_n
            self._made_n = base + len(out)
        self._motion.add(out, base)
        self._give([out])

    def _give(self, pieces: list[Samples]) -> None:
        """Write made samples to the sink in order (the worker), or hold them while paused."""
        for out in pieces:
            with self._cond:
                if self._u.cancel.is_set:
                    return
                if self._paused or self._held:  # after what waits (resume() hands it over)
                    self._held.append(out)
                    continue
                first = not self._sounding
                if first:
                    self._sink.start(self.rate)
                    self._sounding = True
                pauses = self._pauses
            if first and not self._player.show(self.playback):  # its start_speak: audio now
                return
            self._sink.write(out)
            if self._u.cancel.is_set:
                # stopped while write() blocked (a sound card's full buffer lets it return only
                # after the stop): the piece it queued then must not play either
                self._sink.stop()
                return
            with self._cond:
                if self._pauses != pauses:
                    # paused while write() blocked: the piece went in after the pause's stop;
                    # stopped again, it waits for the resume (a sound card may have played a
                    # few ms of it meanwhile: the pause's count stays the one it took)
                    self._sink.stop()
                    self._held.append(out)
                    continue
                self._given.append((self._sent, out))
                self._sent += len(out)
                played = self._sink.played()
                while self._given and self._given[0][0] + len(self._given[0][1]) <= played:
                    self._given.popleft()
                # when the sink will have played all it has (the idle bound's start)
                self._dry_at = self._clock.now() + self._queued_s_locked()
