"""A voice stream's pause and resume (the realtime brain's yield at a voice's onset), on the
stepped fake clock of ``test_voice_stream``: playback holds at the exact sample, ``played_ms``
is frozen, no ``end_speak``, the mouth shuts; a resume plays on from that sample with nothing
lost or skipped (only its first :data:`FADE_S` faded in); a stop while paused returns the
pause's count."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from tests.speech.test_voice_stream import Rig

from anima.events import SpeechEnded, SpeechStarted
from anima.speech.base import Samples
from anima.speech.sinks import NullSink
from anima.speech.stream import FADE_S, STREAM_RATE, Stream
from anima.testing import FakeClock

pytestmark = pytest.mark.fast

FADE = round(FADE_S * STREAM_RATE)


class Tape(NullSink):
    """The null sink, keeping what it really played: each start's samples up to its stop."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(clock)
        self.runs: list[tuple[list[Samples], list[int]]] = []  # (written, [played at stop])

    def start(self, sample_rate: int) -> None:
        super().start(sample_rate)
        self.runs.append(([], []))

    def write(self, samples: Samples) -> None:
        if self._stopped_at is None:
            self.runs[-1][0].append(samples.copy())
        super().write(samples)

    def stop(self) -> None:
        super().stop()
        if not self.runs[-1][1]:
            self.runs[-1][1].append(self.played())

    def heard(self) -> Samples:
        parts = []
        for written, stopped in self.runs:
            run = np.concatenate(written) if written else np.zeros(0, np.int16)
            parts.append(run[: stopped[0]] if stopped else run)
        return np.concatenate(parts)


@pytest.fixture
def rig() -> Iterator[Rig]:
    r = Rig(sink=Tape)
    yield r
    r.close()


def tape(rig: Rig) -> Tape:
    assert isinstance(rig.sink, Tape)
    return rig.sink


def signal(seconds: float) -> Samples:
    """Audio at the sink's own rate (nothing resampled: compared sample for sample), each
    sample different from its neighbours: a skipped or repeated sample shows."""
    n = round(seconds * STREAM_RATE)
    return ((np.arange(n) * 37) % 16000 - 8000).astype(np.int16)


def starts_and_ends(rig: Rig) -> list[str]:
    return [type(e).__name__ for e in rig.events() if isinstance(e, SpeechStarted | SpeechEnded)]


def playing(rig: Rig, seconds: float, ticks: int) -> tuple[Stream, Samples]:
    """A stream fed ``seconds`` of :func:`signal`, played ``ticks`` ticks."""
    audio = signal(seconds)
    stream = rig.open()
    stream.feed(audio.tobytes(), STREAM_RATE)
    rig.tick(ticks)
    return stream, audio


def play_out(rig: Rig, limit: int = 400) -> None:
    for _ in range(limit):
        rig.tick()
        if rig.ends():
            return


def test_a_pause_holds_at_the_sample_and_the_resume_loses_nothing(rig: Rig) -> None:
    stream, audio = playing(rig, 1.0, 25)
    rig.settle()
    rig.clock.advance(0.0043)  # between ticks: the sink's sample, not the tick's
    assert stream.pause()
    held = stream.played_ms()
    assert held == 254  # 254.3 ms played, floored
    assert not stream.pause()  # paused already
    stream.feed(signal(0.2).tobytes(), STREAM_RATE)  # still coming from the server: queued
    stream.finish()
    rig.tick(40)
    assert stream.played_ms() == held
    assert rig.ends() == []  # no end_speak while paused
    assert abs(rig.mouth()) < 0.5, "the mouth stays open in a pause"
    assert stream.resume()
    assert not stream.resume()
    play_out(rig)
    assert [e.reason for e in rig.ends()] == ["done"]
    assert starts_and_ends(rig) == ["SpeechStarted", "SpeechEnded"]
    assert stream.played_ms() == 1200
    heard = tape(rig).heard()
    expected = np.concatenate([audio, signal(0.2)])
    assert len(heard) == len(expected)  # nothing lost, nothing played twice
    at = tape(rig).runs[0][1][0]  # where the pause was: the sink's played count
    assert at == round(0.2543 * STREAM_RATE)
    assert np.array_equal(heard[:at], expected[:at])
    assert np.array_equal(heard[at + FADE :], expected[at + FADE :])
    fade = heard[at : at + FADE].astype(int)
    assert np.all(np.abs(fade) <= np.abs(expected[at : at + FADE].astype(int)))  # faded in
    assert abs(int(fade[0])) < abs(int(expected[at])) or expected[at] == 0


def test_a_stop_while_paused_returns_the_pause_s_count(rig: Rig) -> None:
    stream, _ = playing(rig, 1.0, 31)
    stream.pause()
    held = stream.played_ms()
    assert abs(held - 310) <= 1  # 31 ticks on the float clock
    rig.tick(20)
    assert stream.stop() == held
    assert [e.reason for e in rig.ends()] == ["interrupted"]
    assert stream.played_ms() == held
    assert not stream.resume()  # stopped: nothing to resume
    rig.tick(5)
    at = tape(rig).runs[0][1][0]
    assert at * 1000 // STREAM_RATE == held
    assert len(tape(rig).heard()) == at


def test_a_pause_after_all_was_written_and_finished_still_resumes(rig: Rig) -> None:
    stream = rig.open()
    stream.feed(signal(0.3).tobytes(), STREAM_RATE)
    stream.finish()  # all of it goes to the sink; the player ends it once played
    rig.tick(10)
    stream.pause()
    rig.tick(50)  # far past its length: a pause does not end it
    assert rig.ends() == []
    assert stream.played_ms() == 100
    stream.resume()
    play_out(rig)
    assert [e.reason for e in rig.ends()] == ["done"]
    assert stream.played_ms() == 300
    assert len(tape(rig).heard()) == round(0.3 * STREAM_RATE)


def test_a_pause_before_the_first_sample_holds_the_start(rig: Rig) -> None:
    stream = rig.open()
    assert stream.pause()
    stream.feed(signal(0.2).tobytes(), STREAM_RATE)
    stream.finish()
    rig.tick(20)
    assert rig.sink.written() == 0
    assert stream.played_ms() == 0
    stream.resume()
    play_out(rig)
    assert [e.reason for e in rig.ends()] == ["done"]
    assert np.array_equal(tape(rig).heard(), signal(0.2))  # from its start: no fade needed


def test_pause_resume_pause_before_the_worker_wrote_anything_keeps_the_count(rig: Rig) -> None:
    stream, audio = playing(rig, 0.6, 12)
    stream.pause()
    stream.resume()
    stream.pause()  # again, before the worker restarted the sink
    held = stream.played_ms()
    assert abs(held - 120) <= 1
    rig.tick(10)
    assert stream.played_ms() == held
    stream.resume()
    rig.tick(8)
    assert abs(stream.played_ms() - 200) <= 1
    stream.finish()
    play_out(rig)
    assert stream.played_ms() == 600
    assert len(tape(rig).heard()) == len(audio)
