"""Listening: wake word, voice activity, speech recognition — offline, from any audio source.

::

    sources.py    AudioSource: microphone, WAV file, stdin PCM, PushSource → 16 kHz frames
    audio.py      the frame format, resampling, framing
    vad.py        Vad (Silero, energy fallback) and SpeechDetector (start/end hysteresis)
    asr.py        Recognizer; pocketsphinx with a command grammar or the language model
    whisper.py    WhisperAsr: open vocabulary, Whisper tiny.en on CTranslate2 (the default)
    registry.py   one registry per kind (source, VAD, wake, ASR, turn), checked at config load
    wake.py       KeyphraseSpotter ("hey robot") and WakeTrigger (keyboard, MQTT)
    recorder.py   Recorder: the rounds wake → record → endpoint → transcript, on audio time
    listener.py   Listener: the recorder on a worker thread, callbacks and events
    config.py     ListenConfig

The optional packages (``pip install 'anima[listen]'``) are imported when a model loads.
"""

from anima.config.listening import ListenConfig
from anima.listening.listener import Listener, RecordingStart, RoundReport
from anima.listening.recorder import Round
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
    "Listener",
    "MicrophoneSource",
    "PushSource",
    "RawPcmSource",
    "RecordingStart",
    "Round",
    "RoundReport",
    "WakeTrigger",
    "WavSource",
]
