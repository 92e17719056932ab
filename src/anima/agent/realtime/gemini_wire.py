"""Google's Live API wire (``BidiGenerateContent`` over a WebSocket, v1beta): the messages anima
sends and how it reads the server's.

Every message is one JSON object whose single top-level key says what it is (no ``type``
field, unlike OpenAI's). What anima sends (builders below)::

    setup            first, alone: the model (models/…), AUDIO out with the voice, the persona
                     as systemInstruction, the robot's actions as functionDeclarations
                     (parametersJsonSchema: the same schemas as ``anima mcp tools``), the
                     model's speech transcribed (outputAudioTranscription), the person's
                     too (inputAudioTranscription: the duplex rules' words), session resumption
    realtimeInput    the microphone: {audio: {mimeType: audio/pcm;rate=16000, data: base64}}
                     (anima's microphone is 16 kHz already: no resampling)
    clientContent    a typed request: a user turn, turnComplete
    toolResponse     a call's outcome: {functionResponses: [{id, name, response: {result}}]}

What it reads (:data:`KINDS`): ``setupComplete``; ``serverContent`` (``modelTurn.parts[]
.inlineData``: PCM16 at 24 kHz, ``outputTranscription.text``, ``turnComplete``, ``interrupted``,
``inputTranscription.text``: the person's words); ``toolCall`` (``functionCalls[]``: id, name,
args); ``toolCallCancellation`` (``ids``); ``goAway`` (``timeLeft``: the socket closes then);
``sessionResumptionUpdate`` (``newHandle``, ``resumable``); ``usageMetadata``. Sources:
ai.google.dev/api/live ("Live API - WebSockets API reference") and
ai.google.dev/gemini-api/docs/live-api/get-started-websocket.

Limits: a message over 4 MiB is refused at its frame's header as for OpenAI
(:data:`~anima.agent.realtime.protocol.MAX_MESSAGE_BYTES`); one inline audio part over
:data:`~anima.agent.realtime.protocol.MAX_AUDIO_DELTA_CHARS` is refused with a log line.
"""

from __future__ import annotations

import base64
import re
from typing import Any
from urllib.parse import quote

from anima.agent.actions import ActionRegistry
from anima.agent.realtime.protocol import WireError, parse_object, pcm16
from anima.agent.realtime.tools import robot_actions
from anima.wire.jsontypes import JsonObject

INPUT_RATE = 16_000  # Hz: the microphone as the Live API takes it (PCM16 mono)
OUTPUT_RATE = 24_000  # Hz: the model's voice unless its mimeType says another rate
INPUT_MIME = f"audio/pcm;rate={INPUT_RATE}"
MIN_RATE, MAX_RATE = 8_000, 48_000  # Hz: an output rate outside is refused
MAX_HEARD_CHARS = 400  # of one inputTranscription chunk, read for the duplex rules

KINDS = (
    "setupComplete",
    "serverContent",
    "toolCall",
    "toolCallCancellation",
    "goAway",
    "sessionResumptionUpdate",
    "usageMetadata",
)


def decode(message: str | bytes) -> dict[str, Any]:
    """A server message as a JSON object with at least one key; WireError saying why not."""
    event = parse_object(message)
    if not event:
        raise WireError("an empty object")
    return event


def session_url(url: str, key: str) -> str:
    """``url`` with the API key as ``?key=`` (Google takes it in the query)."""
    return f"{url}{'&' if '?' in url else '?'}key={quote(key, safe='')}"


def function_declarations(registry: ActionRegistry) -> list[JsonObject]:
    """The robot's actions as one Live API tool of function declarations."""
    declarations: list[JsonObject] = [
        {"name": a.name, "description": a.summary, "parametersJsonSchema": a.parameters_schema()}
        for a in robot_actions(registry)
    ]
    return [{"functionDeclarations": declarations}]


def setup(
    *,
    model: str,
    instructions: str,
    voice: str,
    tools: list[JsonObject],
    resume: str | None = None,
) -> JsonObject:
    """The first message: the session anima asks for (``resume``: a resumption handle, the
    conversation carried over from an earlier socket)."""
    resumption: JsonObject = {"handle": resume} if resume else {}
    return {
        "setup": {
            "model": model if model.startswith("models/") else f"models/{model}",
            "generationConfig": {
                "responseModalities": ["AUDIO"],
                "speechConfig": {"voiceConfig": {"prebuiltVoiceConfig": {"voiceName": voice}}},
            },
            "systemInstruction": {"parts": [{"text": instructions}]},
            "tools": tools,
            "outputAudioTranscription": {},
            "inputAudioTranscription": {},
            "sessionResumption": resumption,
        }
    }


def audio_input(pcm: bytes) -> JsonObject:
    """Microphone audio: PCM16 at 16 kHz."""
    data = base64.b64encode(pcm).decode("ascii")
    return {"realtimeInput": {"audio": {"mimeType": INPUT_MIME, "data": data}}}


def user_text(text: str) -> JsonObject:
    return {
        "clientContent": {
            "turns": [{"role": "user", "parts": [{"text": text}]}],
            "turnComplete": True,
        }
    }


def tool_response(call_id: str, name: str, output: str) -> JsonObject:
    return {
        "toolResponse": {
            "functionResponses": [{"id": call_id, "name": name, "response": {"result": output}}]
        }
    }


def model_audio(content: dict[str, Any]) -> tuple[list[tuple[bytes, int]], list[str]]:
    """The audio parts of a ``serverContent``'s ``modelTurn``, each (PCM16, rate), and why any
    part was skipped."""
    turn = content.get("modelTurn")
    parts = turn.get("parts") if isinstance(turn, dict) else None
    if not isinstance(parts, list):
        return [], []
    audio: list[tuple[bytes, int]] = []
    skipped: list[str] = []
    for part in parts:
        inline = part.get("inlineData") if isinstance(part, dict) else None
        if not isinstance(inline, dict):
            continue  # text or a thought: the voice carries the answer
        try:
            rate = output_rate(inline.get("mimeType"))
            audio.append((pcm16(inline.get("data")), rate))
        except WireError as exc:
            skipped.append(str(exc))
    return audio, skipped


def output_rate(mime: object) -> int:
    """The sample rate of ``audio/pcm;rate=N`` (24 kHz when it names none)."""
    if not isinstance(mime, str) or not mime.startswith("audio/pcm"):
        raise WireError(f"inline data of type {str(mime)[:60]!r} is not audio/pcm")
    found = re.search(r"rate=(\d{1,6})", mime)
    rate = int(found.group(1)) if found else OUTPUT_RATE
    if not MIN_RATE <= rate <= MAX_RATE:
        raise WireError(f"audio at {rate} Hz refused ({MIN_RATE}-{MAX_RATE})")
    return rate


def seconds_left(go_away: object) -> float | None:
    """``goAway.timeLeft`` (a protobuf Duration in JSON: ``"12.5s"``) in seconds."""
    left = go_away.get("timeLeft") if isinstance(go_away, dict) else None
    if isinstance(left, str) and (found := re.fullmatch(r"(\d{1,9}(?:\.\d{0,9})?)s", left)):
        return float(found.group(1))
    return None
