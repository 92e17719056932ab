"""The recorder's rounds on audio time, exact to the frame: a fake VAD (loud = speech) and a fake
recognizer, so timeouts, endpoints, the pre-buffer, gating and restarts are checked precisely."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from anima.listening.audio import FRAME_SAMPLES, SAMPLE_RATE
from anima.listening.config import ListenConfig
from anima.listening.recorder import (
    Final,
    GaveUp,
    Partial,
    Recorder,
    RecordingStarted,
    RoundEnded,
    Woke,
)
from anima.listening.vad import SpeechDetector
from anima.listening.wake import WakeHit

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


class FixedSpotter:
    """Reports the wake phrase at stream position ``at``, ending at ``end``."""

    def __init__(self, at: int, end: int) -> None:
        self.at, self.end = at, end

    def feed(self, frame: Any, position: int) -> WakeHit | None:
        if position <= self.at < position + len(frame):
            return WakeHit(phrase="hey robot", end_sample=self.end, detected_sample=self.at)
        return None


def make(text: str = "wave", spotter: Any = None, **config: Any) -> tuple[Recorder, Any]:
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
