"""Azure Speech: cloud neural TTS with viseme events, configured as Nadine's AzureTTS.

Key and region come from ``AZURE_SERVICE_KEY`` / ``AZURE_SERVICE_REGION``, in the environment or
a ``.env`` file (the environment wins). Each utterance is one SSML request: voice
``en-US-JennyMultilingualV2Neural`` (one multilingual voice for every language, unless a
per-locale map says otherwise), prosody rate -10 %, style *whisper* at degree 1, and visemes of
type ``redlips_front``. Azure streams the audio and sends viseme ids 0–21 with offsets in 100-ns
ticks; they become :class:`~anima.speech.base.VisemeMark` s in samples on the chunks they fall in.

Requests are serialized with a lock and tagged with a generation number: a new request supersedes
the one in flight (which stops), and events still arriving for a superseded request are
discarded. If the first audio does not come in time, the synthesizer is recreated and the request
retried once.

The SSML and the credentials are in :mod:`anima.speech.azure.wire`. The SDK
(``azure-cognitiveservices-speech``, extra ``azure``) is imported only when the engine loads, and
sits behind the small :class:`~anima.speech.azure.sdk.Synthesizer` interface so tests can inject a
fake.
"""

from __future__ import annotations

import functools
import logging
import os
import queue
import threading
import time
from collections.abc import Generator, Iterator, Mapping
from pathlib import Path

import numpy as np

from anima.errors import SpeechError
from anima.speech.azure.sdk import (
    AudioData,
    Synthesizer,
    SynthesizerFactory,
    SynthEvent,
    Viseme,
)
from anima.speech.azure.wire import (
    DEFAULT_VOICE,
    AzureCredentials,
    build_ssml,
    load_credentials,
    ticks_to_samples,
)
from anima.speech.base import AudioChunk, Cancel, VisemeMark
from anima.speech.text import check_text, speakable

logger = logging.getLogger(__name__)

_POLL_S = 0.01  # how often a wait for audio looks at the cancel flag


class _FirstAudioTimeoutError(Exception):
    """No audio came in time: recreate the synthesizer and retry (once)."""


class AzureEngine:
    """A :class:`~anima.speech.base.TTSEngine` on Azure Speech, with viseme marks.

    ``voices`` maps a locale (``de-DE``) or a language (``de``) to a voice; other locales use
    ``default_voice`` (``None``: only mapped locales are supported). ``environ`` and ``env_file``
    say where the key and region are read from (default: ``os.environ``, then ``./.env``).
    The constructor touches nothing; :meth:`load` reads the credentials and connects.
    """

    name = "azure"

    def __init__(
        self,
        *,
        voices: Mapping[str, str] | None = None,
        default_voice: str | None = DEFAULT_VOICE,
        rate: str = "-10%",  # prosody rate, as SSML writes it
        style: str = "whisper",  # mstts:express-as style
        style_degree: float = 1.0,  # 0.01–2: how strongly the style is applied
        viseme_type: str = "redlips_front",
        sample_rate: int = 24000,  # Hz; Azure's raw 16-bit mono PCM at 16, 24 or 48 kHz
        environ: Mapping[str, str] | None = None,
        env_file: str | Path | None = ".env",
        synthesizer_factory: SynthesizerFactory | None = None,
        first_audio_timeout_s: float = 5.0,  # then recreate the synthesizer and retry once
        chunk_timeout_s: float = 10.0,  # a stall after the first audio fails the utterance
    ) -> None:
        if sample_rate not in (16000, 24000, 48000):
            raise ValueError(f"sample_rate must be 16000, 24000 or 48000 Hz, got {sample_rate}")
        if not 0.01 <= style_degree <= 2.0:
            raise ValueError(f"style_degree must be in [0.01, 2], got {style_degree}")
        if first_audio_timeout_s <= 0 or chunk_timeout_s <= 0:
            raise ValueError("timeouts must be positive")
        self._voices = {_norm(k): v for k, v in (voices or {}).items()}
        self._default_voice = default_voice
        self._ssml = {"rate": rate, "style": style, "viseme_type": viseme_type}
        self._style_degree = style_degree
        self.sample_rate = sample_rate
        self._environ = environ
        self._env_file = env_file
        self._factory = synthesizer_factory
        self._first_timeout = first_audio_timeout_s
        self._chunk_timeout = chunk_timeout_s
        self._lock = threading.Lock()  # serializes the synthesizer: start, stop, recreate
        self._credentials: AzureCredentials | None = None
        self._synth: Synthesizer | None = None
        self._generation = 0  # the request whose events are wanted; others' are discarded
        self._busy = False  # a request is in flight on the synthesizer

    def voice_for(self, locale: str) -> str:
        key = _norm(locale)
        voice = self._voices.get(key) or self._voices.get(key.split("-")[0]) or self._default_voice
        if voice is None:
            raise SpeechError(f"azure: no voice configured for {locale!r}")
        return voice

    def supports(self, locale: str) -> bool:
        try:
            self.voice_for(locale)
        except SpeechError:
            return False
        return True

    def load(self) -> None:
        """Read the credentials and create the synthesizer (once)."""
        with self._lock:
            if self._synth is None:
                environ = os.environ if self._environ is None else self._environ
                self._credentials = load_credentials(environ, self._env_file)
                self._synth = self._new_synthesizer()

    def close(self) -> None:
        with self._lock:
            self._generation += 1
            if self._synth is not None:
                self._synth.close()
                self._synth = None

    def _new_synthesizer(self) -> Synthesizer:
        assert self._credentials is not None
        if self._factory is None:
            from anima.speech.azure.sdk import SdkSynthesizer

            return SdkSynthesizer(self._credentials, self.sample_rate)
        return self._factory(self._credentials, self.sample_rate)

    def synthesize(self, text: str, locale: str, cancel: Cancel) -> Iterator[AudioChunk]:
        check_text(self.name, text)  # before any request: the service bounds text too
        voice = self.voice_for(locale)
        ssml = build_ssml(
            speakable(text),
            locale=locale,
            voice=voice,
            style_degree=self._style_degree,
            **self._ssml,
        )
        self.load()
        for attempt in (1, 2):
            events: queue.Queue[SynthEvent] = queue.Queue()
            generation = self._begin(ssml, events)
            finished = False
            try:
                finished = yield from self._stream(events, generation, cancel)
                return
            except _FirstAudioTimeoutError:
                if attempt == 2:
                    raise SpeechError(
                        f"azure: no audio within {self._first_timeout:g} s, twice"
                    ) from None
                logger.warning("azure: no first audio in time; recreating the synthesizer")
                self._recreate(generation)
            finally:
                self._end(generation, stop=not finished)

    def _begin(self, ssml: str, events: queue.Queue[SynthEvent]) -> int:
        with self._lock:
            if self._synth is None:
                raise SpeechError("azure: the engine was closed")
            if self._busy:
                self._synth.stop()  # supersede the request in flight
            self._busy = True
            self._generation += 1
            generation = self._generation
            self._synth.speak(ssml, functools.partial(self._deliver, generation, events))
            return generation

    def _deliver(self, generation: int, events: queue.Queue[SynthEvent], event: SynthEvent) -> None:
        if generation != self._generation:
            logger.debug("azure: discarding %s from superseded request %d", event, generation)
            return
        events.put(event)

    def _end(self, generation: int, *, stop: bool) -> None:
        with self._lock:
            if generation == self._generation:
                self._generation += 1  # late events of this request are now stale
                if stop and self._synth is not None:
                    self._synth.stop()
                self._busy = False

    def _recreate(self, generation: int) -> None:
        with self._lock:
            if generation == self._generation and self._synth is not None:
                self._generation += 1
                self._busy = False
                self._synth.close()
                self._synth = self._new_synthesizer()

    def _stream(
        self, events: queue.Queue[SynthEvent], generation: int, cancel: Cancel
    ) -> Generator[AudioChunk, None, bool]:
        """Yield the request's chunks; True once Azure says it finished, False if cut short."""
        offset = 0  # samples yielded so far
        got_audio = False
        pending: list[VisemeMark] = []  # visemes not yet inside a yielded chunk
        carry = b""  # an odd trailing byte, kept for the next chunk
        deadline = time.monotonic() + self._first_timeout
        while not cancel.is_set and generation == self._generation:
            remaining = deadline - time.monotonic()
            if remaining <= 0 and not got_audio:
                raise _FirstAudioTimeoutError
            if remaining <= 0:
                raise SpeechError(f"azure: audio stalled for {self._chunk_timeout:g} s")
            try:
                event = events.get(timeout=min(_POLL_S, remaining))
            except queue.Empty:
                continue
            if isinstance(event, Viseme):
                mark = ticks_to_samples(event.audio_offset_ticks, self.sample_rate)
                pending.append(VisemeMark(event.viseme_id, mark))
            elif isinstance(event, AudioData):
                data = carry + event.data
                carry = data[len(data) & ~1 :]
                samples = np.frombuffer(data[: len(data) & ~1], dtype="<i2").astype(np.int16)
                end = offset + len(samples)
                inside = tuple(v for v in pending if v.offset < end)
                pending = [v for v in pending if v.offset >= end]
                yield AudioChunk(samples, self.sample_rate, visemes=inside)
                offset, got_audio = end, True
                deadline = time.monotonic() + self._chunk_timeout
            else:
                if event.error is not None:
                    raise SpeechError(f"azure: synthesis cancelled: {event.error}")
                if pending:  # visemes past the last sample: deliver them all the same
                    empty = np.zeros(0, dtype=np.int16)
                    yield AudioChunk(empty, self.sample_rate, visemes=tuple(pending))
                return True
        return False


def _norm(locale: str) -> str:
    return locale.replace("_", "-").lower()
