"""The early pause of full duplex (``listen.turn_early_s``): the speech detector's PAUSED and
RESUMED, the recorder's Early and Resumed, on audio time, exact to the frame."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from anima.audio import FRAME_S, FRAME_SAMPLES
from anima.config.listening import ListenConfig
from anima.errors import ConfigError
from anima.listening.listener import speech_detector
from anima.listening.outcomes import Early, Final, Resumed
from anima.listening.recorder import Recorder
from anima.listening.speech_detector import SpeechChange, SpeechDetector
from anima.listening.turn.cues import CuesTurn
from anima.testing.listening import FakeRecognizer, FakeVad

pytestmark = pytest.mark.fast

RNG = np.random.default_rng(7)
VOICE = [(RNG.standard_normal(FRAME_SAMPLES) * 3000).astype(np.int16) for _ in range(30)]
QUIET = np.zeros(FRAME_SAMPLES, dtype=np.int16)


@pytest.fixture(autouse=True)
def _listen_extra() -> None:
    """Overrides the folder's: these tests need no model."""


def changes(detector: SpeechDetector, frames: list[Any]) -> list[tuple[int, SpeechChange]]:
    out = []
    for i, frame in enumerate(frames):
        change = detector.feed(frame)
        if change is not None:
            out.append((i, change))
    return out


def cues_detector(early_s: float | None = 0.25) -> SpeechDetector:
    # noise has no pitch: the cues wait endpoint_silence_s (0.8 s), not the quick 0.25 s
    return SpeechDetector(FakeVad(), turn=CuesTurn(), early_s=early_s)


def test_a_pause_the_cues_are_unsure_of_is_reported_early_then_the_turn_ends() -> None:
    detector = cues_detector()
    assert [c for _, c in changes(detector, VOICE[:20])] == [SpeechChange.STARTED]
    detector.partial("say hello")
    got = changes(detector, [QUIET] * 40)
    assert [c for _, c in got] == [SpeechChange.PAUSED, SpeechChange.ENDED]
    paused, ended = got[0][0] + 1, got[1][0] + 1  # frames of silence
    assert paused * FRAME_S == pytest.approx(0.25, abs=FRAME_S)
    assert ended * FRAME_S == pytest.approx(0.8, abs=FRAME_S)


def test_the_voice_coming_back_after_the_early_pause_is_reported_and_the_turn_goes_on() -> None:
    detector = cues_detector()
    detector.partial("say hello")
    frames = VOICE[:20] + [QUIET] * 12 + VOICE[:10] + [QUIET] * 40
    kinds = [c for _, c in changes(detector, frames)]
    assert kinds == [
        SpeechChange.STARTED, SpeechChange.PAUSED, SpeechChange.RESUMED,
        SpeechChange.PAUSED, SpeechChange.ENDED,
    ]  # fmt: skip


def test_words_that_promise_more_give_no_early_pause() -> None:
    detector = cues_detector()
    changes(detector, VOICE[:20])
    detector.partial("look to your left and")
    got = changes(detector, [QUIET] * 50)
    assert [c for _, c in got] == [SpeechChange.ENDED]
    assert (got[0][0] + 1) * FRAME_S == pytest.approx(1.2, abs=FRAME_S)  # the hold


def test_a_question_that_strands_its_last_word_pauses_early_but_ends_after_the_hold() -> None:
    # "what's the weather like" is open by its last word (the turn's own end holds for more),
    # but a question often ends so: the early reply may begin, taken back if the person goes on
    detector = cues_detector()
    changes(detector, VOICE[:20])
    detector.partial("What's the weather like?")
    got = changes(detector, [QUIET] * 50)
    assert [c for _, c in got] == [SpeechChange.PAUSED, SpeechChange.ENDED]
    assert (got[0][0] + 1) * FRAME_S == pytest.approx(0.25, abs=FRAME_S)
    assert (got[1][0] + 1) * FRAME_S == pytest.approx(1.2, abs=FRAME_S)  # the hold, unchanged


ROOM = [(RNG.standard_normal(FRAME_SAMPLES) * 600).astype(np.int16) for _ in range(30)]


@pytest.mark.parametrize(
    ("words", "early"),
    [("say hello", True), ("What's the weather like?", True), ("look to your left and", False)],
)
def test_in_babble_a_pause_only_the_level_gate_hears_is_early_after_fresh_words(
    words: str, early: bool
) -> None:
    # the room (14 dB under the voice) is speech to the VAD: only the level gate hears the
    # pause; it is early once a partial that comes during it could end the request
    detector = cues_detector()
    changes(detector, VOICE[:20])
    assert changes(detector, ROOM[:12]) == []  # no words fresh enough yet
    detector.partial(words)
    got = changes(detector, ROOM[12:14])
    assert [c for _, c in got] == ([SpeechChange.PAUSED] if early else [])


def test_without_early_s_nothing_changes() -> None:
    detector = cues_detector(None)
    detector.partial("say hello")
    kinds = [c for _, c in changes(detector, VOICE[:20] + [QUIET] * 40)]
    assert kinds == [SpeechChange.STARTED, SpeechChange.ENDED]


def test_the_early_pause_is_a_full_duplex_setting() -> None:
    vad = FakeVad()
    assert speech_detector(ListenConfig(duplex=True), vad).early_s == 0.25
    assert speech_detector(ListenConfig(), vad).early_s is None  # half duplex: no early reply
    off = ListenConfig(duplex=True, turn_early_s=None)
    assert speech_detector(off, vad).early_s is None


@pytest.mark.parametrize("bad", [0, -0.25, 0.01, 11.0, float("nan"), True, "soon"])
def test_a_bad_early_pause_is_refused_by_name(bad: Any) -> None:
    with pytest.raises(ConfigError, match=r"listen\.turn_early_s"):
        ListenConfig(turn_early_s=bad)


def test_with_the_early_reply_the_turns_own_end_waits_the_confirming_silences() -> None:
    # the reply has begun at the early pause: the final that confirms it waits out a pause
    # inside the sentence (0.5 s after a fall, 1.0 s after a fall from the top)
    vad = FakeVad()
    duplex = speech_detector(ListenConfig(duplex=True, turn="cues"), vad).turn
    half = speech_detector(ListenConfig(turn="cues"), vad).turn
    off = speech_detector(ListenConfig(duplex=True, turn="cues", turn_early_s=None), vad).turn
    assert isinstance(duplex, CuesTurn)
    assert isinstance(half, CuesTurn)
    assert isinstance(off, CuesTurn)
    assert (duplex.quick_s, duplex.middle_s) == (0.5, 1.0)
    assert (half.quick_s, half.middle_s) == (0.25, 0.8)  # half duplex: as before
    assert (off.quick_s, off.middle_s) == (0.25, 0.8)  # no early reply: nothing to confirm
    custom = ListenConfig(duplex=True, turn_confirm_quick_s=0.3, turn_confirm_endpoint_s=0.9)
    assert custom.turn_silences() == (0.3, 0.9)


@pytest.mark.parametrize(
    ("key", "bad"),
    [
        ("turn_confirm_quick_s", 0), ("turn_confirm_quick_s", 11.0),
        ("turn_confirm_quick_s", float("nan")), ("turn_confirm_endpoint_s", -1),
        ("turn_confirm_endpoint_s", 11.0), ("turn_confirm_endpoint_s", 0.01),
    ],
)  # fmt: skip
def test_a_bad_confirming_silence_is_refused_by_name(key: str, bad: Any) -> None:
    with pytest.raises(ConfigError, match=rf"listen\.{key}"):
        ListenConfig(**{key: bad})


def test_the_confirming_quick_end_is_held_to_the_hold_only_with_the_early_reply() -> None:
    with pytest.raises(ConfigError, match=r"turn_confirm_quick_s \(0.5 s\) must be ≤ turn_hold"):
        ListenConfig(duplex=True, turn_hold_s=0.4, turn_quick_s=0.25)
    ListenConfig(turn_hold_s=0.4, turn_quick_s=0.25)  # half duplex: it is not used


def test_the_round_waits_at_least_the_confirming_endpoint() -> None:
    with pytest.raises(ConfigError, match=r"silence_timeout_s must be ≥ turn_confirm_endpoint_s"):
        ListenConfig(duplex=True, silence_timeout_s=0.9)
    ListenConfig(silence_timeout_s=0.9)  # half duplex: the endpoint is 0.8 s


def recorder(duplex: bool = True) -> tuple[Recorder, FakeRecognizer]:
    config = ListenConfig(duplex=duplex)
    recognizer = FakeRecognizer(["say hello"], confidence=0.8, frames_per_word=3)
    detector = SpeechDetector(FakeVad(), turn=CuesTurn(), early_s=0.25 if duplex else None)
    rec = Recorder(config, recognizer, detector)
    rec.wake()
    return rec, recognizer


def outcomes(rec: Recorder, frames: list[Any]) -> list[Any]:
    out: list[Any] = []
    for frame in frames:
        out += rec.feed(frame)
    return [o for o in out if isinstance(o, Early | Resumed | Final)]


def test_the_recorder_sends_the_utterance_so_far_at_the_pause_then_its_final() -> None:
    rec, recognizer = recorder()
    got = outcomes(rec, VOICE[:20] + [QUIET] * 40)
    assert got == [
        Early(text="say hello", confidence=0.8, alternatives=(), voiced_s=20 * FRAME_S),
        Final(text="say hello", confidence=0.8, alternatives=(), voiced_s=20 * FRAME_S),
    ]
    assert recognizer.tentatives == ["say hello"]  # read once, at the pause


def test_the_recorder_says_when_the_person_goes_on_and_reads_the_next_pause_again() -> None:
    rec, recognizer = recorder()
    got = outcomes(rec, VOICE[:20] + [QUIET] * 12 + VOICE[:10] + [QUIET] * 40)
    assert [type(o) for o in got] == [Early, Resumed, Early, Final]
    assert len(recognizer.tentatives) == 2


def test_a_recognizer_that_cannot_read_ahead_gives_no_early_reading() -> None:
    rec, recognizer = recorder()

    class Plain:  # the Recognizer protocol alone (pocketsphinx): no tentative()
        name, confidence, alternatives = "plain", None, ()

        def load(self) -> None: ...
        def start(self) -> None: ...
        def feed(self, frame: Any) -> str | None:
            return None

        def finish(self) -> str:
            return "wave"

        def cancel(self) -> None: ...
        def close(self) -> None: ...

    rec.recognizer = Plain()
    got = outcomes(rec, VOICE[:20] + [QUIET] * 40)
    assert [type(o) for o in got] == [Final]
    assert recognizer.tentatives == []


def test_no_early_reading_is_made_while_the_robot_speaks() -> None:
    """A voice over the robot is a barge-in's to judge: reading ahead there would only hold
    the listener up (the barge-in's rules read the round's frames as they come)."""
    rec, recognizer = recorder()
    rec.speaking(True)
    got = outcomes(rec, VOICE[:20] + [QUIET] * 40)
    assert [type(o) for o in got] == [Final]
    assert recognizer.tentatives == []
