"""AzureEngine against a fake synthesizer: SSML, credentials, visemes, timeouts, supersession.

No network: the engine is given a ``synthesizer_factory`` that builds :class:`FakeSynthesizer` s,
which play back scripted SDK events.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from anima.errors import MissingDependencyError, SpeechError
from anima.speech.azure.azure import AzureEngine
from anima.speech.azure.sdk import AudioData, Finished, SdkSynthesizer, SynthEvent, Viseme
from anima.speech.azure.wire import (
    AzureCredentials,
    build_ssml,
    load_credentials,
    read_env_file,
    ticks_to_samples,
)
from anima.speech.base import AudioChunk, Cancel, TTSEngine, VisemeMark

pytestmark = pytest.mark.fast

ENV = {"AZURE_SERVICE_KEY": "k3y", "AZURE_SERVICE_REGION": "westeurope"}
Script = Callable[["FakeSynthesizer", Callable[[SynthEvent], None]], None]


def pcm(n: int, value: int = 100) -> AudioData:
    return AudioData(np.full(n, value, dtype="<i2").tobytes())


def say(*events: SynthEvent) -> Script:
    """A script that answers every request at once with ``events``."""

    def play(_: FakeSynthesizer, on_event: Callable[[SynthEvent], None]) -> None:
        for event in events:
            on_event(event)

    return play


def silent(_: FakeSynthesizer, __: Callable[[SynthEvent], None]) -> None:
    """A script for a synthesizer that never answers (a hung connection)."""


class FakeSynthesizer:
    def __init__(self, credentials: AzureCredentials, sample_rate: int, script: Script) -> None:
        self.credentials = credentials
        self.sample_rate = sample_rate
        self.script = script
        self.ssml: list[str] = []
        self.callbacks: list[Callable[[SynthEvent], None]] = []
        self.stops = 0
        self.closed = False

    def speak(self, ssml: str, on_event: Callable[[SynthEvent], None]) -> None:
        self.ssml.append(ssml)
        self.callbacks.append(on_event)
        self.script(self, on_event)

    def stop(self) -> None:
        self.stops += 1

    def close(self) -> None:
        self.closed = True


class Factory:
    """Builds one FakeSynthesizer per call, the n-th with the n-th script (the last repeats)."""

    def __init__(self, *scripts: Script) -> None:
        self.scripts = scripts
        self.made: list[FakeSynthesizer] = []

    def __call__(self, credentials: AzureCredentials, sample_rate: int) -> FakeSynthesizer:
        script = self.scripts[min(len(self.made), len(self.scripts) - 1)]
        self.made.append(FakeSynthesizer(credentials, sample_rate, script))
        return self.made[-1]


def engine(factory: Factory, **kwargs: Any) -> AzureEngine:
    """An engine on ``factory`` with test credentials and a 50 ms first-audio timeout."""
    options: dict[str, Any] = {"environ": ENV, "env_file": None, "first_audio_timeout_s": 0.05}
    return AzureEngine(synthesizer_factory=factory, **(options | kwargs))


def speak(tts: AzureEngine, text: str = "Hello", locale: str = "en-US") -> list[AudioChunk]:
    return list(tts.synthesize(text, locale, Cancel()))


# --- SSML -------------------------------------------------------------------------------------


def test_ssml_for_a_simple_utterance() -> None:
    assert build_ssml("Hello", locale="en-US", voice="en-US-JennyMultilingualV2Neural") == (
        '<speak version="1.0" xmlns="http://www.w3.org/2001/10/synthesis" '
        'xmlns:mstts="https://www.w3.org/2001/mstts" xml:lang="en-US">'
        '<voice name="en-US-JennyMultilingualV2Neural"><mstts:viseme type="redlips_front"/>'
        '<mstts:express-as style="whisper" styledegree="1">'
        '<prosody rate="-10%">Hello</prosody>'
        "</mstts:express-as></voice></speak>"
    )


def test_ssml_escapes_text() -> None:
    text = """Tom & Jerry say "<hi>" and 'bye'"""
    ssml = build_ssml(text, locale="en-US", voice="v")
    assert "Tom &amp; Jerry say &quot;&lt;hi&gt;&quot; and &apos;bye&apos;" in ssml
    root = ET.fromstring(ssml)  # well-formed, and the text comes back intact
    assert "".join(root.itertext()) == text


def test_ssml_escapes_attributes() -> None:
    ssml = build_ssml("x", locale='en"US', voice="a<b>&c")
    assert 'xml:lang="en&quot;US"' in ssml
    assert 'name="a&lt;b&gt;&amp;c"' in ssml
    ET.fromstring(ssml)


def test_voice_and_locale_mapping() -> None:
    factory = Factory(say(pcm(10), Finished()))
    tts = engine(factory, voices={"de-DE": "de-DE-KatjaNeural", "fr": "fr-FR-DeniseNeural"})
    assert tts.voice_for("de-DE") == "de-DE-KatjaNeural"
    assert tts.voice_for("de_de") == "de-DE-KatjaNeural"
    assert tts.voice_for("fr-CA") == "fr-FR-DeniseNeural"  # by language
    assert tts.voice_for("es-ES") == "en-US-JennyMultilingualV2Neural"  # the multilingual default

    speak(tts, "Guten Tag", "de-DE")
    (ssml,) = factory.made[0].ssml
    assert 'xml:lang="de-DE"' in ssml
    assert '<voice name="de-DE-KatjaNeural">' in ssml
    assert ">Guten Tag</prosody>" in ssml


def test_without_default_voice_only_mapped_locales_are_supported() -> None:
    tts = engine(Factory(silent), voices={"de-DE": "de-DE-KatjaNeural"}, default_voice=None)
    assert tts.supports("de-DE")
    assert not tts.supports("en-US")
    with pytest.raises(SpeechError, match="no voice configured for 'en-US'"):
        speak(tts)


# --- credentials ------------------------------------------------------------------------------


def test_credentials_from_the_environment() -> None:
    creds = load_credentials(ENV, None)
    assert (creds.key, creds.region) == ("k3y", "westeurope")
    assert "k3y" not in repr(creds)


def test_credentials_from_a_dotenv_file(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text(
        "# Azure\n"
        "export AZURE_SERVICE_KEY='abc=123'\n"
        "\n"
        "AZURE_SERVICE_REGION = westeurope  # the region\n"
        "OTHER\n",
        encoding="utf-8",
    )
    assert read_env_file(env_file) == {
        "AZURE_SERVICE_KEY": "abc=123",
        "AZURE_SERVICE_REGION": "westeurope",
    }
    creds = load_credentials({}, env_file)
    assert (creds.key, creds.region) == ("abc=123", "westeurope")
    # the environment wins over the file
    assert load_credentials({"AZURE_SERVICE_REGION": "eastus"}, env_file).region == "eastus"


def test_engine_reads_the_dotenv_file(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text('AZURE_SERVICE_KEY="s3cret"\nAZURE_SERVICE_REGION=eastus\n', "utf-8")
    factory = Factory(say(pcm(10), Finished()))
    speak(engine(factory, environ={}, env_file=env_file))
    assert factory.made[0].credentials == AzureCredentials(key="s3cret", region="eastus")
    assert factory.made[0].sample_rate == 24000


def test_missing_credentials_name_the_variables(tmp_path: Path) -> None:
    assert read_env_file(tmp_path / "absent.env") == {}
    with pytest.raises(SpeechError) as info:
        load_credentials({"AZURE_SERVICE_REGION": "x"}, tmp_path / "absent.env")
    message = str(info.value)
    assert "AZURE_SERVICE_KEY" in message
    assert "AZURE_SERVICE_REGION" in message
    assert "missing: AZURE_SERVICE_KEY)" in message
    assert "absent.env" in message
    factory = Factory(silent)
    with pytest.raises(SpeechError, match="missing: AZURE_SERVICE_KEY, AZURE_SERVICE_REGION"):
        speak(engine(factory, environ={}))
    assert factory.made == []


# --- audio and visemes ------------------------------------------------------------------------


def test_is_a_tts_engine_and_constructor_touches_nothing() -> None:
    factory = Factory(silent)
    tts = engine(factory, environ={})
    assert isinstance(tts, TTSEngine)
    assert tts.supports("en-US")
    assert factory.made == []


@pytest.mark.parametrize(
    ("ticks", "rate", "samples"),
    [(0, 24000, 0), (10_000_000, 24000, 24000), (500_000, 24000, 1200), (1_250_000, 16000, 2000)],
)
def test_ticks_to_samples(ticks: int, rate: int, samples: int) -> None:
    assert ticks_to_samples(ticks, rate) == samples


def test_ticks_to_samples_rounds_to_nearest() -> None:
    assert ticks_to_samples(625, 24000) == 2  # 1.5 samples
    assert ticks_to_samples(624, 24000) == 1


def test_visemes_ride_on_the_chunks_they_fall_in() -> None:
    factory = Factory(
        say(
            Viseme(0, 0),
            Viseme(21, 250_000),  # 25 ms: sample 600 at 24 kHz
            pcm(1000),
            Viseme(6, 500_000),  # 1200: in the second chunk
            pcm(1000),
            Viseme(4, 900_000),  # 2160: past the last sample
            Finished(),
        )
    )
    chunks = speak(engine(factory))
    assert [len(c.samples) for c in chunks] == [1000, 1000, 0]
    assert all(c.sample_rate == 24000 and c.samples.dtype == np.int16 for c in chunks)
    assert chunks[0].visemes == (VisemeMark(0, 0), VisemeMark(21, 600))
    assert chunks[1].visemes == (VisemeMark(6, 1200),)
    assert chunks[2].visemes == (VisemeMark(4, 2160),)
    assert int(chunks[0].samples[0]) == 100


def test_odd_byte_is_carried_to_the_next_chunk() -> None:
    data = np.array([1, -2], dtype="<i2").tobytes()
    factory = Factory(say(AudioData(data[:3]), AudioData(data[3:]), Finished()))
    chunks = speak(engine(factory))
    assert np.concatenate([c.samples for c in chunks]).tolist() == [1, -2]


def test_azure_cancellation_is_a_speech_error() -> None:
    factory = Factory(say(Finished("CancellationReason.Error: 401 Unauthorized")))
    with pytest.raises(SpeechError, match="401 Unauthorized"):
        speak(engine(factory))


def test_cancel_stops_the_request() -> None:
    factory = Factory(say(pcm(10), pcm(10), pcm(10), Finished()))
    cancel = Cancel()
    tts = engine(factory)
    got = []
    for chunk in tts.synthesize("Hello", "en-US", cancel):
        got.append(chunk)
        cancel.set()
    assert len(got) == 1
    assert factory.made[0].stops == 1


# --- timeouts and supersession ----------------------------------------------------------------


def test_first_audio_timeout_recreates_the_synthesizer_and_retries_once() -> None:
    factory = Factory(silent, say(Viseme(1, 0), pcm(10), Finished()))
    chunks = speak(engine(factory))
    assert len(factory.made) == 2
    assert factory.made[0].closed
    assert factory.made[0].ssml == factory.made[1].ssml  # the same request again
    assert chunks[0].visemes == (VisemeMark(1, 0),)


def test_a_second_timeout_is_a_speech_error() -> None:
    factory = Factory(silent, silent)
    with pytest.raises(SpeechError, match=r"no audio within 0\.05 s, twice"):
        speak(engine(factory))
    assert len(factory.made) == 2


def test_a_stall_after_the_first_audio_is_a_speech_error() -> None:
    factory = Factory(say(pcm(10)))
    tts = engine(factory, chunk_timeout_s=0.05)
    with pytest.raises(SpeechError, match="stalled"):
        speak(tts)
    assert len(factory.made) == 1  # no retry once audio has been heard


def test_events_of_a_superseded_request_are_discarded() -> None:
    def script(fake: FakeSynthesizer, on_event: Callable[[SynthEvent], None]) -> None:
        if len(fake.callbacks) == 1:  # request A: one chunk, then it keeps going
            on_event(Viseme(3, 0))
            on_event(pcm(100))
            return
        stale = fake.callbacks[0]  # request B: late events of A arrive first
        stale(Viseme(9, 0))
        stale(pcm(7))
        stale(Finished())
        on_event(Viseme(2, 0))
        on_event(pcm(50))
        on_event(Finished())

    factory = Factory(script)
    tts = engine(factory)
    first = tts.synthesize("A", "en-US", Cancel())
    assert next(first).visemes == (VisemeMark(3, 0),)

    second = speak(tts, "B")
    assert [c.visemes for c in second] == [(VisemeMark(2, 0),)]
    assert [len(c.samples) for c in second] == [50]
    assert factory.made[0].stops == 1  # A was stopped when B began
    assert list(first) == []  # A ends quietly: it was superseded


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "azure.cognitiveservices.speech", None)
    with pytest.raises(MissingDependencyError, match=r"azure-cognitiveservices-speech.*\[azure\]"):
        SdkSynthesizer(AzureCredentials(key="k", region="r"), 24000)
    tts = AzureEngine(environ=ENV, env_file=None)
    with pytest.raises(MissingDependencyError):
        speak(tts)


# --- the SDK adapter, on a stand-in for the SDK module -----------------------------------------


class _Signal:
    def __init__(self) -> None:
        self.callbacks: list[Callable[[Any], None]] = []

    def connect(self, callback: Callable[[Any], None]) -> None:
        self.callbacks.append(callback)

    def disconnect_all(self) -> None:
        self.callbacks.clear()

    def fire(self, event: Any) -> None:
        for callback in list(self.callbacks):
            callback(event)


class _SdkSynthesizer:
    """Plays the SDK's SpeechSynthesizer: signals, start/stop; answers each request at once."""

    def __init__(self, speech_config: Any, audio_config: Any) -> None:
        assert audio_config is None  # nothing is played by the SDK itself
        self.config = speech_config
        self.synthesizing, self.viseme_received = _Signal(), _Signal()
        self.synthesis_completed, self.synthesis_canceled = _Signal(), _Signal()
        self.started: list[str] = []
        self.stopped = 0
        self.auto_answer = True

    def start_speaking_ssml_async(self, ssml: str) -> None:
        self.started.append(ssml)
        if self.auto_answer:
            rid = f"r{len(self.started)}"
            self.viseme_received.fire(SimpleNamespace(result_id=rid, viseme_id=5, audio_offset=0))
            self.synthesizing.fire(_result(rid, audio_data=b"\x01\x00\x02\x00"))
            self.synthesis_completed.fire(_result(rid))

    def stop_speaking_async(self) -> None:
        self.stopped += 1


def _result(result_id: str, **fields: Any) -> SimpleNamespace:
    return SimpleNamespace(result=SimpleNamespace(result_id=result_id, **fields))


def _speech_config(subscription: str, region: str) -> SimpleNamespace:
    config = SimpleNamespace(key=subscription, region=region, format=None)
    config.set_speech_synthesis_output_format = lambda f: setattr(config, "format", f)
    return config


@pytest.fixture
def fake_sdk(monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    """Stands in for ``azure.cognitiveservices.speech``: what SdkSynthesizer uses of it."""
    sdk = SimpleNamespace(
        SpeechConfig=_speech_config,
        SpeechSynthesisOutputFormat=SimpleNamespace(
            Raw16Khz16BitMonoPcm="raw16", Raw24Khz16BitMonoPcm="raw24", Raw48Khz16BitMonoPcm="raw48"
        ),
        SpeechSynthesizer=_SdkSynthesizer,
        Connection=SimpleNamespace(
            from_speech_synthesizer=lambda s: SimpleNamespace(open=lambda continuous: None)
        ),
    )
    cognitive = SimpleNamespace(speech=sdk)
    monkeypatch.setitem(sys.modules, "azure", SimpleNamespace(cognitiveservices=cognitive))
    monkeypatch.setitem(sys.modules, "azure.cognitiveservices", cognitive)
    monkeypatch.setitem(sys.modules, "azure.cognitiveservices.speech", sdk)
    return sdk


def test_sdk_adapter_routes_events_by_request(fake_sdk: SimpleNamespace) -> None:
    adapter = SdkSynthesizer(AzureCredentials(key="k", region="westeurope"), 24000)
    sdk_synth: _SdkSynthesizer = adapter._synth
    sdk_synth.auto_answer = False
    assert (sdk_synth.config.key, sdk_synth.config.region) == ("k", "westeurope")
    assert sdk_synth.config.format == "raw24"

    a: list[SynthEvent] = []
    b: list[SynthEvent] = []
    adapter.speak("<speak>A</speak>", a.append)
    sdk_synth.viseme_received.fire(SimpleNamespace(result_id="A", viseme_id=3, audio_offset=10))
    adapter.speak("<speak>B</speak>", b.append)
    sdk_synth.synthesizing.fire(_result("A", audio_data=b"\x00\x00"))  # late, for A
    sdk_synth.viseme_received.fire(SimpleNamespace(result_id="B", viseme_id=7, audio_offset=0))
    sdk_synth.synthesis_completed.fire(_result("A"))
    details = SimpleNamespace(reason="CancellationReason.Error", error_details="boom")
    sdk_synth.synthesis_canceled.fire(_result("B", cancellation_details=details))

    assert a == [Viseme(3, 10), AudioData(b"\x00\x00"), Finished()]
    assert b == [Viseme(7, 0), Finished("CancellationReason.Error: boom")]
    assert sdk_synth.started == ["<speak>A</speak>", "<speak>B</speak>"]

    adapter.stop()
    adapter.close()
    assert sdk_synth.stopped == 2
    assert sdk_synth.viseme_received.callbacks == []


def test_engine_on_the_sdk_adapter(fake_sdk: SimpleNamespace) -> None:
    tts = AzureEngine(environ=ENV, env_file=None, sample_rate=16000)
    chunks = speak(tts)
    assert [c.samples.tolist() for c in chunks] == [[1, 2]]
    assert chunks[0].visemes == (VisemeMark(5, 0),)
    assert chunks[0].sample_rate == 16000
    tts.close()
