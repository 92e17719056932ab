"""Mouth shapes a server sends beside the model's audio, handed to its voice stream as marks.

Neither event is OpenAI's; two servers of its protocol add one each, with Microsoft's 22
viseme ids (0 silence … 21 p/b/m, :data:`anima.speech.visemes.AZURE` maps them to anima's
classes) timed from the start of the *response's* audio::

    response.animation_viseme.delta           Azure (Voice Live): one viseme per event,
        {response_id, item_id, output_index, content_index, audio_offset_ms, viseme_id}
    speech_to_speech.output_audio.visemes     Hugging Face speech-to-speech: a batch,
        {response_id, item_id, output_index, content_index,
         visemes: [{viseme, start_s, end_s}, …]}

Sources: Microsoft Learn, ``VoiceAgentServerEventResponseAnimationVisemeDelta`` (JavaScript,
@azure/ai-projects: ``audio_offset_ms`` "the audio offset, in milliseconds, at which the
viseme occurs") and ``SessionUpdateResponseAnimationVisemeDelta.AudioOffset`` (.NET,
Azure.AI.VoiceLive: "the offset in the overall response audio"); huggingface/speech-to-speech,
``src/speech_to_speech/api/openai_realtime/extension_events.py`` (the event's model) and
``src/speech_to_speech/STV/README.md`` ("Client events": seconds from the start of the
response's audio across all its items, reset for the next response; the events precede their
audio). Read December 2026.

A voice stream plays one audio item and takes marks in milliseconds from *its* first sample,
so :class:`ServerVisemes` notes where each item starts in its response's audio and subtracts
it; marks of an item whose audio has not come yet wait for its stream (bounded).
"""

from __future__ import annotations

import logging
from typing import Any, TypeGuard

from anima import commands as cmd
from anima.speech.visemes import AZURE

log = logging.getLogger(__name__)

AZURE_EVENT = "response.animation_viseme.delta"
HF_EVENT = "speech_to_speech.output_audio.visemes"
EVENTS = frozenset({AZURE_EVENT, HF_EVENT})
MAX_BATCH = 2_000  # visemes read of one event (~10 per second of speech: minutes of it)
MAX_WAITING = 4_000  # marks kept for items whose audio has not come yet
MAX_OFFSET_MS = 3_600_000  # an offset past an hour is not a response's

Mark = tuple[int, str]  # (milliseconds, a viseme class of anima.speech.visemes.LIPS)


def response_marks(event: dict[str, Any]) -> list[tuple[float, str]]:
    """The event's visemes as (ms from the response's first audio, class); what is not a
    number in range is skipped."""
    if event.get("type") == AZURE_EVENT:
        cues = [(event.get("audio_offset_ms"), event.get("viseme_id"), 1000.0)]
    else:
        batch = event.get("visemes")
        if not isinstance(batch, list):
            return []
        cues = [
            (cue.get("start_s"), cue.get("viseme"), 1.0)
            for cue in batch[:MAX_BATCH]
            if isinstance(cue, dict)
        ]
    out: list[tuple[float, str]] = []
    for at, viseme, per_s in cues:
        if not _number(at) or not isinstance(viseme, int) or isinstance(viseme, bool):
            continue
        ms = at * 1000.0 / per_s
        if 0.0 <= ms <= MAX_OFFSET_MS:
            out.append((ms, AZURE.get(viseme, "E")))  # an id past 21: a neutral open mouth
    return out


def _number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


class ServerVisemes:
    """The server's visemes onto the voice streams of their items. Not thread-safe: the
    session calls it under its lock."""

    def __init__(self) -> None:
        self._response: str | None = None  # the response whose audio is counted
        self._total_ms = 0.0  # its audio received so far
        self._starts: dict[str, float] = {}  # item → where it starts in the response's audio
        self._waiting: dict[str, list[Mark]] = {}  # item → marks before its stream opened
        self._count = 0  # marks waiting, all items
        self.handed = 0  # marks given to streams (what a test reads)

    def audio(
        self, event: dict[str, Any], ms: float, item: str, stream: cmd.VoiceStream | None
    ) -> None:
        """``ms`` of ``item``'s audio came (an audio delta, already fed to ``stream``, the
        item's stream, None when muted): its waiting marks go to the stream."""
        self._in_response(event.get("response_id"))
        self._starts.setdefault(item, self._total_ms)
        self._total_ms += ms
        waiting = self._waiting.pop(item, None)
        if waiting:
            self._count -= len(waiting)
            if stream is not None:
                stream.visemes(waiting)
                self.handed += len(waiting)

    def event(
        self, event: dict[str, Any], playing: str | None, stream: cmd.VoiceStream | None
    ) -> None:
        """A viseme event: its marks to ``stream`` if it plays their item (``playing``), else
        kept until the item's audio comes."""
        item = event.get("item_id")
        if not isinstance(item, str):
            log.debug("realtime: visemes without an item_id: skipped")
            return
        self._in_response(event.get("response_id"))
        start = self._starts.get(item, self._total_ms)  # not begun: it starts after the rest
        marks = [(round(ms - start), cls) for ms, cls in response_marks(event) if ms >= start]
        if not marks:
            return
        if item == playing and stream is not None and item in self._starts:
            stream.visemes(marks)
            self.handed += len(marks)
            return
        room = MAX_WAITING - self._count
        if room <= 0:
            return
        self._waiting.setdefault(item, []).extend(marks[:room])
        self._count += min(room, len(marks))

    def _in_response(self, response: object) -> None:
        """A new response starts its audio's time at 0 (an event without an id keeps the
        current one: Azure and HF both send it)."""
        if isinstance(response, str) and response != self._response:
            self._response = response
            self._total_ms = 0.0
            self._starts.clear()
            self._waiting.clear()
            self._count = 0
