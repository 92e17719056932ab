"""The recorder's rounds on audio time, exact to the frame: a fake VAD (loud = speech) and a fake
recognizer, so timeouts, endpoints, the pre-buffer, gating and restarts are checked precisely."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from anima.audio import FRAME_SAMPLES, SAMPLE_RATE
from anima.config.listening import ListenConfig
from anima.listening.outcomes import Final, GaveUp, Partial, RecordingStarted, RoundEnded, Woke
from anima.listening.recorder import END_SILENCE_S, Recorder
from anima.listening.speech_detector import SpeechDetector
from anima.listening.wake.spotter import Spotter, WakeHit

pytestmark = pytest.mark.fast

LOUD = np.full(FRAME_SAMPLES, 5000, dtype=np.int16)
QUIET = np.zeros(FRAME_SAMPLES, dtype=np.int16)


@pytest.fixture(autouse=True)
def _listen_extra() -> None:
    """Overrides the folder's: these tests need no model."""


class LoudVad:
    name = "loud"

    def load(self) -> None: ...

    def reset(self) -> None: ...

    def probability(self, frame: Any) -> float:
        return 1.0 if np.abs(frame).max() > 1000 else 0.0


class ScriptedRecognizer:
    """Hears ``text``; partials are the number of frames fed."""

    name = "scripted"
    confidence: float | None = None  # it cannot say
    alternatives: tuple[str, ...] = ()

    def __init__(self, text: str = "wave") -> None:
        self.text = text
        self.frames: list[Any] = []
        self.starts = self.cancels = 0
        self.on = False

    def load(self) -> None: ...

    def start(self) -> None:
        self.starts += 1
        self.on = True

    def feed(self, frame: Any) -> str | None:
        self.frames.append(frame)
        return f"{len(self.frames)} frames"

    def finish(self) -> str:
        self.on = False
        return self.text

    def cancel(self) -> None:
        self.cancels += 1
        self.on = False

    def close(self) -> None: ...


class FixedSpotter:
    """A :class:`~anima.listening.wake.spotter.Spotter` that reports the wake phrase at stream
    position ``at``, ending at ``end``."""

    name = "fixed"
    phrase = "hey robot"

    def __init__(self, at: int, end: int) -> None:
        self.at, self.end = at, end

    def load(self) -> None: ...

    def reset(self) -> None: ...

    def close(self) -> None: ...

    def feed(self, frame: Any, position: int) -> WakeHit | None:
        if position <= self.at < position + len(frame):
            return WakeHit(phrase="hey robot", end_sample=self.end, detected_sample=self.at)
        return None


def make(text: str = "wave", spotter: Spotter | None = None, **config: Any) -> tuple[Recorder, Any]:
    cfg = ListenConfig(**config)
    recognizer = ScriptedRecognizer(text)
    detector = SpeechDetector(
        LoudVad(), start_frames=cfg.vad_start_frames, end_s=cfg.endpoint_silence_s
    )
    return Recorder(cfg, recognizer, detector, spotter), recognizer


def feed(recorder: Recorder, frame: Any, n: int) -> list[Any]:
    out: list[Any] = []
    for _ in range(n):
        out += recorder.feed(frame)
    return out


def frames_until(recorder: Recorder, frame: Any, kind: type, limit: int = 2000) -> int:
    """Frames fed until an outcome of ``kind`` comes (that frame counted)."""
    for n in range(1, limit + 1):
        if any(isinstance(o, kind) for o in recorder.feed(frame)):
            return n
    raise AssertionError(f"no {kind.__name__} within {limit} frames")


def test_no_speech_gives_up_after_exactly_the_timeout() -> None:
    recorder, _ = make(no_speech_timeout_s=1.0)
    out = recorder.wake()
    assert [type(o) for o in out] == [Woke, RecordingStarted]
    n = frames_until(recorder, QUIET, GaveUp)
    assert n == -(-SAMPLE_RATE // FRAME_SAMPLES)  # the first frame that reaches 1.0 s
    assert not recorder.recording


def test_the_endpoint_comes_after_the_configured_silence() -> None:
    recorder, recognizer = make(endpoint_silence_s=0.8)
    recorder.wake()
    feed(recorder, QUIET, 3)
    out = feed(recorder, LOUD, 10)
    assert any(isinstance(o, Partial) for o in out)
    n = frames_until(recorder, QUIET, Final)
    assert n == 25  # ceil(0.8 s / 32 ms)
    assert recognizer.starts == 1
    assert not recognizer.on


def test_the_round_report_places_speech_and_endpoint() -> None:
    recorder, _ = make(endpoint_silence_s=0.8, pre_buffer_s=0.3)
    feed(recorder, QUIET, 20)
    recorder.wake()
    feed(recorder, QUIET, 12)
    feed(recorder, LOUD, 10)
    out = feed(recorder, QUIET, 25)
    (ended,) = [o for o in out if isinstance(o, RoundEnded)]
    r = ended.round
    speech_at = (20 + 12) * FRAME_SAMPLES
    assert r.outcome == "final"
    assert r.text == "wave"
    assert r.speech_start_position == speech_at
    assert r.speech_end_position == speech_at + 10 * FRAME_SAMPLES
    assert r.endpoint_position == speech_at + 35 * FRAME_SAMPLES
    assert r.asr_first_position == speech_at - 7 * FRAME_SAMPLES  # 9 frames kept (0.3 s)


def test_the_pre_buffer_reaches_back_before_a_manual_wake() -> None:
    """Speech that began just before the key press is recorded from its first frame."""
    recorder, recognizer = make()
    feed(recorder, QUIET, 20)
    feed(recorder, LOUD, 2)
    recorder.wake()
    feed(recorder, LOUD, 5)
    out = feed(recorder, QUIET, 25)
    (ended,) = [o for o in out if isinstance(o, RoundEnded)]
    assert ended.round.speech_start_position == 20 * FRAME_SAMPLES
    loud_fed = sum(int(np.abs(f).max() > 0) for f in recognizer.frames)
    assert loud_fed == 7


def test_without_a_pre_buffer_the_start_of_speech_is_lost() -> None:
    recorder, recognizer = make(pre_buffer_s=0.0)
    recorder.wake()
    feed(recorder, LOUD, 6)
    assert len(recognizer.frames) == 5  # the frame that confirmed speech, not the one before


def test_an_empty_endpoint_waits_for_more_speech_then_the_silence_timeout() -> None:
    recorder, _recognizer = make(text="", endpoint_silence_s=0.5, silence_timeout_s=2.0)
    recorder.wake()
    feed(recorder, LOUD, 5)
    out = feed(recorder, QUIET, 16)  # the endpoint: nothing recognized, the round goes on
    assert not any(isinstance(o, Final | GaveUp) for o in out)
    assert recorder.recording
    n = frames_until(recorder, QUIET, GaveUp)
    assert 16 + n == 63  # 2.0 s after the last speech frame: ceil(32000 / 512)
    recorder2, recognizer2 = make(text="", endpoint_silence_s=0.5)
    recorder2.wake()
    feed(recorder2, LOUD, 5)
    feed(recorder2, QUIET, 16)
    recognizer2.text = "nod"
    feed(recorder2, LOUD, 5)  # more speech: the recognizer starts again
    assert recognizer2.starts == 2
    assert frames_until(recorder2, QUIET, Final) == 16


def test_too_short_is_discarded() -> None:
    recorder, _ = make(text="ok", min_chars=3)
    recorder.wake()
    feed(recorder, LOUD, 5)
    out = feed(recorder, QUIET, 30)
    (gave_up,) = [o for o in out if isinstance(o, GaveUp)]
    assert (gave_up.reason, gave_up.text) == ("too_short", "ok")
    assert not any(isinstance(o, Final) for o in out)


def test_gating_drops_audio_and_pauses_the_timers() -> None:
    recorder, recognizer = make(no_speech_timeout_s=1.0, ungate_hold_s=0.2)
    recorder.wake()
    feed(recorder, QUIET, 10)
    recorder.gate(True)
    assert feed(recorder, LOUD, 100) == []  # the robot's own voice: nothing hears it
    recorder.gate(False)
    assert feed(recorder, LOUD, 7) == []  # the echo tail: ceil(0.2 s / 32 ms) frames
    assert recognizer.frames == []
    assert recorder.recording
    n = frames_until(recorder, QUIET, GaveUp)
    assert 10 + n == 32  # only ungated audio counts towards the 1 s


def test_gating_while_idle_keeps_the_wake_phrase_out() -> None:
    recorder, _ = make(spotter=FixedSpotter(at=5 * FRAME_SAMPLES, end=4 * FRAME_SAMPLES))
    recorder.gate(True)
    assert feed(recorder, LOUD, 10) == []
    recorder, _ = make(
        spotter=FixedSpotter(at=5 * FRAME_SAMPLES, end=4 * FRAME_SAMPLES), wake_while_gated=True
    )
    recorder.gate(True)
    assert any(isinstance(o, Woke) for o in feed(recorder, LOUD, 10))


def test_a_wake_during_a_round_restarts_it() -> None:
    recorder, recognizer = make()
    recorder.wake()
    feed(recorder, LOUD, 5)
    out = recorder.wake("keyboard")
    assert [type(o) for o in out] == [Woke, RoundEnded, RecordingStarted]
    assert out[1].round.outcome == "restarted"
    assert out[2].restarted
    assert recognizer.cancels == 1
    assert out[0].source == "keyboard"


def test_a_spoken_wake_records_from_the_end_of_the_phrase() -> None:
    """The command said without a pause is in the recording, the wake phrase is not."""
    end, at = 10 * FRAME_SAMPLES + 100, 14 * FRAME_SAMPLES
    recorder, _recognizer = make(spotter=FixedSpotter(at=at, end=end))
    feed(recorder, QUIET, 10)
    out = feed(recorder, LOUD, 6)  # detected in the 5th loud frame
    assert [type(o) for o in out][:2] == [Woke, RecordingStarted]
    out += feed(recorder, QUIET, 26)  # the recording's frames now start 100 samples late
    (ended,) = [o for o in out if isinstance(o, RoundEnded)]
    assert ended.round.start_position == end
    assert ended.round.wake_position == at + FRAME_SAMPLES
    assert ended.round.speech_start_position == end  # the command's first samples are kept
    assert any(isinstance(o, Final) for o in out)


def test_a_long_utterance_is_cut() -> None:
    recorder, _ = make(max_utterance_s=2.0)
    recorder.wake()
    n = frames_until(recorder, LOUD, Final)
    assert n == 2 + 63  # speech confirmed on frame 2, then 2 s of it: ceil(62.5) frames


def test_the_source_ending_decides_the_round() -> None:
    recorder, _ = make()
    recorder.wake()
    feed(recorder, LOUD, 5)
    assert any(isinstance(o, Final) for o in recorder.end())
    recorder, _ = make()
    recorder.wake()
    feed(recorder, QUIET, 5)
    (gave_up, _ended) = recorder.end()
    assert isinstance(gave_up, GaveUp)
    assert gave_up.reason == "source_ended"
    assert recorder.end() == []  # nothing in progress


class StretchSpotter:
    """Reads a stretch of loud frames when the first quiet frame follows it (as the ``asr``
    spotter waits for its VAD to say the speech ended); the phrase is its first
    ``phrase_frames``."""

    name = "stretch"
    phrase = "hey robot"

    def __init__(self, phrase_frames: int = 4) -> None:
        self.phrase_frames = phrase_frames
        self.begin: int | None = None
        self.quiet_heard = 0

    def load(self) -> None: ...

    def reset(self) -> None:
        self.begin = None

    def close(self) -> None: ...

    def feed(self, frame: Any, position: int) -> WakeHit | None:
        if np.abs(frame).max() > 1000:
            self.begin = position if self.begin is None else self.begin
            return None
        self.quiet_heard += 1
        begin, self.begin = self.begin, None
        if begin is None:
            return None
        end = begin + self.phrase_frames * FRAME_SAMPLES
        return WakeHit(phrase=self.phrase, end_sample=end, detected_sample=position)


def test_a_phrase_the_stream_ends_in_is_heard_and_its_command_kept() -> None:
    """Issue 30: "hey robot, wave" at the very end of a WAV (nothing after it) was never heard:
    the spotter reads a stretch when silence ends it, and none came. The end of the stream is
    silence to the spotter; the command after the phrase is the round's request."""
    spotter = StretchSpotter(phrase_frames=4)
    recorder, recognizer = make(spotter=spotter)
    assert feed(recorder, LOUD, 12) == []  # from sample 0: the phrase, then the command
    out = recorder.end()
    kinds = [type(o) for o in out]
    assert kinds[:2] == [Woke, RecordingStarted], kinds
    (final,) = [o for o in out if isinstance(o, Final)]
    assert final.text == "wave"
    (ended,) = [o for o in out if isinstance(o, RoundEnded)]
    assert ended.round.start_position == 4 * FRAME_SAMPLES  # recorded from the phrase's end
    assert ended.round.speech_start_position == 4 * FRAME_SAMPLES
    assert len(recognizer.frames) >= 8  # the command's frames reached the recognizer
    heard = spotter.quiet_heard
    assert heard <= round(END_SILENCE_S * SAMPLE_RATE / FRAME_SAMPLES)  # the endpoint ends it
    assert recorder.end() == []
    assert spotter.quiet_heard == heard  # once per end of the stream


def test_positions_stay_those_of_the_stream_across_a_gate() -> None:
    recorder, _ = make(ungate_hold_s=0.0)
    recorder.wake()
    feed(recorder, QUIET, 5)
    recorder.gate(True)
    feed(recorder, LOUD, 50)
    recorder.gate(False)
    feed(recorder, LOUD, 10)
    out = feed(recorder, QUIET, 25)
    (ended,) = [o for o in out if isinstance(o, RoundEnded)]
    assert ended.round.speech_start_position == 55 * FRAME_SAMPLES
    assert ended.round.speech_end_position == 65 * FRAME_SAMPLES


def test_a_wake_heard_while_gated_records_the_command_after_it() -> None:
    """Issue 13: with wake_while_gated, "hey robot … stop" said over the robot lost its "stop":
    the frames after the phrase were dropped until the conversation's gate(False) (~0.3 s
    later) and the hold after it. Now the phrase lifts the gate and the command is recorded
    from the phrase's end, whenever the gate(False) comes."""
    end, at = 10 * FRAME_SAMPLES, 12 * FRAME_SAMPLES
    recorder, recognizer = make(
        spotter=FixedSpotter(at=at, end=end), wake_while_gated=True, ungate_hold_s=0.2
    )
    recorder.gate(True)  # the robot is speaking
    out = feed(recorder, QUIET, 10)  # the robot's voice (cancelled by the AEC) and the phrase
    out += feed(recorder, LOUD, 3)  # the phrase is reported in the 3rd frame of the command
    assert [type(o) for o in out][:2] == [Woke, RecordingStarted]
    out += feed(recorder, LOUD, 7)  # "stop", 10 frames in all, while the gate is still on
    recorder.gate(False)  # the conversation stopped the robot's speech: ~0.3 s after the wake
    out += feed(recorder, QUIET, 26)
    (ended,) = [o for o in out if isinstance(o, RoundEnded)]
    assert ended.round.start_position == end
    assert ended.round.speech_start_position == end  # the command from its first sample
    assert ended.round.speech_end_position == 20 * FRAME_SAMPLES
    assert sum(int(np.abs(f).max() > 1000) for f in recognizer.frames) == 10  # all of it
    assert [o.text for o in out if isinstance(o, Final)] == ["wave"]


def test_a_gated_manual_wake_records_no_gated_audio() -> None:
    """Only a wake phrase lifts the gate: a key pressed while the robot speaks waits for it."""
    recorder, recognizer = make(wake_while_gated=True, pre_buffer_s=0.3)
    recorder.gate(True)
    feed(recorder, LOUD, 10)  # the robot's voice
    recorder.wake("keyboard")
    assert feed(recorder, LOUD, 10) == []
    assert recognizer.frames == []
    assert recorder.gated


def test_the_final_carries_the_recognizers_confidence() -> None:
    from anima.testing.listening import FakeRecognizer

    cfg = ListenConfig()
    for given in (0.25, None):
        recognizer = FakeRecognizer(["nod twice"], confidence=given)
        detector = SpeechDetector(LoudVad(), end_s=cfg.endpoint_silence_s)
        recorder = Recorder(cfg, recognizer, detector)
        recorder.wake()
        out = feed(recorder, LOUD, 20) + feed(recorder, QUIET, 30)
        (final,) = [o for o in out if isinstance(o, Final)]
        assert (final.text, final.confidence) == ("nod twice", given)
        assert final.alternatives == ()


def test_the_final_carries_the_recognizers_other_readings() -> None:
    from anima.testing.listening import FakeRecognizer

    cfg = ListenConfig()
    recognizer = FakeRecognizer(
        ["look over to your light", "nod"], alternatives=[["look over to your right"], []]
    )
    recorder = Recorder(cfg, recognizer, SpeechDetector(LoudVad(), end_s=cfg.endpoint_silence_s))
    finals = []
    for _ in range(2):
        recorder.wake()
        out = feed(recorder, LOUD, 20) + feed(recorder, QUIET, 30)
        finals += [o for o in out if isinstance(o, Final)]
    assert [(f.text, f.alternatives) for f in finals] == [
        ("look over to your light", ("look over to your right",)),
        ("nod", ()),
    ]


def test_partials_reach_the_speech_detector() -> None:
    """The turn detector judges the end of the turn on the words so far (interface item 3)."""

    class Turn:
        name = "spy"

        def __init__(self) -> None:
            self.partials: list[str] = []

        def load(self) -> None: ...

        def reset(self) -> None: ...

        def frame(self, frame: Any, speech_prob: float) -> None: ...

        def partial(self, text: str) -> None:
            self.partials.append(text)

        def ended(self, silence_s: float) -> bool:
            return silence_s >= 0.5

    cfg = ListenConfig()
    turn = Turn()
    recognizer = ScriptedRecognizer()
    recorder = Recorder(cfg, recognizer, SpeechDetector(LoudVad(), turn=turn))
    recorder.wake()
    out = feed(recorder, LOUD, 3) + feed(recorder, QUIET, 20)
    partials = [o.text for o in out if isinstance(o, Partial)]
    assert partials
    assert turn.partials == partials
