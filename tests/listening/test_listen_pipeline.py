"""The listening pipeline end to end, with no microphone: anima's TTS speaks, the Listener hears.

Timeouts run on audio time, so audio is pushed faster than real time and every wait is bounded.
These tests pin the small engines (pocketsphinx's grammar, its keyphrase spotter, the silence
turn): their transcripts are exact and their timing fixed, so the recorder's mechanics can be
checked to the word. The default engines (Whisper, the ASR spotter) are tested in
``test_listen_wake*.py`` and ``test_listen_asr*.py``.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np
import pytest

from anima.audio import SAMPLE_RATE
from anima.events import EventHub, ListenTimeout, Transcript, WakeDetected
from anima.listening import (
    ListenConfig,
    Listener,
    ListenResult,
    RawPcmSource,
    RecordingStart,
    RoundReport,
    WavSource,
)
from anima.listening.results import is_wire_event
from anima.listening.sources import write_wav

pytestmark = pytest.mark.model

SMALL = {"asr": "pocketsphinx", "wake": "keyphrase", "turn": "silence"}


@pytest.fixture
def listen(listen: Any, shared_models: dict[str, Any]) -> Any:
    """The conftest's ``listen`` on the small engines (a test's own keys win), loaded once for
    the module (``shared_models``: the tests here vary the listener, never the engines; the
    tests that make a ``Listener`` themselves check that the config makes them)."""
    shared_models["spotter"].reset()  # a new stream: nothing of the last test's is heard
    return lambda **config: listen(models=shared_models, **{**SMALL, **config})


def _command_round(h: Any, speech: np.ndarray, n: int) -> None:
    """Wake by hand, speak right away, let the endpoint come; ``n`` rounds done after."""
    h.silence(0.4)
    h.sync()
    h.listener.wake()
    h.push(speech)
    h.silence(1.2)
    assert h.rounds_done(n)


@pytest.mark.parametrize("voice", ["espeak", "piper"])
def test_commands_are_transcribed(voice: str, request: Any, listen: Any, say: Any) -> None:
    engine = request.getfixturevalue(voice)
    commands = request.getfixturevalue("commands")
    h = listen()
    for n, command in enumerate(commands, start=1):
        _command_round(h, say(engine, command), n)
    finals = h.heard.finals
    right = sum(heard == said for heard, said in zip(finals, commands, strict=False))
    assert len(finals) == len(commands), (finals, h.heard.gave_up)
    assert right >= len(commands) - 1, finals  # pocketsphinx may stumble on one
    assert h.heard.partials, "partial results come while the command is spoken"


def test_wake_phrase_then_command(listen: Any, piper: Any, say: Any) -> None:
    h = listen()
    h.silence(0.5)
    for n, command in enumerate(["wave", "look at me", "walk forward"], start=1):
        h.push(say(piper, f"hey robot, {command}"))
        h.silence(1.2)
        assert h.rounds_done(n)
    assert [w.source for w in h.heard.wakes] == ["keyphrase"] * 3
    assert all(w.phrase == "hey robot" for w in h.heard.wakes)
    assert h.heard.finals == ["wave", "look at me", "walk forward"]
    for report in h.heard.rounds:  # recording begins where the phrase ended, before the command
        r = report.round
        assert r.speech_start_position is not None
        assert r.start_position < r.wake_position  # the spotter reports after the phrase ends
        assert r.start_position <= r.speech_start_position


def test_pre_buffer_keeps_the_first_word(listen: Any, espeak: Any, say: Any) -> None:
    h = listen()
    h.silence(0.5)
    h.sync()
    onset = h.listener._recorder.position  # the speech starts on this very sample
    h.listener.wake()
    h.push(say(espeak, "walk forward"))
    h.silence(1.2)
    assert h.rounds_done(1)
    r = h.heard.rounds[0].round
    assert r.asr_first_position is not None
    assert r.asr_first_position <= onset
    assert h.heard.finals == ["walk forward"]


def test_no_speech_gives_up_after_the_timeout(listen: Any) -> None:
    h = listen(no_speech_timeout_s=1.0)
    h.listener.wake()
    h.silence(3.0)
    assert h.rounds_done(1)
    (timeout,) = h.heard.gave_up
    assert timeout.reason == "no_speech"
    assert timeout.waited_s == pytest.approx(1.0, abs=0.05)
    assert h.heard.finals == []
    assert not h.listener.recording


def test_silence_ends_the_utterance(listen: Any, espeak: Any, say: Any) -> None:
    h = listen(endpoint_silence_s=0.5)
    h.listener.wake()
    h.push(say(espeak, "say hello"))
    h.silence(0.4)  # shorter than the endpoint silence: still recording
    h.sync()
    assert h.heard.finals == []
    assert h.listener.recording
    h.silence(0.3)
    assert h.rounds_done(1)
    r = h.heard.rounds[0].round
    assert h.heard.finals == ["say hello"]
    assert r.endpoint_position is not None
    assert r.speech_end_position is not None
    silence_s = (r.endpoint_position - r.speech_end_position) / SAMPLE_RATE
    assert 0.45 <= silence_s <= 0.6


def test_too_short_transcripts_are_discarded(listen: Any, espeak: Any, say: Any) -> None:
    h = listen(min_chars=5)
    _command_round(h, say(espeak, "nod"), 1)
    _command_round(h, say(espeak, "walk forward"), 2)
    assert h.heard.finals == ["walk forward"]
    (short,) = h.heard.gave_up
    assert (short.reason, short.text) == ("too_short", "nod")


def test_gating_ignores_the_robots_own_voice(listen: Any, piper: Any, say: Any) -> None:
    h = listen()
    h.silence(0.3)
    h.listener.gate(True)  # the robot speaks, and says the wake phrase
    h.push(say(piper, "hey robot, wave"))
    h.silence(1.5)
    h.listener.gate(False)
    h.silence(0.5)
    h.sync()
    assert h.heard.wakes == []
    assert h.heard.log == []
    h.push(say(piper, "hey robot, wave"))  # the person, once the robot is quiet
    h.silence(1.2)
    assert h.rounds_done(1)
    assert h.heard.finals == ["wave"]


def test_gating_pauses_a_round(listen: Any, espeak: Any, say: Any) -> None:
    h = listen(no_speech_timeout_s=1.0)
    h.listener.wake()
    h.silence(0.5)
    h.listener.gate(True)
    h.push(say(espeak, "stop"))  # the robot's voice: not transcribed
    h.silence(2.0)  # gated audio does not count towards the timeout
    h.listener.gate(False)
    h.sync()
    assert h.listener.recording
    assert h.heard.gave_up == []
    h.push(say(espeak, "nod"))
    h.silence(1.2)
    assert h.rounds_done(1)
    assert h.heard.finals == ["nod"]


def test_wake_during_recording_restarts_it(listen: Any, espeak: Any, say: Any) -> None:
    h = listen()
    h.listener.wake()
    h.silence(0.3)
    h.push(say(espeak, "walk forward"))  # no endpoint yet: the round is still open
    assert h.heard.wait_for(lambda: bool(h.heard.partials))
    h.sync()
    h.listener.wake()
    h.silence(0.3)
    h.push(say(espeak, "wave"))
    h.silence(1.2)
    assert h.rounds_done(2)
    assert [r.round.outcome for r in h.heard.rounds] == ["restarted", "final"]
    assert [s.restarted for s in h.heard.of(RecordingStart)] == [False, True]
    assert len(h.heard.wakes) == 2
    assert h.heard.finals == ["wave"]


def test_events_go_to_the_hub(espeak: Any, say: Any, tmp_path: Any, commands: Any) -> None:
    hub = EventHub()
    seen: list[Any] = []
    hub.subscribe(seen.append, "wake", "asr", "listen_timeout")
    wav = tmp_path / "command.wav"
    speech = say(espeak, "look at me")
    pad = np.zeros(SAMPLE_RATE // 2, dtype=np.int16)
    write_wav(wav, np.concatenate([pad, speech, pad, pad, pad]))
    done = threading.Event()

    def take(result: ListenResult) -> None:  # the consumer publishes what the world is told
        if is_wire_event(result):
            hub.publish(result)
        if isinstance(result, RoundReport):
            done.set()

    listener = Listener(
        WavSource(wav), config=ListenConfig(wake_word=False, **SMALL), phrases=commands,
        results=take,
    )  # fmt: skip
    listener.wake()  # queued before start: the round begins with the file
    with listener:
        assert done.wait(10)
    hub.drain()
    assert isinstance(seen[0], WakeDetected)
    assert seen[0].source == "manual"
    finals = [e for e in seen if isinstance(e, Transcript) and e.final]
    assert [e.text for e in finals] == ["look at me"]
    assert any(isinstance(e, Transcript) and not e.final for e in seen)
    assert not any(isinstance(e, ListenTimeout) for e in seen)


def test_stdin_pcm_at_22khz(espeak: Any, commands: Any) -> None:
    """Raw PCM through a pipe (as ``arecord … | anima``), at the TTS's own 22.05 kHz."""
    from anima.speech.base import Cancel

    chunks = list(espeak.synthesize("walk forward", "en-US", Cancel()))
    rate = chunks[0].sample_rate
    pad = np.zeros(rate // 2, dtype=np.int16)
    pcm = np.concatenate([pad, *(c.samples for c in chunks), pad, pad, pad]).astype("<i2")
    read_fd, write_fd = os.pipe()
    finals: list[str] = []
    done = threading.Event()

    def take(result: ListenResult) -> None:
        if isinstance(result, Transcript) and result.final:
            finals.append(result.text)
        elif isinstance(result, RoundReport):
            done.set()

    with os.fdopen(read_fd, "rb") as stream:
        listener = Listener(
            RawPcmSource(stream, sample_rate=rate), config=ListenConfig(wake_word=False, **SMALL),
            phrases=commands, results=take,
        )  # fmt: skip
        listener.wake()
        with listener:
            os.write(write_fd, pcm.tobytes())
            assert done.wait(10)
        os.close(write_fd)
    assert finals == ["walk forward"]


def test_the_energy_fallback_vad_endpoints_too(listen: Any, espeak: Any, say: Any) -> None:
    h = listen(vad="energy")
    assert h.listener.vad is not None
    assert h.listener.vad.name == "energy"
    rng = np.random.default_rng(0)

    def hiss(n: int) -> np.ndarray:
        return (rng.standard_normal(n) * 100).astype(np.int16)

    for n, command in enumerate(["look at me", "walk forward"], start=1):
        h.push(hiss(SAMPLE_RATE // 2))
        h.sync()
        h.listener.wake()
        speech = say(espeak, command)
        h.push(speech + hiss(len(speech)))
        h.push(hiss(SAMPLE_RATE + SAMPLE_RATE // 2))
        assert h.rounds_done(n)
    assert h.heard.finals == ["look at me", "walk forward"]
