"""A scripted Gemini Live server on 127.0.0.1: :class:`~anima.testing.realtime_server.
ScriptedRealtimeServer` speaking Google's Live API (``BidiGenerateContent``) instead of
OpenAI's protocol — for tests, and for trying the ``gemini_live`` brain offline.

A message's kind is its top-level key (``setup``, ``realtimeInput``, ``clientContent``,
``toolResponse``): the script maps a kind to the replies for its next occurrences, and every
client message is recorded (``wait_for("toolResponse")``). Nothing is sent on connect; a
``setup`` is answered with ``setupComplete`` unless the script says otherwise. The builders
below make the server's messages; the hostile actions (``Raw``, ``Pause``, ``Drop``,
``huge_delta``) are the OpenAI server's. ::

    call = tool_call(("play_animation", {"name": "nod"}, "c1"))
    with ScriptedGeminiServer({"clientContent": [[call]]}) as server:
        settings = GeminiLivePlannerConfig(url=server.url)
        ...
        server.wait_for("toolResponse")
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from anima.testing.realtime_server import Flavour, Reply, ScriptedRealtimeServer

PATH = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
OUTPUT_MIME = "audio/pcm;rate=24000"


def _kind(message: dict[str, Any]) -> str:
    return next(iter(message))  # a message's only top-level key (StopIteration: none)


def _default(kind: str) -> Reply:
    return [{"setupComplete": {}}] if kind == "setup" else []


GEMINI = Flavour(path=PATH, greeting=(), kind=_kind, default=_default)


class ScriptedGeminiServer(ScriptedRealtimeServer):
    """A scripted server speaking the Live API (see the module doc)."""

    def __init__(
        self,
        script: Mapping[str, Iterable[Reply]] | None = None,
        *,
        hear: Callable[[dict[str, Any]], list[dict[str, Any]]] | None = None,
    ) -> None:
        """``hear``: the server's ears (:class:`~anima.testing.realtime_ears.GeminiEars`)."""
        super().__init__(script, hear=hear, flavour=GEMINI)


def model_audio(pcm16: bytes, *, mime: str = OUTPUT_MIME) -> dict[str, Any]:
    """``serverContent`` with one part of the model's voice (24 kHz PCM16 by default)."""
    data = base64.b64encode(pcm16).decode("ascii")
    part = {"inlineData": {"mimeType": mime, "data": data}}
    return {"serverContent": {"modelTurn": {"parts": [part]}}}


def model_turn(
    *, audio: bytes = b"", transcript: str = "", chunk_ms: int = 100, complete: bool = True
) -> Reply:
    """One turn of the model: its voice in ``chunk_ms`` parts, the transcript, turnComplete."""
    reply: Reply = []
    if transcript:
        reply.append({"serverContent": {"outputTranscription": {"text": transcript}}})
    step = 24 * 2 * chunk_ms  # bytes of 24 kHz PCM16 per part
    reply.extend(model_audio(audio[i : i + step]) for i in range(0, len(audio), step))
    if complete:
        reply.append({"serverContent": {"turnComplete": True}})
    return reply


def tool_call(*calls: tuple[str, Mapping[str, Any] | Any, str]) -> dict[str, Any]:
    """``toolCall`` with the function calls ``(name, args, id)``."""
    return {
        "toolCall": {
            "functionCalls": [{"id": cid, "name": name, "args": args} for name, args, cid in calls]
        }
    }


def interrupted() -> dict[str, Any]:
    """The server's VAD heard the person over the model."""
    return {"serverContent": {"interrupted": True}}


def cancellation(*ids: str) -> dict[str, Any]:
    return {"toolCallCancellation": {"ids": list(ids)}}


def go_away(seconds: float = 50.0) -> dict[str, Any]:
    return {"goAway": {"timeLeft": f"{seconds:g}s"}}


def resumption(handle: str) -> dict[str, Any]:
    return {"sessionResumptionUpdate": {"newHandle": handle, "resumable": True}}
