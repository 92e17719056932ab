"""End of turn without speech: the protocol's calls, `silence` = the old endpoint, the cues' rules
on synthetic voices (harmonic tones whose pitch falls or holds), text cues, config validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anima.audio import FRAME_S, FRAME_SAMPLES, SAMPLE_RATE, Frame
from anima.config.listening import ListenConfig
from anima.errors import ConfigError
from anima.listening.speech_detector import SpeechChange, SpeechDetector
from anima.listening.turn.cues import CuesTurn, Fall
from anima.listening.turn.detector import SilenceTurn, TurnDetector, make_turn, turn_for
from anima.listening.turn.prosody import ProsodyTracker, pitch
from anima.listening.turn.text import TextCue, stranded, text_cue

pytestmark = pytest.mark.fast


class Scripted:
    """A Vad that returns the given probabilities in order (then silence)."""

    name = "scripted"

    def __init__(self, probabilities: list[float]) -> None:
        self.probabilities = list(probabilities)

    def load(self) -> None:
        pass

    def reset(self) -> None:
        pass

    def probability(self, frame: Frame) -> float:
        return self.probabilities.pop(0) if self.probabilities else 0.0


class Recording:
    """A TurnDetector that writes down every call and ends after ``end_s`` of silence."""

    name = "recording"

    def __init__(self, end_s: float) -> None:
        self.end_s = end_s
        self.calls: list[tuple[str, object]] = []

    def load(self) -> None:
        self.calls.append(("load", None))

    def reset(self) -> None:
        self.calls.append(("reset", None))

    def frame(self, frame: Frame, speech_prob: float) -> None:
        self.calls.append(("frame", speech_prob))

    def partial(self, text: str) -> None:
        self.calls.append(("partial", text))

    def ended(self, silence_s: float) -> bool:
        self.calls.append(("ended", round(silence_s, 3)))
        return silence_s >= self.end_s


def changes(detector: SpeechDetector, n: int) -> list[tuple[int, SpeechChange, int]]:
    out = []
    for i in range(n):
        change = detector.feed(np.zeros(FRAME_SAMPLES, np.int16))
        if change is not None:  # end_frames dates an end: only then is it meaningful
            out.append((i, change, detector.end_frames if change is SpeechChange.ENDED else 0))
    return out


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 0.2, 0.4, 0.6, 0.9]), min_size=1, max_size=120),
    st.floats(min_value=0.01, max_value=1.5),
)
def test_silence_turn_ends_speech_on_the_frame_end_s_did(
    probabilities: list[float], end_s: float
) -> None:
    """`listen.turn: silence` is the old behaviour exactly: same changes on the same frames,
    and the same end_frames the recorder dates the end of speech with."""
    old = SpeechDetector(Scripted(probabilities), end_s=end_s)
    new = SpeechDetector(Scripted(probabilities), end_s=99.0, turn=SilenceTurn(end_s))
    assert changes(new, len(probabilities) + 60) == changes(old, len(probabilities) + 60)


def test_the_detector_feeds_and_asks_its_turn_detector() -> None:
    turn = Recording(end_s=3 * FRAME_S)
    p = [0.1, 0.9, 0.9, 0.1, 0.9, 0.1, 0.1, 0.1, 0.1]
    detector = SpeechDetector(Scripted(p), start_frames=2, end_s=10.0, turn=turn)
    assert isinstance(turn, TurnDetector)
    detector.partial("ignored? no: forwarded")
    got = changes(detector, len(p))
    # speech starts on frame 2, a one-frame pause does not end it, three frames of silence do
    assert got == [(2, SpeechChange.STARTED, 0), (7, SpeechChange.ENDED, 3)]
    calls = turn.calls
    assert calls[0] == ("partial", "ignored? no: forwarded")
    assert calls[1] == ("reset", None)  # at the start: the utterance begins there
    assert calls[2:] == [
        ("frame", 0.9),  # the frame that started speech
        ("frame", 0.1), ("ended", round(FRAME_S, 3)),
        ("frame", 0.9),  # speech again: not asked
        ("frame", 0.1), ("ended", round(FRAME_S, 3)),
        ("frame", 0.1), ("ended", round(2 * FRAME_S, 3)),
        ("frame", 0.1), ("ended", round(3 * FRAME_S, 3)),
    ]  # fmt: skip
    detector.partial("after")
    assert turn.calls[-1] == ("partial", "after")
    detector.reset()
    assert turn.calls[-1] == ("reset", None)


def test_partial_without_a_turn_detector_does_nothing() -> None:
    detector = SpeechDetector(Scripted([0.9] * 3))
    detector.partial("wave")  # no turn detector: nothing to tell, nothing raised
    assert changes(detector, 40)[0][1] is SpeechChange.STARTED


@pytest.mark.parametrize(
    ("text", "cue"),
    [
        (None, TextCue.NONE),
        ("", TextCue.NONE),
        ("  ", TextCue.NONE),
        ("wave", TextCue.COMPLETE),
        ("what can you do", TextCue.COMPLETE),
        ("could you wave at me", TextCue.COMPLETE),
        ("walk forward for two seconds", TextCue.COMPLETE),
        ("walk forward and", TextCue.OPEN),
        ("look to your left and then", TextCue.OPEN),
        ("say hello to the", TextCue.OPEN),
        ("could you", TextCue.OPEN),
        ("give me", TextCue.OPEN),
        ("Um", TextCue.OPEN),
        ("please", TextCue.OPEN),
        ("nod please", TextCue.COMPLETE),
        ("turn your", TextCue.OPEN),
    ],
)
def test_text_cue(text: str | None, cue: TextCue) -> None:
    assert text_cue(text) is cue


@pytest.mark.parametrize(
    ("text", "may_end"),
    [
        ("What's the weather like?", True),
        ("where are you from", True),
        ("What is that for", True),
        ("Hello. Who are you talking to?", True),  # the last sentence is the question
        ("what do you think about", True),
        ("walk forward and", False),  # not a stranded word
        ("look to the", False),
        ("I would like", False),  # no question
        ("turn to", False),
        ("what for", False),  # too short to be a whole question
        ("What? Turn to", False),  # the question was another sentence
        ("say hello", False),  # complete, not stranded: text_cue's to judge
        (None, False),
    ],
)
def test_a_question_may_end_on_a_word_it_strands(text: str | None, may_end: bool) -> None:
    assert stranded(text) is may_end


def voice(f0: list[float], seconds_each: float, *, level: float = 8000.0) -> Frame:
    """A buzzy vowel: harmonics of a pitch that goes through ``f0`` (Hz), one value per
    ``seconds_each``, glided between."""
    n = round(seconds_each * SAMPLE_RATE) * len(f0)
    track = np.interp(np.arange(n), np.linspace(0, n - 1, len(f0)), f0)
    phase = 2 * np.pi * np.cumsum(track) / SAMPLE_RATE
    wave = sum(np.sin(k * phase) / k for k in range(1, 8))
    return (wave / np.max(np.abs(wave)) * level).astype(np.int16)


@pytest.mark.parametrize("f0", [80.0, 110.0, 150.0, 220.0, 330.0])
def test_pitch_of_a_steady_voice(f0: float) -> None:
    found, dip = pitch(voice([f0, f0], 0.1)[:FRAME_SAMPLES])
    assert found is not None
    assert abs(found - f0) / f0 < 0.02, (found, f0)
    assert dip < 0.3


def test_no_pitch_in_noise_or_silence() -> None:
    noise = (np.random.default_rng(3).standard_normal(FRAME_SAMPLES) * 3000).astype(np.int16)
    assert pitch(noise)[0] is None
    assert pitch(np.zeros(FRAME_SAMPLES, np.int16))[0] is None
    with pytest.raises(ValueError, match="samples"):
        pitch(np.zeros(300, np.int16))


def tracked(audio: Frame) -> ProsodyTracker:
    tracker = ProsodyTracker()
    for i in range(len(audio) // FRAME_SAMPLES):
        tracker.feed(audio[i * FRAME_SAMPLES : (i + 1) * FRAME_SAMPLES])
    return tracker


def test_a_final_fall_reads_below_the_register_and_a_held_pitch_does_not() -> None:
    falls = tracked(voice([120, 125, 118, 120, 110, 85], 0.15)).ending()
    holds = tracked(voice([120, 125, 118, 120, 118, 121], 0.15)).ending()
    assert falls is not None
    assert holds is not None
    assert falls.end_st < -3.0  # 85 Hz is −5 st from a ~118 Hz median
    assert abs(holds.end_st) < 1.0
    # the pause after the speech is unvoiced: it changes nothing
    silent = np.zeros(FRAME_SAMPLES * 10, np.int16)
    after = tracked(np.concatenate([voice([120, 125, 118, 120, 110, 85], 0.15), silent]))
    ending = after.ending()
    assert ending is not None
    assert ending.end_st == pytest.approx(falls.end_st)
    assert after.since_voiced_s == pytest.approx(10 * FRAME_S, abs=2 * FRAME_S)
    assert tracked(silent).ending() is None  # nothing voiced: nothing to say


def run_cues(turn: CuesTurn, audio: Frame, partials: dict[int, str] | None = None) -> int | None:
    """The sample where a speech detector on an energy-like script ends the turn (None: never)."""
    n = len(audio) // FRAME_SAMPLES
    loud = [
        float(np.abs(audio[i * FRAME_SAMPLES : (i + 1) * FRAME_SAMPLES]).max() > 500)
        for i in range(n)
    ]
    detector = SpeechDetector(Scripted([0.9 * x for x in loud]), start_frames=1, turn=turn)
    for i in range(n):
        if partials and i in partials:
            detector.partial(partials[i])
        if detector.feed(audio[i * FRAME_SAMPLES : (i + 1) * FRAME_SAMPLES]) is SpeechChange.ENDED:
            return (i + 1) * FRAME_SAMPLES
    return None


def speech_then_silence(f0: list[float], silence_s: float = 2.0) -> tuple[Frame, int]:
    speech = voice(f0, 0.15)
    return np.concatenate([speech, np.zeros(round(silence_s * SAMPLE_RATE), np.int16)]), len(speech)


def test_cues_end_quickly_after_a_fall_and_hold_otherwise() -> None:
    turn = CuesTurn(quick_s=0.25, middle_s=0.8, hold_s=1.2)
    audio, end = speech_then_silence([120, 125, 118, 120, 110, 85])
    ended = run_cues(turn, audio)
    assert ended is not None
    assert 0.25 <= (ended - end) / SAMPLE_RATE <= 0.25 + 2 * FRAME_S
    assert "falls to the bottom" in turn.reason
    assert "0.25 s" in turn.reason

    audio, end = speech_then_silence([120, 125, 118, 120, 118, 121])  # the pitch holds
    ended = run_cues(CuesTurn(quick_s=0.25, middle_s=0.8, hold_s=1.2), audio)
    assert ended is not None
    assert 1.2 <= (ended - end) / SAMPLE_RATE <= 1.2 + 2 * FRAME_S


def test_one_accent_falling_from_its_top_ends_at_the_endpoint() -> None:
    """A one-word request is all one fall: its median sits inside it, so its end is not far
    below the median, but far below its top — the old endpoint, not the hold."""
    audio, end = speech_then_silence([130, 125, 118, 110, 102, 95])
    turn = CuesTurn(quick_s=0.25, middle_s=0.8, hold_s=1.2)
    ended = run_cues(turn, audio)
    assert ended is not None
    assert 0.8 <= (ended - end) / SAMPLE_RATE <= 0.8 + 2 * FRAME_S
    assert turn.decide().fall is Fall.TOP
    assert "falls from the top" in turn.reason


def test_words_that_promise_more_hold_even_a_falling_voice() -> None:
    audio, end = speech_then_silence([120, 125, 118, 120, 110, 85])
    frame_at_end = end // FRAME_SAMPLES
    turn = CuesTurn(quick_s=0.25, middle_s=0.8, hold_s=1.2)
    ended = run_cues(turn, audio, {frame_at_end + 2: "walk forward and"})
    assert ended is not None
    assert (ended - end) / SAMPLE_RATE >= 1.2
    assert "words open" in turn.reason
    # complete words let the fall end it
    ended = run_cues(CuesTurn(), audio, {frame_at_end + 2: "walk forward"})
    assert ended is not None
    assert (ended - end) / SAMPLE_RATE < 0.4


def test_too_little_voice_to_judge_waits_the_endpoint() -> None:
    hiss = (np.random.default_rng(5).standard_normal(SAMPLE_RATE) * 4000).astype(np.int16)
    audio = np.concatenate([hiss, np.zeros(2 * SAMPLE_RATE, np.int16)])
    turn = CuesTurn(quick_s=0.25, middle_s=0.8, hold_s=1.2)
    ended = run_cues(turn, audio)
    assert ended is not None
    assert 0.8 <= (ended - len(hiss)) / SAMPLE_RATE <= 0.8 + 2 * FRAME_S
    assert "no pitch" in turn.reason


def test_a_new_utterance_forgets_the_last_one() -> None:
    turn = CuesTurn()
    turn.partial("walk forward and")
    for frame in np.split(voice([120, 110, 85], 0.15)[: 14 * FRAME_SAMPLES], 14):
        turn.frame(frame, 0.9)
    turn.reset()
    assert turn.decide().words is TextCue.NONE
    assert turn.decide().fall is Fall.UNKNOWN


def test_config_names_and_silences() -> None:
    assert isinstance(turn_for(ListenConfig(turn="silence")), SilenceTurn)
    cues = turn_for(ListenConfig(turn="auto", turn_quick_s=0.3, turn_hold_s=1.5))
    assert isinstance(cues, CuesTurn)
    assert (cues.quick_s, cues.middle_s, cues.hold_s) == (0.3, 0.8, 1.5)
    assert isinstance(make_turn("cues", endpoint_s=0.6), CuesTurn)
    silence = make_turn("silence", endpoint_s=0.6)  # 18.75 frames: it ends on the 19th
    assert silence.ended(19 * FRAME_S)
    assert not silence.ended(18 * FRAME_S)
    # listen.turn_gate reaches the detector (and SpeechDetector reads it from there)
    assert cues.gate_cues  # the default: cues
    held = turn_for(ListenConfig(turn_gate="hold"))
    assert isinstance(held, CuesTurn)
    assert not held.gate_cues
    assert not SpeechDetector(Scripted([]), turn=held).gate_cues
    assert SpeechDetector(Scripted([]), turn=cues).gate_cues
    # listen.turn_gate_db reaches it too (null: no level gate)
    assert cues.level_gate_db == 12.0
    assert (
        SpeechDetector(Scripted([]), turn=turn_for(ListenConfig(turn_gate_db=6))).level_gate_db == 6
    )
    ungated = turn_for(ListenConfig(turn_gate_db=None))
    assert isinstance(ungated, CuesTurn)
    assert ungated.level_gate_db is None
    assert SpeechDetector(Scripted([]), turn=ungated).level_gate_db is None


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"turn": "smart"}, "listen.turn must be one of auto, silence, cues, got 'smart'"),
        ({"turn_quick_s": 0.0}, "listen.turn_quick_s must be in (0, 10] seconds, got 0.0"),
        ({"turn_hold_s": math.nan}, "listen.turn_hold_s must be in (0, 10] seconds, got nan"),
        ({"turn_hold_s": 11.0}, "listen.turn_hold_s must be in (0, 10] seconds, got 11.0"),
        ({"turn_quick_s": 1.5}, "listen.turn_quick_s (1.5 s) must be ≤ turn_hold_s (1.2 s)"),
        ({"turn_gate_db": 0}, "listen.turn_gate_db must be in (0, 60] dB or null, got 0"),
        ({"turn_gate_db": math.inf}, "listen.turn_gate_db must be in (0, 60] dB or null, got inf"),
        ({"turn_gate_db": True}, "listen.turn_gate_db must be in (0, 60] dB or null, got True"),
        ({"turn_gate_db": "12"}, "listen.turn_gate_db must be in (0, 60] dB or null, got '12'"),
        (
            {"turn_gate": "fast" * 30},
            "listen.turn_gate must be one of hold, cues, "
            "got 'fastfastfastfastfastfastfastfastfast...",
        ),
    ],
)
def test_bad_turn_config_is_refused_by_key(config: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        ListenConfig(**config)  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_bad_detector_arguments_are_refused() -> None:
    with pytest.raises(ConfigError, match="quick_s must be > 0"):
        CuesTurn(quick_s=-1.0)
    with pytest.raises(ConfigError, match="quick_s ≤ hold_s"):
        CuesTurn(quick_s=2.0, hold_s=1.0)
    with pytest.raises(ConfigError, match="> 0 seconds"):
        SilenceTurn(math.inf)
    with pytest.raises(ConfigError, match=r"listen\.turn must be one of"):
        make_turn("smart")


def test_a_partial_from_before_the_last_words_says_nothing() -> None:
    """A recognizer that decodes only at pauses may still hold "… and" when the sentence has
    gone on and ended: words older than ~0.2 s of speech do not hold the turn."""
    audio, end = speech_then_silence([120, 125, 118, 120, 110, 85])
    turn = CuesTurn()
    ended = run_cues(turn, audio, {2: "walk forward and"})  # then ~0.8 s more speech
    assert ended is not None
    assert (ended - end) / SAMPLE_RATE < 0.4
    assert "words none" in turn.reason


def test_the_recorder_ends_a_round_when_its_turn_detector_says() -> None:
    """Models out, fakes in: the recorder forwards each partial, the turn detector's silence
    (longer after "… and") decides the round, and the end of speech is dated by the VAD."""
    from anima.listening.outcomes import Final, Partial
    from anima.listening.recorder import Recorder
    from anima.testing.listening import FakeRecognizer, FakeTurn, FakeVad

    turn = FakeTurn(silence_s=0.3, by_text={"walk forward and": 1.0})
    assert isinstance(turn, TurnDetector)
    detector = SpeechDetector(FakeVad(level=1000), start_frames=1, turn=turn)
    recorder = Recorder(
        ListenConfig(wake_word=False), FakeRecognizer(["walk forward and"], frames_per_word=3),
        detector,
    )  # fmt: skip
    loud = np.full(FRAME_SAMPLES, 5000, np.int16)
    quiet = np.zeros(FRAME_SAMPLES, np.int16)
    out = recorder.wake()
    for frame in [loud] * 10 + [quiet] * 60:
        out += recorder.feed(frame)
    partials = [o.text for o in out if isinstance(o, Partial)]
    assert partials == ["walk", "walk forward", "walk forward and"]
    assert turn.partials == partials
    assert [o.text for o in out if isinstance(o, Final)] == ["walk forward and"]
    ended_after = turn.asked[-1]
    assert ended_after == pytest.approx(1.0, abs=FRAME_S)  # not 0.3 s: the words said wait
    rounds = [o.round for o in out if hasattr(o, "round")]
    assert rounds[-1].speech_end_position == 10 * FRAME_SAMPLES  # the last loud frame's end
