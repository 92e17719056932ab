"""The scripted realtime server's ears: server VAD and transcription of the microphone audio a
client appends, for tests and ``anima bench realtime`` (a person talking over the robot).

:class:`ServerEars` is given to :class:`~anima.testing.realtime_server.ScriptedRealtimeServer`
(``hear=``) and reads every ``input_audio_buffer.append`` (PCM16 at 24 kHz): each 10 ms whose
level is over ``threshold_dbfs`` is voiced. The first voiced 10 ms is ``speech_started``
(``audio_start_ms`` where it began in the appended audio); ``silence_ms`` of silence after the
voice is ``speech_stopped``, then the turn's transcript (``completed``). What the person says
is scripted (``words``, one entry per turn, consumed in order): with ``stream_words`` each word
is sent as a ``…input_audio_transcription.delta`` at the end of its voiced stretch (a pause of
``word_gap_ms``: a streaming recognizer that reads each word as it ends), else only the
completed transcript (OpenAI transcribes after the turn is committed). No model: the level is
the VAD, and the words are what the script says was said.
"""

from __future__ import annotations

import base64
import itertools
import threading
import time
from collections import deque
from collections.abc import Iterable
from typing import Any

import numpy as np

RATE = 24_000  # Hz: what OpenAI's protocol appends
_items = itertools.count(1)


class ServerEars:
    """Energy VAD and scripted words on appended audio (see the module docstring)."""

    def __init__(
        self,
        words: Iterable[str] = (),
        *,
        threshold_dbfs: float = -40.0,
        silence_ms: int = 200,
        word_gap_ms: int = 50,
        stream_words: bool = True,
        rate: int = RATE,
    ) -> None:
        self._step = rate // 100  # 10 ms of samples at the audio's rate
        self._turns: deque[str] = deque(words)
        self.threshold = 32768.0 * 10 ** (threshold_dbfs / 20)
        self.silence_ms, self.word_gap_ms = silence_ms, word_gap_ms
        self.stream_words = stream_words
        self._lock = threading.Lock()
        self._tail = np.zeros(0, np.int16)  # samples short of a whole 10 ms
        self._ms = 0  # appended audio so far, in 10 ms steps
        self._voiced = False  # in a voice (speech_started sent)
        self._quiet_ms = 0  # silence since the voice's last voiced 10 ms
        self._word_sent = True  # the current voiced stretch's word was sent
        self._item = ""
        self._words: list[str] = []  # the current turn's words not yet sent
        self._said = ""  # the current turn's whole text
        self.started_ms: list[int] = []  # audio_start_ms of each voice

    @property
    def voiced(self) -> bool:
        """A voice is going on (``speech_started`` sent, ``speech_stopped`` not yet)."""
        with self._lock:
            return self._voiced

    def say(self, *turns: str) -> None:
        """More turns of words, in order."""
        with self._lock:
            self._turns.extend(turns)

    def __call__(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """The server's replies to one client event (only appends are heard)."""
        if event.get("type") != "input_audio_buffer.append":
            return []
        audio = event.get("audio")
        if not isinstance(audio, str):
            return []
        return self.hear_pcm(base64.b64decode(audio))

    def hear_pcm(self, data: bytes) -> list[dict[str, Any]]:
        """The replies (OpenAI's events) to ``data``, PCM16 at the ears' rate."""
        pcm = np.frombuffer(data, dtype="<i2")
        out: list[dict[str, Any]] = []
        n = self._step
        with self._lock:
            samples = np.concatenate([self._tail, pcm])
            whole = len(samples) // n * n
            self._tail = samples[whole:].copy()
            for start in range(0, whole, n):
                window = samples[start : start + n].astype(np.float64)
                self._ms += 10
                out += self._window(float(np.sqrt(np.mean(window**2))) > self.threshold)
        return out

    def _window(self, voiced: bool) -> list[dict[str, Any]]:
        if voiced:
            out = [] if self._voiced else self._start()
            self._quiet_ms, self._word_sent = 0, False
            return out
        if not self._voiced:
            return []
        self._quiet_ms += 10
        out = []
        if not self._word_sent and self._quiet_ms >= self.word_gap_ms:
            self._word_sent = True
            if self.stream_words and self._words:
                word = self._words.pop(0)
                out.append(self._heard("delta", delta=word + " "))
        if self._quiet_ms >= self.silence_ms:
            out += self._stop()
        return out

    def _start(self) -> list[dict[str, Any]]:
        self._voiced = True
        self._item = f"item_in{next(_items)}"
        self._said = self._turns.popleft() if self._turns else ""
        self._words = self._said.split()
        at = self._ms - 10
        self.started_ms.append(at)
        return [
            {
                "type": "input_audio_buffer.speech_started",
                "audio_start_ms": at,
                "item_id": self._item,
            }
        ]

    def _stop(self) -> list[dict[str, Any]]:
        self._voiced = False
        end = self._ms - self._quiet_ms
        out: list[dict[str, Any]] = [
            {
                "type": "input_audio_buffer.speech_stopped",
                "audio_end_ms": end,
                "item_id": self._item,
            },
            {"type": "input_audio_buffer.committed", "item_id": self._item},
        ]
        if self.stream_words and self._words:
            out.append(self._heard("delta", delta=" ".join(self._words)))
        elif not self.stream_words and self._said:
            out.append(self._heard("delta", delta=self._said))
        self._words = []
        out.append(self._heard("completed", transcript=self._said))
        return out

    def _heard(self, what: str, **fields: str) -> dict[str, Any]:
        return {
            "type": f"conversation.item.input_audio_transcription.{what}",
            "item_id": self._item,
            "content_index": 0,
            **fields,
        }


class GeminiEars(ServerEars):
    """The same ears on Gemini Live's microphone (``realtimeInput`` at 16 kHz), answering as
    Google's server does when the model's answer was already sent whole: the person's words
    as ``serverContent.inputTranscription.text`` (each word at the end of its voiced stretch,
    with ``stream_words``), and nothing for the voice itself (the Live API reports none; with
    nothing to interrupt, no ``interrupted``). ``heard_at``: ``time.monotonic()`` of each
    transcript sent."""

    def __init__(self, words: Iterable[str] = (), **settings: Any) -> None:
        super().__init__(words, rate=16_000, **settings)
        self.heard_at: list[float] = []

    def __call__(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        body = event.get("realtimeInput")
        audio = body.get("audio") if isinstance(body, dict) else None
        data = audio.get("data") if isinstance(audio, dict) else None
        if not isinstance(data, str):
            return []
        out: list[dict[str, Any]] = []
        for reply in self.hear_pcm(base64.b64decode(data)):
            if reply["type"] == "conversation.item.input_audio_transcription.delta":
                out.append({"serverContent": {"inputTranscription": {"text": reply["delta"]}}})
                self.heard_at.append(time.monotonic())
        return out
