"""The listener's configuration (the ``listen`` section): one frozen, keyword-only dataclass,
validated on creation. It lives with the config, below :mod:`anima.listening`: loading a config
imports no listening part (the names of the parts are checked against
:mod:`anima.config.listening_parts`).

Every duration is in seconds of **audio** (the listener's timeouts run on the stream's own time,
so a file played faster than real time times out exactly as a microphone would).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from anima.choices import AsrMode, EchoCanceller, TurnGate, checked
from anima.config.listening_parts import RECOGNIZERS, SPOTTERS, TURNS, VADS
from anima.config.vision import check_mount
from anima.errors import ConfigError

# measured (anima bench asr, docs/listening.md): Whisper's confidence on requests it heard right,
# clean or in noise, was ≥ 0.21 (4 runs); on noise or babble alone ≤ 0.16
MIN_CONFIDENCE = 0.2
MAX_PHRASE = 100  # characters of the wake phrase (a few dictionary words)
MAX_START_FRAMES = 100  # 32 ms frames: over 3 s of speech before it counts is a typo
MAX_BEAM = 10  # Whisper's beam: wider costs time and hears no better
MAX_GATE_DB = 60.0  # the level gate: past this no room is under the voice (16-bit audio's range)
MAX_MIN_CHARS = 1000  # a transcript floor past this would discard every request
# the longest sane value of each timeout, in seconds of audio (past it, a typo, not a wish);
# max_utterance_s also bounds the audio one utterance holds (16 kHz × 2 bytes × 120 s ≈ 4 MB)
LONGEST = {
    "endpoint_silence_s": 10.0,
    "no_speech_timeout_s": 600.0,
    "silence_timeout_s": 600.0,
    "max_utterance_s": 120.0,
    "turn_quick_s": 10.0,
    "turn_hold_s": 10.0,
    "turn_early_s": 10.0,
    "turn_confirm_quick_s": 10.0,
    "turn_confirm_endpoint_s": 10.0,
}
# the listener decides once an audio frame (32 ms: anima.audio.FRAME_S, 512 samples at
# 16 kHz): a silence, timeout or barge-in shorter than one is never what was written (1e-9 s gave
# up on, or cut, every round at its first frame)
SHORTEST_S = 512 / 16_000
MAX_MICS = 32  # microphones in listen.mics: a USB array has 4-16
MIC_REACH_M = 1.0  # each microphone within this of the robot's origin, on every axis
MIC_APART_M = 0.001  # two microphones closer than this are one (a copied line)


@dataclass(frozen=True, kw_only=True)
class ListenConfig:
    wake_word: bool = True  # spot the wake phrase in the audio (False: only wake() and triggers)
    wake: str = "auto"  # the spotter: auto | asr | keyphrase (registry.SPOTTERS)
    wake_phrase: str = "hey robot"  # or the robot's name; keyphrase needs dictionary words
    wake_threshold: float = 1e-30  # keyphrase detection threshold: lower hears more, misfires more
    wake_while_gated: bool = False  # spot the wake phrase while gated (barge-in; needs an AEC)
    asr: str = "auto"  # auto | whisper | pocketsphinx (auto: Whisper, else pocketsphinx + notice)
    asr_mode: AsrMode = AsrMode.GRAMMAR  # pocketsphinx only: the command phrases, or any words
    # Whisper only: the decoder's beam (1: greedy). 5 heard eSpeak's en-us with about half the
    # word errors of greedy decoding, for ~1.5× the decode time; 3 sometimes stopped a
    # hypothesis early ("What can you" for "what can you do?"): docs/listening.md
    asr_beam: int = 5
    # transcripts less sure than this (0-1) are not acted on: "Sorry, I didn't catch that."
    min_confidence: float = MIN_CONFIDENCE
    vad: str = "auto"  # auto | silero | energy (auto: Silero, else energy with a warning)
    turn: str = "auto"  # end of turn: auto | silence | cues (registry.TURNS)
    turn_quick_s: float = 0.25  # cues: the silence after a complete request whose pitch falls
    turn_hold_s: float = 1.2  # cues: after "and", "the", "um"… or a voice that does not fall
    # full duplex: this much silence that may end the turn (words that do not promise more)
    # begins the reply while the turn detector still waits; the person going on takes it back
    # (docs/listening.md, *Early reply*); null: the reply waits for the end of the turn
    turn_early_s: float | None = 0.25
    # … and with it, the turn's own end (the final that confirms the reply and lets its plan
    # move) waits these in place of turn_quick_s and endpoint_silence_s: the words have begun,
    # so the final can wait out a pause inside the sentence (docs/listening.md: its cut-offs)
    turn_confirm_quick_s: float = 0.5
    turn_confirm_endpoint_s: float = 1.0
    # cues: a silence only the level gate hears (babble, which the VAD calls speech) ends the
    # turn after turn_hold_s ("hold"), or after turn_quick_s when the voice fell ("cues")
    turn_gate: TurnGate = TurnGate.CUES
    # cues: frames this far (dB) below the utterance's own voice are the room's (babble the VAD
    # calls speech); null: no level gate (in babble the turn then ends at max_utterance_s)
    turn_gate_db: float | None = 12.0
    # the VAD's model runs only on frames this far (dB) over the room's floor in the speech
    # band, and 1 s after them (idle CPU: anima.listening.vad_gate); null: on every frame
    vad_gate_db: float | None = 3.0
    vad_start_threshold: float = 0.5  # speech probability that starts speech
    vad_end_threshold: float = 0.35  # below this the frame counts as silence
    vad_start_frames: int = 2  # consecutive speech frames (32 ms each) before speech starts
    pre_buffer_s: float = 0.3  # audio kept before speech starts, so the first word is whole
    endpoint_silence_s: float = 0.8  # silence that ends an utterance (the endpoint)
    no_speech_timeout_s: float = 5.0  # no speech at all this long after the wake: give up
    silence_timeout_s: float = 5.0  # silence this long after speech: end the round (seed's 5 s)
    max_utterance_s: float = 15.0  # an utterance is cut here (a noise the VAD takes for speech)
    min_chars: int = 2  # transcripts shorter than this (stripped) are discarded as noise
    ungate_hold_s: float = 0.2  # audio still ignored after gate(False): the room's echo tail
    # full duplex (docs/listening.md): the microphone stays open while the robot speaks, its
    # own voice taken out by the echo canceller; a person who talks over it is heard (barge-in)
    duplex: bool = False
    echo: EchoCanceller = EchoCanceller.AUTO  # the echo canceller (anima.listening.echo.canceller)
    # duplex: a voice over the robot this long (s) stops it without waiting for its words
    # (backchannels — "uh-huh", "yeah", "okay" — are shorter, and are let pass)
    barge_in_s: float = 0.8
    # duplex: words heard over the robot less sure than this (0-1) do not stop it unless they
    # hold a stop word (Whisper writes words for a hum: "mm-hmm" read as "And that's it.", 0.26)
    barge_in_confidence: float = 0.3
    # the microphone array, for where a voice comes from: each microphone's [x, y, z] in metres
    # in the robot's frame (x forward, y left, z up), in the input's channel order; () (the
    # default): one microphone, no direction (docs/attention.md)
    mics: tuple[tuple[float, float, float], ...] = ()
    # where the array is: fixed (on the body or a stand) or head (it turns with the head, as
    # Reachy Mini's does: its directions are turned by the head's pose when each was heard);
    # on the head, listen.mics are the positions with the head at rest
    mics_mount: str = "fixed"

    def __post_init__(self) -> None:
        for registry, name in (
            (RECOGNIZERS, self.asr), (VADS, self.vad), (SPOTTERS, self.wake), (TURNS, self.turn)
        ):  # fmt: skip
            registry.check(name)
        object.__setattr__(self, "asr_mode", checked(AsrMode, self.asr_mode, "listen.asr_mode"))
        for key in ("min_confidence", "barge_in_confidence"):
            value = getattr(self, key)
            if not (isinstance(value, int | float) and math.isfinite(value) and 0 <= value <= 1):
                raise ConfigError(f"listen.{key} must be in [0, 1], got {_shown(value)}")
        beam = self.asr_beam
        if isinstance(beam, bool) or not (isinstance(beam, int) and 1 <= beam <= MAX_BEAM):
            raise ConfigError(
                f"listen.asr_beam must be an integer in [1, {MAX_BEAM}], got {_shown(beam)}"
            )
        if not self.wake_phrase.strip():
            raise ConfigError("listen.wake_phrase must not be empty")
        if not (math.isfinite(self.wake_threshold) and 0 < self.wake_threshold < 1):
            raise ConfigError(f"listen.wake_threshold must be in (0, 1), got {self.wake_threshold}")
        if not 0 < self.vad_end_threshold <= self.vad_start_threshold < 1:
            raise ConfigError("listen: need 0 < vad_end_threshold ≤ vad_start_threshold < 1")
        if len(self.wake_phrase) > MAX_PHRASE:
            raise ConfigError(f"listen.wake_phrase must be at most {MAX_PHRASE} characters")
        if not 1 <= self.vad_start_frames <= MAX_START_FRAMES:  # 100 frames: 3.2 s of speech
            raise ConfigError(
                f"listen.vad_start_frames must be in [1, {MAX_START_FRAMES}], "
                f"got {_shown(self.vad_start_frames)}"
            )
        if not isinstance(self.duplex, bool):
            raise ConfigError(
                f"listen.duplex must be true or false, got {_shown_text(self.duplex)}"
            )
        object.__setattr__(self, "echo", checked(EchoCanceller, self.echo, "listen.echo"))
        barge = self.barge_in_s
        if not (isinstance(barge, int | float) and math.isfinite(barge) and 0 < barge <= 5):
            raise ConfigError(f"listen.barge_in_s must be in (0, 5] seconds, got {_shown(barge)}")
        _one_frame_at_least("barge_in_s", barge)
        for key in ("pre_buffer_s", "ungate_hold_s"):
            value = getattr(self, key)
            if not (math.isfinite(value) and 0 <= value <= 5):
                raise ConfigError(f"listen.{key} must be in [0, 5] seconds, got {value!r}")
        for key in (
            "endpoint_silence_s", "no_speech_timeout_s", "silence_timeout_s", "max_utterance_s",
            "turn_quick_s", "turn_hold_s", "turn_confirm_quick_s", "turn_confirm_endpoint_s",
        ):  # fmt: skip
            value = getattr(self, key)
            if not (math.isfinite(value) and 0 < value <= LONGEST[key]):
                raise ConfigError(
                    f"listen.{key} must be in (0, {LONGEST[key]:g}] seconds, got {_shown(value)}"
                )
            _one_frame_at_least(key, value)
        early = self.turn_early_s
        if early is not None:
            if isinstance(early, bool) or not (
                isinstance(early, int | float) and math.isfinite(early)
                and 0 < early <= LONGEST["turn_early_s"]
            ):  # fmt: skip
                raise ConfigError(
                    f"listen.turn_early_s must be in (0, {LONGEST['turn_early_s']:g}] seconds "
                    f"or null, got {_shown(early)}"
                )
            _one_frame_at_least("turn_early_s", early)
        for key in ("turn_quick_s", "turn_confirm_quick_s")[: 2 if self.early_reply else 1]:
            if getattr(self, key) > self.turn_hold_s:
                raise ConfigError(
                    f"listen.{key} ({getattr(self, key):g} s) must be ≤ turn_hold_s "
                    f"({self.turn_hold_s:g} s)"
                )
        for key in ("turn_gate_db", "vad_gate_db"):
            _db_or_null(key, getattr(self, key))
        object.__setattr__(self, "turn_gate", checked(TurnGate, self.turn_gate, "listen.turn_gate"))
        if self.silence_timeout_s < self.endpoint_silence_s:
            raise ConfigError("listen.silence_timeout_s must be ≥ endpoint_silence_s")
        if self.early_reply and self.silence_timeout_s < self.turn_confirm_endpoint_s:
            raise ConfigError("listen.silence_timeout_s must be ≥ turn_confirm_endpoint_s")
        _check_mics(self.mics)
        check_mount(self.mics_mount, "listen.mics_mount")
        if not 0 <= self.min_chars <= MAX_MIN_CHARS:
            raise ConfigError(
                f"listen.min_chars must be in [0, {MAX_MIN_CHARS}], got {_shown(self.min_chars)}"
            )

    @property
    def early_reply(self) -> bool:
        """Replies begin at a pause before the end of the turn (full duplex, turn_early_s)."""
        return self.duplex and self.turn_early_s is not None

    def turn_silences(self) -> tuple[float, float]:
        """The turn's quick end and its endpoint: turn_quick_s and endpoint_silence_s, or with
        the early reply the confirming end's (turn_confirm_quick_s, turn_confirm_endpoint_s)."""
        if self.early_reply:
            return self.turn_confirm_quick_s, self.turn_confirm_endpoint_s
        return self.turn_quick_s, self.endpoint_silence_s


def _check_mics(mics: tuple[tuple[float, float, float], ...]) -> None:
    """``listen.mics``: none, or 2-:data:`MAX_MICS` distinct positions within ±1 m."""
    if not mics:
        return
    if not 2 <= len(mics) <= MAX_MICS:
        raise ConfigError(
            f"listen.mics: an array needs 2-{MAX_MICS} microphones, got {len(mics)}",
            key="listen.mics",
        )
    for n, mic in enumerate(mics):
        if len(mic) != 3 or not all(
            isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
            and abs(v) <= MIC_REACH_M
            for v in mic
        ):  # fmt: skip
            raise ConfigError(
                f"listen.mics[{n}] must be [x, y, z] in metres within ±{MIC_REACH_M:g} m, "
                f"got {_shown_text(list(mic))}",
                key="listen.mics",
            )
    for i, a in enumerate(mics):
        for j in range(i):
            if math.dist(a, mics[j]) < MIC_APART_M:
                raise ConfigError(
                    f"listen.mics[{j}] and [{i}] are at the same place ({list(a)}): each "
                    "microphone of an array is somewhere else",
                    key="listen.mics",
                )


def _db_or_null(key: str, value: float | None) -> None:
    """A level gate's margin: null (no gate) or a number of dB in (0, :data:`MAX_GATE_DB`]."""
    if value is not None and not (
        isinstance(value, int | float) and not isinstance(value, bool)
        and math.isfinite(value) and 0 < value <= MAX_GATE_DB
    ):  # fmt: skip
        raise ConfigError(
            f"listen.{key} must be in (0, {MAX_GATE_DB:g}] dB or null, got {_shown(value)}"
        )


def _one_frame_at_least(key: str, value: float) -> None:
    if value < SHORTEST_S:
        raise ConfigError(
            f"listen.{key} must be at least {SHORTEST_S:g} s (one audio frame: the listener "
            f"decides once a frame), got {_shown(value)}"
        )


def _shown_text(value: object) -> str:
    """A value for an error line, at most 40 characters of it."""
    return repr(value)[:40]


def _shown(value: float) -> str:
    """A value for an error line: an absurd integer is named by its size, not printed."""
    if isinstance(value, int) and abs(value) >= 10**30:
        return f"an integer of {value.bit_length()} bits"
    return f"{value!r}"
