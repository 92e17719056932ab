"""What the robot really played, on the playback clock: the echo canceller's reference.

:class:`PlaybackReference` wraps the speech service's :class:`~anima.speech.base.AudioSink`
(it is one itself) and keeps every written sample until the sink's playback clock says it has
been played; then it goes, resampled to the listener's 16 kHz, into a short ring that readers
take from. A stop drops what was queued and never played, exactly as the sink does, so the
reference never holds audio the loudspeaker did not make.

Each :class:`ReferenceReader` (``reference.reader()``) has its own cursor: the echo canceller
reads one, a simulated room (:class:`~anima.testing.room.RoomSource`) another. ``take()`` gives
the samples played since the reader's last call (an empty array while the robot is silent).
Thread-safe: the speech service writes on its thread, the listener reads on its own.
"""

from __future__ import annotations

import collections
import threading

import numpy as np
from numpy.typing import NDArray

from anima.audio import SAMPLE_RATE, StreamResampler
from anima.speech.base import AudioSink, Samples

_KEEP_S = 4.0  # played audio kept for readers that fell behind
_AHEAD = 8  # frames a reader's frame() may lag the playback before it skips to the newest


class PlaybackReference:
    """An :class:`AudioSink` that records what its inner sink plays (see the module docstring)."""

    def __init__(self, sink: AudioSink | None = None, *, keep_s: float = _KEEP_S) -> None:
        from anima.speech.sinks import NullSink

        self.sink: AudioSink = sink if sink is not None else NullSink()
        self.name = self.sink.name
        self._lock = threading.Lock()
        self._pending: collections.deque[Samples] = collections.deque()  # written, not played
        self._pending_offset = 0  # samples of _pending[0] already moved to the ring
        self._moved = 0  # samples of the current utterance moved (the sink's played count)
        self._resampler: StreamResampler | None = None
        self._ring: collections.deque[NDArray[np.int16]] = collections.deque()
        self._ring_samples = 0
        self._keep = round(keep_s * SAMPLE_RATE)
        self.total = 0  # 16 kHz samples ever played (the readers' cursors count these)

    def attach(self, sink: AudioSink) -> PlaybackReference:
        """Wrap ``sink`` (the runtime does, once it has chosen it); returns this reference."""
        self.sink = sink
        self.name = sink.name
        return self

    # the AudioSink protocol -------------------------------------------------------------
    def start(self, sample_rate: int) -> None:
        with self._lock:
            self._move_locked()
            self._pending.clear()
            self._pending_offset = self._moved = 0
            self._resampler = StreamResampler(sample_rate, SAMPLE_RATE)
        self.sink.start(sample_rate)

    def write(self, samples: Samples) -> None:
        with self._lock:
            self._pending.append(samples)
        self.sink.write(samples)

    def played(self) -> int:
        return self.sink.played()

    def written(self) -> int:
        return self.sink.written()

    def stop(self) -> None:
        with self._lock:
            self._move_locked()  # what played before the stop stays
            self.sink.stop()
            self._move_locked()
            self._pending.clear()
            self._pending_offset = 0

    def close(self) -> None:
        self.stop()
        self.sink.close()

    # readers ----------------------------------------------------------------------------
    def reader(self) -> ReferenceReader:
        """A new reader, starting now (it gets only what is played from here on)."""
        with self._lock:
            self._move_locked()
            return ReferenceReader(self, self.total)

    def _take(self, cursor: int) -> tuple[NDArray[np.int16], int]:
        with self._lock:
            self._move_locked()
            oldest = self.total - self._ring_samples
            cursor = max(cursor, oldest)  # a reader that fell behind loses the oldest audio
            want = self.total - cursor
            if want <= 0:
                return np.zeros(0, np.int16), self.total
            blocks, have = [], 0  # the newest blocks that cover it, not the whole ring
            for block in reversed(self._ring):
                blocks.append(block)
                have += len(block)
                if have >= want:
                    break
            return np.concatenate(blocks[::-1])[-want:], self.total

    def _move_locked(self) -> None:
        """Move what the sink has played since the last call from pending into the ring."""
        if self._resampler is None:
            return
        n = self.sink.played() - self._moved
        parts: list[Samples] = []
        while n > 0 and self._pending:
            block = self._pending[0]
            take = min(n, len(block) - self._pending_offset)
            parts.append(block[self._pending_offset : self._pending_offset + take])
            self._pending_offset += take
            n -= take
            self._moved += take
            if self._pending_offset >= len(block):
                self._pending.popleft()
                self._pending_offset = 0
        if not parts:
            return
        out = self._resampler.feed(np.concatenate(parts))
        if len(out):
            self._ring.append(out)
            self._ring_samples += len(out)
            self.total += len(out)
            while self._ring_samples - len(self._ring[0]) >= self._keep:
                self._ring_samples -= len(self._ring.popleft())


class ReferenceReader:
    """One reader's cursor on a :class:`PlaybackReference`."""

    def __init__(self, reference: PlaybackReference, cursor: int) -> None:
        self._reference = reference
        self._cursor = cursor
        self._ahead = np.zeros(0, np.int16)  # taken, not yet given by frame()

    def frame(self, n: int) -> NDArray[np.int16]:
        """Exactly ``n`` samples, for one microphone frame: what was played since, silence
        when less was, the rest kept for the next frame — and when playback ran more than
        ``_AHEAD`` frames ahead of the microphone, only the newest (the two stay in step)."""
        ahead = np.concatenate([self._ahead, self.take()])
        if len(ahead) > _AHEAD * n:
            ahead = ahead[-n:]
        out, self._ahead = ahead[:n], ahead[n:]
        if len(out) < n:
            out = np.concatenate([out, np.zeros(n - len(out), np.int16)])
        return out

    def take(self) -> NDArray[np.int16]:
        """The 16 kHz samples played since the last call (empty while nothing played)."""
        data, self._cursor = self._reference._take(self._cursor)
        return data
