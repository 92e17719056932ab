"""The seam between :class:`~anima.speech.azure.azure.AzureEngine` and Azure's Speech SDK.

The engine sees only :class:`Synthesizer`: ``speak(ssml, on_event)`` starts a request and events
come back (audio bytes, visemes, the end), from any thread. :class:`SdkSynthesizer` is the real
one on ``azure-cognitiveservices-speech`` (extra ``azure``, imported when it is created); tests
inject a fake through ``AzureEngine(synthesizer_factory=...)`` and never touch the network.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from anima.errors import MissingDependencyError
from anima.speech.azure.wire import AzureCredentials

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class AudioData:
    data: bytes  # little-endian int16 mono PCM at the engine's sample rate


@dataclass(frozen=True)
class Viseme:
    viseme_id: int  # 0–21
    audio_offset_ticks: int  # from the start of the request's audio, in 100 ns


@dataclass(frozen=True)
class Finished:
    error: str | None = None  # None: completed; else why Azure cancelled the request


SynthEvent = AudioData | Viseme | Finished
EventCallback = Callable[[SynthEvent], None]


class Synthesizer(Protocol):
    """What the engine needs from Azure."""

    def speak(self, ssml: str, on_event: EventCallback) -> None:
        """Start a request and return at once; ``on_event`` is called from any thread."""
        ...

    def stop(self) -> None:
        """Stop the request in flight, if any; do not wait for it."""
        ...

    def close(self) -> None: ...


SynthesizerFactory = Callable[[AzureCredentials, int], Synthesizer]  # (credentials, sample rate)

_FORMATS = {
    16000: "Raw16Khz16BitMonoPcm",
    24000: "Raw24Khz16BitMonoPcm",
    48000: "Raw48Khz16BitMonoPcm",
}


class SdkSynthesizer:
    """:class:`Synthesizer` on the Azure Speech SDK: raw PCM, no local playback.

    The SDK's signals are connected once; each event names its request (``result_id``), and is
    routed to the callback of the request it belongs to. The first event with a new id belongs to
    the latest ``speak``; events of older requests go to their own (stale) callbacks or nowhere.
    """

    def __init__(self, credentials: AzureCredentials, sample_rate: int) -> None:
        try:
            import azure.cognitiveservices.speech as sdk
        except ImportError as exc:
            raise MissingDependencyError("azure-cognitiveservices-speech", "azure") from exc
        config = sdk.SpeechConfig(subscription=credentials.key, region=credentials.region)
        output_format = getattr(sdk.SpeechSynthesisOutputFormat, _FORMATS[sample_rate])
        config.set_speech_synthesis_output_format(output_format)
        # audio_config=None: the audio comes to us in events; the SDK plays nothing itself
        self._synth: Any = sdk.SpeechSynthesizer(speech_config=config, audio_config=None)
        self._lock = threading.Lock()
        self._next: EventCallback | None = None  # the callback of the latest speak()
        self._current: tuple[str, EventCallback] | None = None  # (result id, callback)
        self._old: collections.deque[tuple[str, EventCallback]] = collections.deque(maxlen=8)
        s = self._synth
        s.synthesizing.connect(
            lambda e: self._emit(e.result.result_id, AudioData(e.result.audio_data))
        )
        s.viseme_received.connect(
            lambda e: self._emit(e.result_id, Viseme(e.viseme_id, e.audio_offset))
        )
        s.synthesis_completed.connect(lambda e: self._emit(e.result.result_id, Finished()))
        s.synthesis_canceled.connect(lambda e: self._emit(e.result.result_id, _cancelled(e)))
        try:  # open the connection now, so the first utterance does not pay for it
            sdk.Connection.from_speech_synthesizer(s).open(True)
        except Exception as exc:
            logger.warning("azure: could not pre-connect (%s); the first request will", exc)

    def speak(self, ssml: str, on_event: EventCallback) -> None:
        with self._lock:
            self._next = on_event
        self._synth.start_speaking_ssml_async(ssml)

    def stop(self) -> None:
        self._synth.stop_speaking_async()

    def close(self) -> None:
        for signal in (
            "synthesizing",
            "viseme_received",
            "synthesis_completed",
            "synthesis_canceled",
        ):
            getattr(self._synth, signal).disconnect_all()
        self._synth.stop_speaking_async()

    def _emit(self, result_id: str, event: SynthEvent) -> None:
        with self._lock:
            callback = self._route(result_id)
        if callback is not None:
            callback(event)

    def _route(self, result_id: str) -> EventCallback | None:
        if self._current is not None and self._current[0] == result_id:
            return self._current[1]
        for old_id, old_callback in self._old:
            if old_id == result_id:
                return old_callback
        if self._next is None:
            return None  # an event of a request we no longer know: nobody wants it
        if self._current is not None:
            self._old.append(self._current)
        self._current, self._next = (result_id, self._next), None
        return self._current[1]


def _cancelled(event: Any) -> Finished:
    details = event.result.cancellation_details
    return Finished(f"{details.reason}: {details.error_details}")
