"""The source seam: :class:`AudioSource` delivers 16 kHz frames to a :class:`FrameSink` (and a
multichannel source all its channels to an optional :class:`MultiFrameSink`), and
:class:`ThreadedSource`, the owned reading thread the file and stream sources share."""

from __future__ import annotations

import logging
import threading
from typing import Protocol, runtime_checkable

from anima.audio import (
    Frame,
)
from anima.errors import EngineStateError

logger = logging.getLogger(__name__)


class FrameSink(Protocol):
    """What a source delivers to; both methods must return quickly (they only enqueue)."""

    def frame(self, samples: Frame) -> None:
        """One frame of 16 kHz mono int16 audio, in stream order."""
        ...

    def end(self, reason: str) -> None:
        """The source has no more audio (``eof``, ``error: …``); no frame follows."""
        ...


class MultiFrameSink(Protocol):
    """What a multichannel source also delivers to (a microphone array's direction of arrival):
    the same frames as its :class:`FrameSink` gets, with every channel (``FRAME_SAMPLES`` ×
    channels, int16 at 16 kHz), each before its mono frame; both methods only enqueue."""

    def frame(self, samples: Frame) -> None: ...

    def end(self, reason: str) -> None: ...


@runtime_checkable
class AudioSource(Protocol):
    """A stream of 16 kHz frames with an owned lifetime."""

    name: str

    def start(self, sink: FrameSink) -> None:
        """Open the input and begin delivering frames to ``sink``."""
        ...

    def stop(self, timeout: float = 1.0) -> None:
        """Stop delivering and release the input; returns within ``timeout`` seconds."""
        ...


class ThreadedSource:
    """The owned thread shared by the file and stream sources."""

    name = "threaded"

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()

    def start(self, sink: FrameSink) -> None:
        if self._thread is not None:
            raise EngineStateError(f"{self.name} source: already started")
        self._prepare()
        self._stopping.clear()
        self._thread = threading.Thread(
            target=self._guarded, args=(sink,), name=f"anima-listen-{self.name}", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 1.0) -> None:
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stopping.set()
        self._interrupt()
        thread.join(timeout)
        if thread.is_alive():
            logger.warning("%s source: its thread did not stop within %.1f s", self.name, timeout)
        else:
            self._release()

    def _guarded(self, sink: FrameSink) -> None:
        try:
            self._run(sink)
        except Exception as exc:
            logger.exception("%s source failed", self.name)
            sink.end(f"error: {exc}")

    def _prepare(self) -> None:
        """Open what ``_run`` reads (on the caller's thread, so errors reach ``start``)."""

    def _interrupt(self) -> None:
        """Wake ``_run`` if it blocks on something other than ``_stopping``."""

    def _release(self) -> None:
        """Close what ``_prepare`` opened (the thread has ended)."""

    def _run(self, sink: FrameSink) -> None:
        raise NotImplementedError
