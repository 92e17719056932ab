"""The speech parts a config names, checked when the config loads: the TTS engines
(``speech.engines``; makers in :mod:`anima.speech.engines`) and the audio sinks
(``speech.audio_out``; makers in :mod:`anima.speech.sinks`).

The registries live with the config, which checks the names, and hold only strings: loading a
config imports neither :mod:`anima.speech` nor an engine (Piper's onnxruntime, libespeak-ng,
numpy). :func:`anima.speech.load_engines` and :func:`anima.speech.sinks.choose_sink` make each
part through them.
"""

from __future__ import annotations

from anima.errors import ConfigError
from anima.registry import Registry

# speech.engines: each one of these (one TTSEngine protocol, anima.speech.base)
ENGINES = Registry(
    "speech.engines",
    {
        "piper": "anima.speech.engines:make_piper",
        "espeak": "anima.speech.engines:make_espeak",
        "azure": "anima.speech.engines:make_azure",
    },
)

# speech.audio_out: one of these names, or a .wav file's path (WavSink)
SINKS = Registry(
    "speech.audio_out",
    {
        "auto": "anima.speech.sinks:_auto",
        "null": "anima.speech.sinks:_null",
        "sounddevice": "anima.speech.sinks:_sounddevice",
    },
)


def check_audio_out(audio_out: str | None) -> None:
    """ConfigError unless ``audio_out`` is a sink's name or a ``.wav`` path (checked when the
    config loads: a typo such as ``nul`` would otherwise be written as a file named nul)."""
    if audio_out is None or audio_out in SINKS.entries or audio_out.lower().endswith(".wav"):
        return
    raise ConfigError(
        f"speech.audio_out must be one of {', '.join(SINKS.names)} or a .wav file's path, "
        f"got {audio_out[:60]!r}"
    )
