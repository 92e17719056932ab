"""Wake spotters: the protocol, the hit they report, and matching a phrase in a transcript.

A :class:`Spotter` is fed every frame of the stream with its position and says when it heard
the wake phrase (a :class:`WakeHit`: where in the stream the phrase ended, so the recording can
begin right there and keep a command said in the same breath). Two ship:

- ``asr`` (:class:`~anima.listening.spotting_asr.AsrSpotter`): Whisper tiny.en scores the
  phrase at the start of each stretch of speech the VAD finds. It hears the voices Whisper
  hears, and any phrase (the robot's name) without a dictionary.
- ``keyphrase`` (:class:`~anima.listening.wake.KeyphraseSpotter`): pocketsphinx's keyphrase
  search, tiny and fast, but deaf to some voices (never eSpeak NG's en-us).

``listen.wake: auto`` takes ``asr`` when CTranslate2 and the bundled Whisper model are
installed, else ``keyphrase``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from anima.listening.audio import Frame
from anima.listening.registry import SPOTTERS, whisper_installed

if TYPE_CHECKING:
    from anima.listening.config import ListenConfig

logger = logging.getLogger(__name__)

NO_WHISPER_WAKE = (
    "Whisper is not installed (pip install 'anima[listen]'): the wake phrase is spotted by "
    "pocketsphinx, which misses it in some voices (never hears eSpeak NG's en-us)"
)


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


def make_spotter(
    config: ListenConfig, *, on_notice: Callable[[str], None] | None = None
) -> Spotter:
    """The spotter ``config.wake`` names, made (not loaded). ``auto`` is ``asr`` when Whisper
    is installed, else ``keyphrase`` — and says so through ``on_notice`` (and the log)."""
    name = SPOTTERS.check(config.wake)
    if name == "auto":
        name = "asr" if whisper_installed() else "keyphrase"
        if name == "keyphrase":
            logger.warning("%s", NO_WHISPER_WAKE)
            if on_notice is not None:
                on_notice(NO_WHISPER_WAKE)
    if name == "asr":
        from anima.listening.spotting_asr import AsrSpotter

        return AsrSpotter(config.wake_phrase)
    from anima.listening.wake import KeyphraseSpotter

    return KeyphraseSpotter(config.wake_phrase, threshold=config.wake_threshold)
