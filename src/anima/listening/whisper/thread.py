"""Whisper's partial decodes on their own thread (:class:`~anima.listening.whisper.asr.WhisperAsr`):
the listener's thread asks, never waits for a partial, and takes the newest result.

CTranslate2 releases the GIL while it decodes, so the 100 Hz loop and the listener go on
meanwhile; one request slot (the newest wins) bounds the work to one decode at a time.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from anima.audio import Frame

logger = logging.getLogger(__name__)

STOP_TIMEOUT_S = 5.0  # close(): the longest a decode in progress is waited for


class _Counted(Protocol):
    @property
    def samples(self) -> int: ...  # the audio the decode covered


D = TypeVar("D", bound=_Counted)


class DecodeThread(Generic[D]):
    """The partial decodes: one request slot (the newest wins), one result per utterance."""

    def __init__(self, decode: Callable[[Frame], D]) -> None:
        self._decode = decode
        self._changed = threading.Condition()
        self._pending: tuple[int, Frame] | None = None
        self._busy: tuple[int, int] | None = None  # (utterance, samples) being decoded
        self._done: tuple[int, D] | None = None
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="anima-whisper", daemon=True)
        self._thread.start()

    def request(self, utterance: int, audio: Frame) -> bool:
        """Decode ``audio`` unless a decode is running (then False: asked again later)."""
        with self._changed:
            if self._busy is not None or self._stopping:
                return False
            self._pending = (utterance, audio)
            self._busy = (utterance, len(audio))
            self._changed.notify_all()
            return True

    @property
    def busy(self) -> bool:
        """A decode is asked for or running."""
        with self._changed:
            return self._busy is not None

    def result(self, utterance: int) -> D | None:
        """The newest finished decode of ``utterance``, if any."""
        with self._changed:
            done = self._done
        return done[1] if done is not None and done[0] == utterance else None

    def wait(self, utterance: int, samples: int) -> D | None:
        """The decode of ``utterance``'s first ``samples``, waiting while it runs."""
        with self._changed:
            self._changed.wait_for(
                lambda: self._busy != (utterance, samples) or self._stopping, STOP_TIMEOUT_S
            )
            done = self._done
        if done is None or done[0] != utterance or done[1].samples != samples:
            return None
        return done[1]

    def forget(self) -> None:
        """A new utterance: drop a request not yet taken and the last result."""
        with self._changed:
            if self._pending is not None:
                self._pending = None
                self._busy = None
            self._done = None

    def stop(self, timeout: float) -> None:
        with self._changed:
            self._stopping = True
            self._pending = None
            self._changed.notify_all()
        self._thread.join(timeout)
        if self._thread.is_alive():
            logger.warning("whisper: the decoding thread did not stop within %.1f s", timeout)

    def _run(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._pending is not None or self._stopping)
                if self._stopping:
                    return
                assert self._pending is not None
                (utterance, audio), self._pending = self._pending, None
            try:
                decoded: D | None = self._decode(audio)
            except Exception:  # a failed partial must not end the thread; the final decodes again
                logger.exception("whisper: a partial decode failed")
                decoded = None
            with self._changed:
                if decoded is not None:
                    self._done = (utterance, decoded)
                self._busy = None
                self._changed.notify_all()
