"""Listening: wake word, voice activity, speech recognition — offline, from any audio source.

::

    making.py     make_listener: the whole listener from its config, in one call
    listener.py   Listener: the recorder on a worker thread, its results sent up in order
    results.py    ListenResult: the one stream of typed results (wake, transcripts, timeout…)
    recorder.py   Recorder: the rounds wake → record → endpoint → transcript, on audio time
    makers.py     the parts a config names, made through their registries (the Whisper choice)
    registry.py   the registries (anima.config.listening_parts) and what auto asks
    sources/      AudioSource: microphone, WAV file, stdin PCM, PushSource → 16 kHz frames
    vad.py        Vad (Silero, energy fallback) and SpeechDetector (start/end hysteresis)
    asr.py        Recognizer (and its optional Rereads, Weighs); pocketsphinx
    sphinx_worker.py  pocketsphinx in a worker process (the grammar ASR, the keyphrase)
    whisper/      WhisperAsr: open vocabulary, Whisper tiny.en on CTranslate2 (the default)
    wake/         the wake spotters ("hey robot") and WakeTrigger (keyboard, MQTT)
    turn/         the end of a turn: silence, or the words and the voice's pitch
    echo/         full duplex: the robot's own voice taken out of its microphone

The configuration is :class:`~anima.config.listening.ListenConfig` (also importable from here);
the frame format (16 kHz, 32 ms frames) is :mod:`anima.audio`'s.
The optional packages (``pip install 'anima[listen]'``) are imported when a model loads.
"""

from anima.config.listening import ListenConfig
from anima.listening.listener import Listener
from anima.listening.making import make_listener
from anima.listening.outcomes import Round
from anima.listening.results import ListenResult, RecordingStart, RoundReport
from anima.listening.sources import (
    AudioSource,
    MicrophoneSource,
    PushSource,
    RawPcmSource,
    WavSource,
)
from anima.listening.wake.trigger import WakeTrigger

__all__ = [
    "AudioSource",
    "ListenConfig",
    "ListenResult",
    "Listener",
    "MicrophoneSource",
    "PushSource",
    "RawPcmSource",
    "RecordingStart",
    "Round",
    "RoundReport",
    "WakeTrigger",
    "WavSource",
    "make_listener",
]
