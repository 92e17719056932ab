"""The ASR spotter's stretches, exact to the frame: a fake VAD (loud = speech) and a scripted
reader, so what is read, when, and where the phrase is said to end are checked precisely —
and that a long stretch of speech or noise costs one reading, not one per frame."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from anima.audio import FRAME_SAMPLES, SAMPLE_RATE
from anima.errors import ConfigError
from anima.listening.wake.asr_spotter import PRE_S, AsrSpotter, opening_is_phrase
from anima.listening.whisper.reader import PhraseScore
from anima.testing.listening import FakeVad

pytestmark = pytest.mark.fast

LOUD = np.full(FRAME_SAMPLES, 5000, dtype=np.int16)
QUIET = np.zeros(FRAME_SAMPLES, dtype=np.int16)


@pytest.fixture(autouse=True)
def _listen_extra() -> None:
    """Overrides the folder's: these tests need no model."""


class ScriptedReader:
    """Says the phrase is there with ``probability``, ending ``end_s`` into the stretch."""

    name = "scripted"

    def __init__(self, probability: float = 0.9, end_s: float = 0.4, heard: str = "") -> None:
        self.probability, self.end_s, self.heard = probability, end_s, heard
        self.read: list[Any] = []
        self.opened: list[Any] = []

    def load(self) -> None: ...

    def close(self) -> None: ...

    def score(self, audio: Any) -> PhraseScore:
        self.read.append(audio)
        return PhraseScore(self.probability, self.end_s, (self.probability,))

    def opening(self, audio: Any) -> str:
        self.opened.append(audio)
        return self.heard


def run(spotter: AsrSpotter, frames: list[Any], start: int = 0) -> list[Any]:
    hits = []
    for i, frame in enumerate(frames):
        hit = spotter.feed(frame, start + i * FRAME_SAMPLES)
        if hit is not None:
            hits.append((i, hit))
    return hits


def test_a_stretch_is_read_once_when_it_ends() -> None:
    reader = ScriptedReader(end_s=0.4)
    spotter = AsrSpotter(reader=reader, vad=FakeVad())
    gap = 10  # frames of silence that end a stretch: ceil(0.3 s / 32 ms)
    hits = run(spotter, [QUIET] * 20 + [LOUD] * 25 + [QUIET] * (gap + 5))
    ((index, hit),) = hits
    assert index == 20 + 25 + gap - 1  # reported by the frame that ends the stretch
    (audio,) = reader.read
    kept_before = len(audio) - (25 + gap) * FRAME_SAMPLES  # the audio before the onset
    assert 0 < kept_before <= PRE_S * SAMPLE_RATE + FRAME_SAMPLES
    start = 20 * FRAME_SAMPLES - kept_before  # where the stretch begins in the stream
    # the end: the alignment's 0.4 s (flat loud "speech" has no quieter place near it)
    assert hit.end_sample == start + round(0.4 * SAMPLE_RATE)
    assert hit.detected_sample == (index + 1) * FRAME_SAMPLES
    assert hit.confidence == 0.9


def test_the_phrase_ends_at_the_pause_after_the_aligned_end() -> None:
    """The alignment puts the end up to ~0.2 s early: the quietest 20 ms within 0.25 s after
    it is taken, so the phrase's last sound does not begin the command."""
    pause = 35 * FRAME_SAMPLES  # "hey robot" · "wave": one quiet frame between
    start = 20 * FRAME_SAMPLES - 6 * FRAME_SAMPLES  # PRE_S keeps 6 whole frames before onset
    reader = ScriptedReader(end_s=(pause - start) / SAMPLE_RATE - 0.15)  # 0.15 s early
    spotter = AsrSpotter(reader=reader, vad=FakeVad())
    speech = [LOUD] * 15 + [QUIET] + [LOUD] * 10 + [QUIET] * 12
    ((_, hit),) = run(spotter, [QUIET] * 20 + speech)
    assert len(reader.read[0]) == (6 + len(speech) - 2) * FRAME_SAMPLES  # the stretch's start
    assert pause <= hit.end_sample <= pause + FRAME_SAMPLES


def test_a_long_stretch_costs_one_reading_of_its_first_two_seconds() -> None:
    reader = ScriptedReader(probability=0.1)  # not the phrase
    spotter = AsrSpotter(reader=reader, vad=FakeVad(), window_s=2.0)
    assert run(spotter, [LOUD] * 600) == []  # ~19 s of speech (or noise the VAD takes for it)
    (audio,) = reader.read
    assert len(audio) <= 2 * SAMPLE_RATE + FRAME_SAMPLES


def test_each_stretch_is_read_and_a_gap_in_the_stream_starts_afresh() -> None:
    reader = ScriptedReader(probability=0.2)
    spotter = AsrSpotter(reader=reader, vad=FakeVad())
    one = [LOUD] * 10 + [QUIET] * 12
    run(spotter, one + one)
    assert len(reader.read) == 2
    run(spotter, [LOUD] * 10, start=10**6)  # audio was not fed between (a gate)
    run(spotter, [QUIET] * 12, start=10**6 + 10 * FRAME_SAMPLES)
    assert len(reader.read) == 3
    assert len(reader.read[2]) == 10 * FRAME_SAMPLES + 10 * FRAME_SAMPLES  # nothing from before


def test_below_the_probability_nothing_wakes() -> None:
    spotter = AsrSpotter(reader=ScriptedReader(probability=0.49), vad=FakeVad())
    assert run(spotter, [LOUD] * 20 + [QUIET] * 12) == []


@pytest.mark.parametrize(
    ("probability", "heard", "wakes", "looked"),
    [
        (0.3, "A robot.", True, True),  # Piper's "hey robot", heard freely
        (0.3, "Hey Robert, how are you?", False, True),  # a near miss stays one
        (0.3, "A robotic arm.", False, True),
        (0.05, "A robot.", False, False),  # below the grey zone: no second look at all
        (0.6, "", True, False),  # above it: the score alone wakes
    ],
)
def test_the_grey_zone_gets_a_second_look(
    probability: float, heard: str, wakes: bool, looked: bool
) -> None:
    reader = ScriptedReader(probability=probability, heard=heard)
    spotter = AsrSpotter(reader=reader, vad=FakeVad())
    hits = run(spotter, [QUIET] * 5 + [LOUD] * 20 + [QUIET] * 12)
    assert bool(hits) is wakes
    assert bool(reader.opened) is looked
    if looked:  # the very audio that was scored (so its encoding is reused)
        assert reader.opened[0] is reader.read[0]


@pytest.mark.parametrize(
    ("heard", "phrase", "expected"),
    [
        ("A robot.", "hey robot", True),
        ("K robot", "hey robot", True),
        ("Hey, robot!", "hey robot", True),
        ("Hey Robert.", "hey robot", False),
        ("Hero bot", "hey robot", False),
        ("robot", "hey robot", False),  # too few words
        ("Hello robot", "hey robot", False),  # a long word in place of "hey"
        ("Anima.", "anima", True),
        ("Animal.", "anima", False),
        ("A nima", "anima", False),  # a one-word phrase must be heard as itself
        ("", "hey robot", False),
        ("A robot is standing in the hall.", "hey robot", False),  # the phrase must stand alone
        ("The robot waved at me.", "hey robot", False),
        ("A robot, wave.", "hey robot", True),  # a command in the same breath
        ("A robot", "hey robot", True),
    ],
)
def test_which_free_readings_open_with_the_phrase(heard: str, phrase: str, expected: bool) -> None:
    assert opening_is_phrase(heard, phrase) is expected


def babble(n: int, seed: int = 0) -> list[Any]:
    """``n`` frames of a noise the VAD calls speech (its peaks over the fake VAD's 1000), with
    a level that wanders ±2 dB, as a room full of talk does."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        gain = 10 ** (rng.uniform(-2, 2) / 20)
        out.append((rng.standard_normal(FRAME_SAMPLES) * 600 * gain).astype(np.int16))
    return out


def test_a_voice_rising_over_babble_is_read_though_the_vad_never_hears_silence() -> None:
    """Issue 13: in the conversation bench's babble room the VAD called everything speech, the
    stretch never ended, and the wake phrase said into it was never read (0 of 16). Now a voice
    9 dB over the room's level starts a stretch of its own, read when the level is back."""
    reader = ScriptedReader(probability=0.1, end_s=0.4)  # the babble is not the phrase
    spotter = AsrSpotter(reader=reader, vad=FakeVad())
    assert run(spotter, babble(100)) == []
    # the babble's own stretch was read once (at the 2 s window)
    assert len(reader.read) == 1
    assert len(reader.read[0]) <= 2 * SAMPLE_RATE + FRAME_SAMPLES
    reader.probability = 0.9  # the voice says the phrase
    voice = [LOUD] * 25  # ~18 dB over the babble, 0.8 s
    hits = run(spotter, voice + babble(30, seed=1), start=100 * FRAME_SAMPLES)
    assert len(reader.read) == 2
    ((index, hit),) = [(100 + i, h) for i, h in hits]
    gap = 10  # frames back at the room's level that end it: ceil(0.3 s / 32 ms)
    assert 100 + 25 + gap - 1 <= index <= 100 + 25 + gap + 1
    audio = reader.read[1]
    kept_before = len(audio) - (25 + gap) * FRAME_SAMPLES
    # it begins just before the voice: the onset is seen 3 frames in, PRE_S is kept before it
    assert 0 < kept_before <= PRE_S * SAMPLE_RATE + 4 * FRAME_SAMPLES
    assert hit.end_sample < (100 + 25) * FRAME_SAMPLES  # the phrase ends inside the voice


def test_babble_alone_costs_one_reading_per_stretch_not_one_per_wobble() -> None:
    reader = ScriptedReader(probability=0.1)
    spotter = AsrSpotter(reader=reader, vad=FakeVad())
    run(spotter, babble(600))  # ~19 s of a room full of talk and no voice over it
    assert len(reader.read) == 1


def test_a_long_stretch_of_one_voice_is_still_read_once() -> None:
    """A person talking on (no pause the VAD hears): their loud words rise far above their
    quiet ones, but that is no steady room under a new voice, so "hey robot" said in the middle
    of it still does not wake the robot."""
    reader = ScriptedReader(probability=0.1)
    spotter = AsrSpotter(reader=reader, vad=FakeVad())
    rng = np.random.default_rng(3)
    soft = np.full(FRAME_SAMPLES, 800, dtype=np.int16)  # 16 dB under LOUD: the dips
    talk: list[Any] = []  # syllables and the dips between them, 12 s
    while len(talk) < 375:
        talk += [LOUD] * int(rng.integers(3, 7)) + [soft] * int(rng.integers(1, 4))
    run(spotter, talk + [QUIET] * 12)
    assert len(reader.read) == 1


def test_a_phrase_without_words_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"listen\.wake_phrase"):
        AsrSpotter("?!  ...")


def test_the_model_fit_separates_what_it_is_given() -> None:
    """bench/wake/fit.py's logistic regression (how WEIGHTS were made): on 8 features where the
    positives' last-word logs are high, it puts them above 0.5 and the rest below."""
    from anima.bench.wake.fit import fit

    rng = np.random.default_rng(0)
    positives = rng.normal(-0.5, 0.3, (40, 8))
    negatives = rng.normal(-6.0, 1.0, (60, 8))
    x = np.r_[positives, negatives]
    y = np.r_[np.ones(40), np.zeros(60)]
    weights, bias = fit(x, y)
    p = 1 / (1 + np.exp(-(x @ weights + bias)))
    assert (p[:40] > 0.5).all()
    assert (p[40:] < 0.5).all()
