"""Audio sources: where the listener's 16 kHz frames come from.

A source delivers frames of :data:`~anima.audio.FRAME_SAMPLES` samples at 16 kHz mono
int16 to a :class:`FrameSink`, on a thread it owns (or the caller's, for :class:`PushSource`),
and says when its audio has ended. ``start`` opens the device or file; ``stop(timeout)`` ends the
thread and returns within ``timeout``. Constructors touch nothing.

- :class:`MicrophoneSource`: the default input device through ``sounddevice`` (``listen`` extra,
  Debian ``libportaudio2``); resampled when the device will not run at 16 kHz.
- :class:`WavSource`: a WAV file or an array, resampled as needed (anima's TTS makes 22.05 kHz);
  as fast as the listener takes it, or paced in real time for demos and benchmarks.
- :class:`RawPcmSource`: raw 16-bit little-endian mono PCM from a binary stream (stdin):
  ``arecord -f S16_LE -r 16000 -c 1 | anima …``.
- :class:`PushSource`: whatever a caller pushes (tests, a network stream, an echo canceller).

::

    base.py        AudioSource, FrameSink (the seam) and ThreadedSource (the owned thread)
    wav.py         WavSource; read_wav, write_wav, check_wav
    stream.py      RawPcmSource, PushSource
    microphone.py  MicrophoneSource
"""

from anima.listening.sources.base import AudioSource, FrameSink
from anima.listening.sources.microphone import MicrophoneSource
from anima.listening.sources.stream import PushSource, RawPcmSource
from anima.listening.sources.wav import (
    WavSource,
    check_rate,
    check_wav,
    open_wav,
    read_wav,
    write_wav,
)

__all__ = [
    "AudioSource",
    "FrameSink",
    "MicrophoneSource",
    "PushSource",
    "RawPcmSource",
    "WavSource",
    "check_rate",
    "check_wav",
    "open_wav",
    "read_wav",
    "write_wav",
]
