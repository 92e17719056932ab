"""Speech end to end with the real eSpeak NG voice and the WAV sink (deterministic audio).

With ``fake_audio`` the sink plays on a :class:`FakeClock` the test moves (:meth:`Setup.play`),
while the motion engine runs on the real clock.
"""

from __future__ import annotations

import threading
import wave
from pathlib import Path

import numpy as np
import pytest

from anima.body import load_body
from anima.clock import MonotonicClock
from anima.drivers.sim import SimDriver
from anima.errors import SpeechError
from anima.events import Event, EventHub, SpeechEnded
from anima.motion.engine import MotionEngine
from anima.speech.espeak.espeak import EspeakEngine
from anima.speech.service import SpeechService
from anima.speech.sinks import WavSink
from anima.testing import eventually
from anima.testing.clock import FakeClock

pytestmark = pytest.mark.integration

TEXT = "Hello, my name is anima. I speak with my lips in time with my voice."


def _espeak() -> EspeakEngine:
    engine = EspeakEngine()
    try:
        engine.load()
    except SpeechError as exc:  # CI installs libespeak-ng1 through the bootstrap
        pytest.skip(f"eSpeak NG is not available here: {exc}")
    return engine


class Setup:
    def __init__(self, wav: Path, *, fake_audio: bool = False) -> None:
        self.clock = MonotonicClock(spin_s=0.0)
        self.audio: FakeClock | None = FakeClock() if fake_audio else None
        self.body = load_body()
        self.driver = SimDriver(history=5000)
        self.driver.connect()
        self.hub = EventHub()
        self.ended: list[SpeechEnded] = []
        self.cond = threading.Condition()
        self.hub.subscribe(self._on)
        self.motion = MotionEngine(self.body, self.driver, clock=self.clock, events=self.hub)
        self.sink = WavSink(wav, self.audio or self.clock)
        self.speech = SpeechService([_espeak()], self.sink, self.motion, self.hub, self.clock)
        self.hub.start()
        self.motion.start()
        self.speech.start()

    def _on(self, e: Event) -> None:
        if isinstance(e, SpeechEnded):
            with self.cond:
                self.ended.append(e)
                self.cond.notify_all()

    def wait(self, n: int) -> None:
        with self.cond:
            assert self.cond.wait_for(lambda: len(self.ended) >= n, 15)

    def play(self, seconds: float) -> None:
        """Let ``seconds`` of audio play: once eSpeak has made it all, the sink's clock moves."""
        assert self.audio is not None, "play() needs Setup(fake_audio=True)"
        assert eventually(lambda: not self.speech.synthesizing, 15.0)
        self.audio.advance(seconds)

    def close(self) -> None:
        self.speech.stop()  # closes the sink: the WAV file is complete
        self.motion.stop()
        self.hub.stop()


def _read_wav(path: Path) -> tuple[np.ndarray, int]:
    with wave.open(str(path), "rb") as w:
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2"), w.getframerate()


def test_lips_follow_the_espeak_audio_and_end_speak_is_on_time(tmp_path: Path) -> None:
    s = Setup(tmp_path / "speech.wav")
    try:
        s.speech.speak(TEXT)
        s.wait(1)
        start, base_pos = s.sink._base_time, s.sink._base_pos
        written = s.sink.written()
        rate = s.sink._rate
        lateness = s.ended[0].t - (start + (written - base_pos) / rate)
        frames = [f for f in s.driver.history() if start <= f.t <= start + written / rate]
    finally:
        s.close()
    assert s.ended[0].reason == "done"
    assert -0.001 <= lateness <= 0.15  # never early; `anima bench speech` measures how soon
    audio, wav_rate = _read_wav(tmp_path / "speech.wav")
    assert wav_rate == rate
    assert len(audio) == written  # the WAV holds exactly what was played
    lip = s.body.index("lip_open")
    mouth = np.array([f.values[lip] for f in frames])
    pos = ((np.array([f.t for f in frames]) - start) * rate).astype(int)
    win = int(0.02 * rate)
    env = np.array(
        [np.sqrt(np.mean(audio[max(0, p - win) : p + win].astype(float) ** 2)) for p in pos]
    )
    m, e = mouth - mouth.mean(), env - env.mean()
    lags = list(range(-5, 6))
    corr = [float(np.dot(np.roll(m, -lag), e)) for lag in lags]
    best = lags[int(np.argmax(corr))]
    assert abs(best) * 10 <= 20, corr  # the correlation peaks within ±20 ms
    assert np.corrcoef(m, e)[0, 1] > 0.3  # and it is a real correlation


def test_barge_in_silences_at_once_and_the_wav_stops_there(tmp_path: Path) -> None:
    s = Setup(tmp_path / "cut.wav", fake_audio=True)
    try:
        s.speech.speak(TEXT + " " + TEXT)
        s.play(0.8)
        s.speech.stop_speaking()
        t_stop = s.clock.now()
        played = s.sink.played()
        s.play(0.1)
        assert s.sink.played() == played  # silent from the stop on
        s.wait(1)
        lip = s.body.index("lip_open")
        rest = s.body.channels[lip].default

        def closed() -> list[float]:  # the engine's frames since the stop with the mouth at rest
            history = s.driver.history()
            return [f.t for f in history if f.t >= t_stop and abs(f.values[lip] - rest) < 1]

        assert eventually(closed)
        first_closed = closed()[0]
        still_open, _ = _read_wav(tmp_path / "cut.wav")  # cut back at the stop, not at close
    finally:
        s.close()
    assert len(still_open) == played
    assert s.ended[0].reason == "stopped"
    assert first_closed - t_stop <= 0.1  # mouth at rest within a few ticks (engine time)
    audio, rate = _read_wav(tmp_path / "cut.wav")
    assert len(audio) == played
    assert abs(len(audio) - 0.8 * rate) <= 1  # the 0.8 s that played before the stop


def test_the_wav_file_is_valid_after_each_utterance_without_closing(tmp_path: Path) -> None:
    """Issue 12 item 16: the file held nothing until the next utterance or exit."""
    s = Setup(tmp_path / "open.wav")
    try:
        s.speech.speak("Hello there.")
        s.wait(1)
        first = s.sink.written()
        audio, rate = _read_wav(tmp_path / "open.wav")  # the sink is still open
        assert rate == s.sink._rate
        assert len(audio) == first > 0.3 * rate
        assert np.abs(audio).max() > 1000  # the utterance itself, not silence
        s.speech.speak("And goodbye.")
        s.wait(2)
        audio, _ = _read_wav(tmp_path / "open.wav")
        assert len(audio) == first + s.sink.written()
    finally:
        s.close()
