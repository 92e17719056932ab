"""The listening parts a config names: one explicit registry per kind, checked at config load.

Each kind has one protocol (in its module under :mod:`anima.listening`) and one registry here,
from the name a config gives (``listen.asr: whisper``) to the ``"module:attr"`` of what makes it.
The registries live with the config, which checks the names, and hold only strings: loading a
config imports neither :mod:`anima.listening` nor an engine (CTranslate2, pocketsphinx, ggml,
numpy). :func:`anima.listening.make_listener` makes each part through them::

    kind         config key        protocol                                   registry
    source       agent.audio_in    sources.AudioSource                        SOURCES
    VAD          listen.vad        vad.Vad                                    VADS
    wake spotter listen.wake       wake.spotter.Spotter                       SPOTTERS
    recognizer   listen.asr        asr.Recognizer                             RECOGNIZERS
    turn         listen.turn       turn.detector.TurnDetector                 TURNS
    echo         listen.echo       echo.canceller.EchoCanceller               ECHOS

A maker of one kind takes what every maker of that kind takes (a recognizer's: the config, the
phrases, where to send a notice), so making one is a lookup, never an ``if`` on its name.
``auto`` picks the best part installed; how each kind decides is in its ``auto`` maker. An
unknown name is a :class:`~anima.errors.ConfigError` that lists the known ones. Fakes of each
kind, to test code that uses them without models, are in :mod:`anima.testing.listening`.
"""

from __future__ import annotations

from anima.errors import ConfigError
from anima.registry import Registry

_MAKERS = "anima.listening.makers"

# agent.audio_in: one of these names, or a .wav file's path (WavSource, played in real time);
# "push" is for code that feeds the frames itself (a benchmark), not for a config
SOURCES = Registry(
    "agent.audio_in",
    {
        "auto": f"{_MAKERS}:auto_source",  # the microphone when there is one
        "none": f"{_MAKERS}:no_source",  # deaf: wake and ask over MQTT or the console
        "mic": "anima.listening.sources.microphone:MicrophoneSource",
        "stdin": f"{_MAKERS}:stdin_source",
        "push": "anima.listening.sources.stream:PushSource",
    },
)


def check_audio_in(audio_in: str) -> None:
    """ConfigError unless ``audio_in`` is a source's name or a ``.wav`` path."""
    if audio_in in SOURCES.entries or audio_in.lower().endswith(".wav"):
        return
    raise ConfigError(
        f"agent.audio_in must be one of {', '.join(SOURCES.names)} or a .wav file's path, "
        f"got {audio_in[:60]!r}"
    )


# each maker: () -> a loaded Vad
VADS = Registry(
    "listen.vad",
    {
        "auto": "anima.listening.vad:auto_vad",  # Silero, else energy with a warning
        "silero": "anima.listening.vad:SileroVad",
        "energy": "anima.listening.vad:EnergyVad",
    },
)
# each maker: (config, *, on_notice) -> Spotter
SPOTTERS = Registry(
    "listen.wake",
    {
        "auto": f"{_MAKERS}:auto_spotter",  # asr when Whisper is installed
        "asr": f"{_MAKERS}:asr_spotter",
        "keyphrase": f"{_MAKERS}:keyphrase_spotter",
    },
)
# each maker: (config, *, phrases, on_notice) -> Recognizer
RECOGNIZERS = Registry(
    "listen.asr",
    {
        "auto": f"{_MAKERS}:auto_recognizer",  # whisper when installed
        "whisper": f"{_MAKERS}:whisper_recognizer",
        "pocketsphinx": f"{_MAKERS}:pocketsphinx_recognizer",
    },
)
# each maker: (*, endpoint_s, quick_s, hold_s, speech_threshold, level_gate_db, gate)
TURNS = Registry(
    "listen.turn",
    {
        "auto": "anima.listening.turn.cues:cues_turn",
        "silence": "anima.listening.turn.detector:silence_turn",
        "cues": "anima.listening.turn.cues:cues_turn",
    },
)
# each maker: () -> EchoCanceller (the names are anima.choices.EchoCanceller's)
ECHOS = Registry(
    "listen.echo",
    {
        "auto": "anima.listening.echo.canceller:auto_echo",  # webrtc when installed, else none
        "webrtc": "anima.listening.echo.canceller:WebRtcEcho",
        "none": "anima.listening.echo.canceller:NoEcho",
    },
)
