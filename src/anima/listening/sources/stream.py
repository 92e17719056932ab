"""Streams of audio: :class:`RawPcmSource` (raw PCM from stdin or any binary stream) and
:class:`PushSource` (whatever a caller pushes)."""

from __future__ import annotations

import io
import logging
import os
import select
import sys
import threading
from typing import BinaryIO

import numpy as np
from numpy.typing import NDArray

from anima.audio import (
    SAMPLE_RATE,
    Framer,
    StreamResampler,
)
from anima.errors import EngineStateError
from anima.listening.sources.base import FrameSink, ThreadedSource

logger = logging.getLogger(__name__)


class RawPcmSource(ThreadedSource):
    """Raw 16-bit little-endian mono PCM read from a binary stream (stdin by default).

    The reader waits on the stream and on a stop pipe together (``select``), so ``stop`` wakes it
    at once even while no audio comes. ``sample_rate`` is the stream's rate.
    """

    name = "stdin"

    def __init__(self, stream: BinaryIO | None = None, *, sample_rate: int = SAMPLE_RATE) -> None:
        super().__init__()
        self._stream = stream
        self.sample_rate = sample_rate
        self._wake_r = self._wake_w = -1

    def _prepare(self) -> None:
        self._wake_r, self._wake_w = os.pipe()

    def _interrupt(self) -> None:
        os.write(self._wake_w, b"x")

    def _release(self) -> None:
        os.close(self._wake_r)
        os.close(self._wake_w)
        self._wake_r = self._wake_w = -1

    def _run(self, sink: FrameSink) -> None:
        stream = self._stream or sys.stdin.buffer
        try:
            fd = stream.fileno()
        except (io.UnsupportedOperation, AttributeError):
            fd = -1
        resampler = StreamResampler(self.sample_rate)
        framer = Framer()
        odd = b""
        while not self._stopping.is_set():
            if fd >= 0:
                ready, _, _ = select.select([fd, self._wake_r], [], [])
                if self._wake_r in ready:
                    return
                data = os.read(fd, 4096)
            else:
                data = stream.read(4096)
            if not data:
                break
            data, odd = odd + data, b""
            if len(data) % 2:
                data, odd = data[:-1], data[-1:]
            block = np.frombuffer(data, dtype="<i2").astype(np.int16)
            for frame in framer.feed(resampler.feed(block)):
                sink.frame(frame)
        for frame in framer.flush():
            sink.frame(frame)
        sink.end("eof")


class PushSource:
    """Audio pushed by the caller, delivered on the caller's thread (the sink only enqueues).

    ``push`` takes any block size at any rate; ``end`` ends the stream. Pushing before ``start``
    or after ``stop`` raises :class:`~anima.errors.EngineStateError`.
    """

    name = "push"

    def __init__(self) -> None:
        self._sink: FrameSink | None = None
        self._lock = threading.Lock()
        self._framer = Framer()
        self._resamplers: dict[int, StreamResampler] = {}

    def start(self, sink: FrameSink) -> None:
        with self._lock:
            self._sink = sink

    def stop(self, timeout: float = 1.0) -> None:
        with self._lock:
            self._sink = None

    def push(self, samples: NDArray[np.int16], sample_rate: int = SAMPLE_RATE) -> None:
        """Deliver ``samples`` (mono int16 at ``sample_rate`` Hz) as whole 16 kHz frames."""
        with self._lock:
            sink = self._require()
            if sample_rate != SAMPLE_RATE:
                resampler = self._resamplers.setdefault(sample_rate, StreamResampler(sample_rate))
                samples = resampler.feed(samples)
            for frame in self._framer.feed(samples):
                sink.frame(frame)

    def push_silence(self, seconds: float) -> None:
        """Deliver ``seconds`` of digital silence."""
        self.push(np.zeros(round(seconds * SAMPLE_RATE), dtype=np.int16))

    def end(self, reason: str = "eof") -> None:
        """Flush the last partial frame (zero-padded) and end the stream."""
        with self._lock:
            sink = self._require()
            for frame in self._framer.flush():
                sink.frame(frame)
            sink.end(reason)

    def _require(self) -> FrameSink:
        if self._sink is None:
            raise EngineStateError("push source: not started (or stopped)")
        return self._sink
