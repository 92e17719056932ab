"""The listening parts a config names, made (not loaded) through their registries
(:mod:`anima.config.listening_parts`): the source (``agent.audio_in``), the recognizer
(``listen.asr``) and the wake spotter (``listen.wake``).

Every maker of one kind takes the same arguments, so making a part is a registry lookup. ``auto``
is the Whisper-based part when its packages are installed, else the pocketsphinx one, with a
notice; :func:`recognizer_name` is that choice, made here only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from anima.listening.registry import (
    NO_WHISPER,
    RECOGNIZERS,
    SOURCES,
    SPOTTERS,
    check_audio_in,
    whisper_installed,
)

if TYPE_CHECKING:
    from anima.config.listening import ListenConfig
    from anima.listening.asr import Recognizer
    from anima.listening.sources import AudioSource
    from anima.listening.wake.spotter import Spotter

logger = logging.getLogger(__name__)

Notify = Callable[[str], None]  # where a maker says what it chose instead (a notice)

NO_WHISPER_WAKE = (
    "Whisper is not installed (pip install 'anima[listen]'): the wake phrase is spotted by "
    "pocketsphinx, which misses it in some voices (never hears eSpeak NG's en-us)"
)


def recognizer_name(config: ListenConfig) -> str:
    """The recognizer ``config.asr`` makes: ``whisper`` or ``pocketsphinx`` (``auto``: Whisper
    when it is installed). The one place the Whisper choice is made."""
    name = RECOGNIZERS.check(config.asr)
    if name != "auto":
        return name
    return "whisper" if whisper_installed() else "pocketsphinx"


def make_recognizer(
    config: ListenConfig, *, phrases: Sequence[str] = (), on_notice: Notify | None = None
) -> Recognizer:
    """The recognizer ``config.asr`` names, made (not loaded): ``whisper`` is biased towards
    ``phrases`` and the wake phrase; ``pocketsphinx`` uses ``config.asr_mode`` (its grammar is
    ``phrases``). ``auto`` falls back to pocketsphinx when Whisper is missing and says so
    through ``on_notice`` (and the log)."""
    made: Recognizer = RECOGNIZERS.load(config.asr)(config, phrases=phrases, on_notice=on_notice)
    return made


def auto_recognizer(
    config: ListenConfig, *, phrases: Sequence[str] = (), on_notice: Notify | None = None
) -> Recognizer:
    """``listen.asr: auto``: Whisper when installed, else pocketsphinx with a notice."""
    name = recognizer_name(config)
    if name == "pocketsphinx":
        _notice(NO_WHISPER, on_notice)
    made: Recognizer = RECOGNIZERS.load(name)(config, phrases=phrases, on_notice=on_notice)
    return made


def whisper_recognizer(
    config: ListenConfig, *, phrases: Sequence[str] = (), on_notice: Notify | None = None
) -> Recognizer:
    """``listen.asr: whisper``: biased towards ``phrases`` and the wake phrase."""
    from anima.listening.whisper.asr import WhisperAsr

    return WhisperAsr(vocabulary=phrases, wake_phrase=config.wake_phrase, beam_size=config.asr_beam)


def pocketsphinx_recognizer(
    config: ListenConfig, *, phrases: Sequence[str] = (), on_notice: Notify | None = None
) -> Recognizer:
    """``listen.asr: pocketsphinx``: ``config.asr_mode``, the grammar of ``phrases`` or any
    words."""
    from anima.listening.asr import PocketsphinxAsr

    return PocketsphinxAsr(phrases=phrases, mode=config.asr_mode)


def make_spotter(config: ListenConfig, *, on_notice: Notify | None = None) -> Spotter:
    """The spotter ``config.wake`` names, made (not loaded). ``auto`` is ``asr`` when Whisper
    is installed, else ``keyphrase`` — and says so through ``on_notice`` (and the log)."""
    made: Spotter = SPOTTERS.load(config.wake)(config, on_notice=on_notice)
    return made


def auto_spotter(config: ListenConfig, *, on_notice: Notify | None = None) -> Spotter:
    """``listen.wake: auto``: ``asr`` when Whisper is installed, else ``keyphrase``."""
    if whisper_installed():
        return asr_spotter(config, on_notice=on_notice)
    _notice(NO_WHISPER_WAKE, on_notice)
    return keyphrase_spotter(config, on_notice=on_notice)


def asr_spotter(config: ListenConfig, *, on_notice: Notify | None = None) -> Spotter:
    """``listen.wake: asr``: the phrase read by Whisper at each onset of sound."""
    from anima.listening.wake.asr_spotter import AsrSpotter

    return AsrSpotter(config.wake_phrase, vad_gate_db=config.vad_gate_db)


def keyphrase_spotter(config: ListenConfig, *, on_notice: Notify | None = None) -> Spotter:
    """``listen.wake: keyphrase``: pocketsphinx's keyphrase search."""
    from anima.listening.wake.keyphrase import KeyphraseSpotter

    return KeyphraseSpotter(config.wake_phrase, threshold=config.wake_threshold)


def _notice(message: str, on_notice: Notify | None) -> None:
    logger.warning("%s", message)
    if on_notice is not None:
        on_notice(message)


def make_source(audio_in: str) -> AudioSource | None:
    """The source ``audio_in`` names (``agent.audio_in``), or a :class:`WavSource` playing
    that ``.wav`` file in real time; None for ``none`` (or ``auto`` without a microphone).
    A file that is there is checked now (:func:`~anima.listening.sources.check_wav`: a FIFO, a
    rate outside 8-192 kHz are a ConfigError before anything starts); one that is not yet is
    read when the source starts."""
    if audio_in in SOURCES.entries:
        made: AudioSource | None = SOURCES.load(audio_in)()
        return made
    check_audio_in(audio_in)
    from anima.listening.sources import WavSource, check_wav

    check_wav(audio_in)
    return WavSource(audio_in, realtime=True)


def auto_source() -> AudioSource | None:
    """``auto``: the microphone when the machine has an input device, else nothing."""
    from anima.listening.sources import MicrophoneSource

    return MicrophoneSource() if _has_microphone() else None


def no_source() -> None:
    """``none``: no ears (wake and ask over MQTT or the console)."""
    return


def stdin_source() -> AudioSource:
    """``stdin``: raw 16-bit mono PCM at 16 kHz on standard input."""
    import sys

    from anima.listening.sources import RawPcmSource

    return RawPcmSource(sys.stdin.buffer)


def _has_microphone() -> bool:
    try:
        import sounddevice as sd

        return sd.query_devices(kind="input") is not None
    except Exception:  # no PortAudio or no input device
        return False
