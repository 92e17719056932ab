"""Wake spotters: the protocol, the hit they report, and matching a phrase in a transcript.

A :class:`Spotter` is fed every frame of the stream with its position and says when it heard
the wake phrase (a :class:`WakeHit`: where in the stream the phrase ended, so the recording can
begin right there and keep a command said in the same breath). Two ship:

- ``asr`` (:class:`~anima.listening.wake.asr_spotter.AsrSpotter`): Whisper tiny.en scores the
  phrase at the start of each stretch of speech the VAD finds. It hears the voices Whisper
  hears, and any phrase (the robot's name) without a dictionary.
- ``keyphrase`` (:class:`~anima.listening.wake.keyphrase.KeyphraseSpotter`): pocketsphinx's
  keyphrase search, tiny and fast, but deaf to some voices (never eSpeak NG's en-us).

``listen.wake: auto`` takes ``asr`` when CTranslate2 and the bundled Whisper model are
installed, else ``keyphrase``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from anima.audio import Frame

if TYPE_CHECKING:
    pass

logger = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class WakeHit:
    """The wake phrase was heard."""

    phrase: str
    end_sample: int  # stream position (samples) where the phrase ended
    detected_sample: int  # stream position of the end of the frame that reported it
    confidence: float | None = None  # the spotter's confidence in the phrase (0-1), if it has one


@runtime_checkable
class Spotter(Protocol):
    """Listens for the wake phrase in the stream. Used from one thread (the listener's)."""

    name: str
    phrase: str  # normalized: lower-case words

    def load(self) -> None:
        """Load the models (may take a second); raises when unavailable."""
        ...

    def reset(self) -> None:
        """Forget the audio so far (the next frame starts afresh)."""
        ...

    def feed(self, frame: Frame, position: int) -> WakeHit | None:
        """One frame whose first sample is at stream ``position``; a gap in positions (audio
        that was not fed) starts afresh."""
        ...

    def close(self) -> None:
        """Free what :meth:`load` took (a worker process, a model); a later feed loads again."""
        ...
