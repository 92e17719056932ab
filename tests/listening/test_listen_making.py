"""The listener made in one call (make_listener), its one stream of typed results, and the
capabilities some parts declare."""

from __future__ import annotations

import logging
import threading

import numpy as np
import pytest

from anima.choices import AsrMode
from anima.errors import ConfigError
from anima.events import ListenTimeout, Notice, Transcript, WakeDetected
from anima.listening import (
    ListenConfig,
    Listener,
    ListenResult,
    PushSource,
    RecordingStart,
    RoundReport,
    make_listener,
)
from anima.listening.asr import PocketsphinxAsr, Rereads, Weighs
from anima.listening.echo.source import EchoCancelledSource
from anima.listening.results import is_wire_event
from anima.listening.turn.cues import CuesTurn
from anima.listening.turn.detector import GatedTurn, SilenceTurn, make_turn
from anima.speech.reference import PlaybackReference
from anima.testing.listening import FakeRecognizer, FakeSource, FakeTurn, FakeVad

pytestmark = pytest.mark.fast


def test_a_source_that_names_no_ears_makes_no_listener() -> None:
    assert make_listener(ListenConfig(), "none") is None


def test_the_phrases_are_asked_for_the_recognizer_chosen() -> None:
    asked: list[str] = []

    def phrases(asr: str) -> list[str]:
        asked.append(asr)
        return ["wave", "nod"]

    listener = make_listener(ListenConfig(asr="pocketsphinx"), PushSource(), phrases=phrases)
    assert listener is not None
    assert asked == ["pocketsphinx"]
    assert isinstance(listener.recognizer, PocketsphinxAsr)


def test_free_speech_gives_pocketsphinx_its_language_model_not_a_grammar() -> None:
    config = ListenConfig(asr="pocketsphinx")
    grammar = make_listener(config, PushSource(), phrases=["wave"])
    free = make_listener(config, PushSource(), phrases=["wave"], free_speech=True)
    assert grammar is not None
    assert free is not None
    assert isinstance(grammar.recognizer, PocketsphinxAsr)
    assert isinstance(free.recognizer, PocketsphinxAsr)
    assert (grammar.recognizer.mode, free.recognizer.mode) == (AsrMode.GRAMMAR, AsrMode.LM)
    assert free.config.asr_mode is AsrMode.LM


def test_duplex_puts_the_echo_canceller_in_front_and_needs_the_playback() -> None:
    config = ListenConfig(asr="pocketsphinx", duplex=True, echo="none")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"listen\.duplex needs the runtime's speech"):
        make_listener(config, PushSource(), phrases=["wave"])
    listener = make_listener(config, PushSource(), phrases=["wave"], playback=PlaybackReference())
    assert listener is not None
    assert isinstance(listener.source, EchoCancelledSource)
    assert listener.source.name == "push+none"
    ears = make_listener(config, PushSource(), phrases=["wave"], echo=False)  # anima agent's
    assert ears is not None
    assert isinstance(ears.source, PushSource)


def _one_round(results: list[ListenResult], consumer: object = None) -> None:
    """A listener of fakes hears one request after a manual wake; its results go to
    ``results`` (through ``consumer`` when one is given)."""
    speech = np.concatenate(
        [np.zeros(8000, np.int16), np.full(16000, 5000, np.int16), np.zeros(40000, np.int16)]
    )
    done = threading.Event()

    def take(result: ListenResult) -> None:
        results.append(result)
        if isinstance(result, RoundReport):
            done.set()
        if callable(consumer):
            consumer(result)

    listener = Listener(
        FakeSource(speech, reason=None), config=ListenConfig(wake_word=False, turn="silence"),
        recognizer=FakeRecognizer(["wave at me"], confidence=0.8), vad=FakeVad(), results=take,
    )  # fmt: skip
    listener.wake()
    listener.start()
    try:
        assert done.wait(10)
    finally:
        listener.stop()


def test_one_round_is_one_stream_of_typed_results_in_order() -> None:
    results: list[ListenResult] = []
    _one_round(results)
    kinds = [type(r).__name__ for r in results]
    assert kinds[:2] == ["WakeDetected", "RecordingStart"]
    assert kinds[-2:] == ["Transcript", "RoundReport"]
    final = results[-2]
    assert isinstance(final, Transcript)
    assert final.final
    assert (final.text, final.confidence) == ("wave at me", 0.8)
    assert all(isinstance(r, Transcript) and not r.final for r in results[2:-2])
    assert [is_wire_event(r) for r in results] == [
        not isinstance(r, RecordingStart | RoundReport) for r in results
    ]
    assert isinstance(results[0], WakeDetected)
    assert results[0].source == "manual"


def test_a_consumer_that_raises_does_not_end_the_listener(
    caplog: pytest.LogCaptureFixture,
) -> None:
    results: list[ListenResult] = []

    def broken(result: ListenResult) -> None:
        if isinstance(result, WakeDetected | RecordingStart):
            raise RuntimeError("a consumer's bug")

    with caplog.at_level(logging.ERROR, logger="anima.listening"):
        _one_round(results, broken)
    assert isinstance(results[-1], RoundReport)  # the round went on to its end
    assert "the consumer of WakeDetected failed" in caplog.text
    assert "the consumer of RecordingStart failed" in caplog.text


def test_a_notice_goes_up_the_stream_as_a_result() -> None:
    results: list[ListenResult] = []
    notice = Notice(t=0.0, source="listen", message="x")
    timeout = ListenTimeout(t=0.0, reason="no_speech")
    assert is_wire_event(notice)
    assert is_wire_event(timeout)
    listener = make_listener(
        ListenConfig(wake_word=False, vad="auto"), PushSource(), phrases=["wave"],
        results=results.append,
    )  # fmt: skip
    assert listener is not None
    listener._notice("Silero VAD unavailable: using the energy VAD")
    message = "Silero VAD unavailable: using the energy VAD"
    assert results == [Notice(t=results[0].t, source="listen", message=message)]


def test_capabilities_are_declared_and_checked_by_type() -> None:
    fake = FakeRecognizer(["wave"])
    assert isinstance(fake, Rereads)
    assert not isinstance(fake, Weighs)
    sphinx = PocketsphinxAsr(phrases=["wave"])
    assert not isinstance(sphinx, Rereads)
    assert not isinstance(sphinx, Weighs)
    assert sphinx.alternatives == ()
    assert sphinx.confidence is None
    assert isinstance(make_turn("cues"), GatedTurn)
    assert isinstance(CuesTurn(), GatedTurn)
    assert not isinstance(SilenceTurn(0.8), GatedTurn)
    assert not isinstance(FakeTurn(), GatedTurn)


def test_whisper_rereads_and_weighs() -> None:
    pytest.importorskip("ctranslate2")
    from anima.listening.whisper.asr import WhisperAsr

    whisper = WhisperAsr()  # constructed, not loaded
    assert isinstance(whisper, Rereads)
    assert isinstance(whisper, Weighs)
