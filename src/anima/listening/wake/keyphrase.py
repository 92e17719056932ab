"""The pocketsphinx wake spotter (``listen.wake: keyphrase``).

:class:`KeyphraseSpotter` runs pocketsphinx's keyphrase search ("hey robot" by default) over the
audio stream, offline, ~0.75 ms per 32 ms frame, in a worker process
(:mod:`anima.listening.sphinx_worker`: loading the decoder held the GIL ~115 ms, and each
frame's search held it too). A hit says where in the stream the phrase ended, so the recording
can begin right there and keep a command spoken without a pause ("hey robot wave"). It reports
40–180 ms after the phrase ends. ``threshold`` trades misses for false alarms: lower (1e-40)
hears more, higher (1e-20) hears less.
"""

from __future__ import annotations

import logging
import math

from anima.audio import SAMPLE_RATE, Frame
from anima.errors import ConfigError
from anima.listening.asr import import_pocketsphinx, normalize
from anima.listening.sphinx_worker import SphinxWorker, still_running
from anima.listening.wake.spotter import WakeHit

logger = logging.getLogger(__name__)

__all__ = ["KeyphraseSpotter", "WakeHit"]

_SAMPLES_PER_PS_FRAME = SAMPLE_RATE // 100  # pocketsphinx analyses 100 frames per second


class KeyphraseSpotter:
    """pocketsphinx keyphrase spotting. Feed frames with their stream position; use from one
    thread. A gap in positions (audio that was not fed, e.g. while gated) restarts the search."""

    name = "keyphrase"

    def __init__(self, phrase: str = "hey robot", *, threshold: float = 1e-30) -> None:
        self.phrase = normalize(phrase)
        if not self.phrase:
            raise ConfigError(f"listen.wake_phrase: no words in {phrase!r}")
        if not (math.isfinite(threshold) and 0 < threshold < 1):
            raise ConfigError(f"listen.wake_threshold must be in (0, 1), got {threshold!r}")
        self.threshold = threshold
        self._decoder: SphinxWorker | None = None
        self._utt_start = 0  # stream position of the current utterance's first sample
        self._next = -1  # the position the next frame should have; -1: no utterance running

    def load(self) -> None:
        if still_running(self._decoder, self.name):
            return
        import_pocketsphinx()  # here, so a missing package is named before a process starts
        decoder = SphinxWorker.start(
            {"loglevel": "FATAL", "lm": None, "kws_threshold": self.threshold}
        )
        try:
            words = self.phrase.split()
            missing = [w for w, k in zip(words, decoder.known(words), strict=True) if not k]
            if missing:
                raise ConfigError(
                    f"listen.wake_phrase {self.phrase!r}: not in the dictionary: "
                    + ", ".join(missing)
                )
            decoder.add_keyphrase("wake", self.phrase)
            decoder.activate("wake")
        except BaseException:
            decoder.close()
            raise
        self._decoder = decoder
        self._next = -1

    def close(self) -> None:
        """End the worker process (a later call starts a new one)."""
        if self._decoder is not None:
            self._decoder.close()
            self._decoder = None
        self._next = -1

    def reset(self) -> None:
        """Forget the audio so far (the next frame starts a fresh search)."""
        if self._next >= 0 and self._decoder is not None and self._decoder.alive:
            self._decoder.end_utt()
        self._next = -1

    def feed(self, frame: Frame, position: int) -> WakeHit | None:
        """Search one frame whose first sample is at stream ``position``."""
        self.load()
        decoder = self._decoder
        assert decoder is not None
        if position != self._next:
            self.reset()
            decoder.start_utt()
            self._utt_start = position
        self._next = position + len(frame)
        hyp = decoder.feed(frame.tobytes())
        if hyp.text is None:
            return None
        detected = self._next
        end = (
            self._utt_start + (hyp.end_frame + 1) * _SAMPLES_PER_PS_FRAME
            if hyp.end_frame is not None
            else detected
        )
        self.reset()  # a hit ends the search: the same words cannot wake twice
        return WakeHit(phrase=self.phrase, end_sample=min(end, detected), detected_sample=detected)
