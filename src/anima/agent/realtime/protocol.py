"""The OpenAI Realtime GA wire: the client events anima sends, and the server events it reads.

Every message is one JSON object with a ``type``. What anima sends (builders below, each
returning the object to send)::

    session.update               the session: type realtime, model, instructions, audio in and out
                                 (PCM16 at 24 kHz, server VAD, the voice), the tools
    input_audio_buffer.append    the microphone, base64 PCM16 at 24 kHz
    conversation.item.create     a typed request (input_text), or a tool's function_call_output
    response.create              ask for the next response (one active at a time)
    response.cancel              the person talked over the robot
    conversation.item.truncate   the audio item being played, cut at audio_end_ms: what was heard

What it reads (:data:`HANDLED`): the session's and responses' life, the audio and transcript
deltas, the finished tool calls, the server VAD's ``speech_started``/``speech_stopped``, the
input's transcription (for the duplex rules) and ``error``. Anything
else is logged once per type and skipped.

Limits (:func:`decode`): a message over :data:`MAX_MESSAGE_BYTES` (4 MiB) is never read:
websockets sees its length in the frame's header, closes the socket with 1009, and the client
reconnects. Reading and parsing 10 MB of JSON holds the GIL for tens of milliseconds (five
10 MB deltas read whole cost the motion loop 21 missed ticks on a 2-core machine), and no event
of the protocol comes near it: audio arrives in deltas of tens of milliseconds. Under it, one
that is not a JSON object with a string ``type`` is skipped with a log line.
An audio delta over :data:`MAX_AUDIO_DELTA_CHARS` (~31 s of audio; OpenAI sends ~20-100 ms a
delta) is refused with a log line and the response goes on: a server that sends that much in
one event is broken, and playing it would hold the speaker for half a minute.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from anima.wire.jsontypes import JsonObject

RATE = 24_000  # Hz: PCM16 mono both ways (audio.input.format / audio.output.format)
PCM_FORMAT: JsonObject = {"type": "audio/pcm", "rate": RATE}
MAX_MESSAGE_BYTES = 4 * 1024 * 1024  # one WebSocket message (websockets' max_size)
MAX_AUDIO_DELTA_CHARS = 2_000_000  # base64 characters of one audio delta (~1.5 MB, ~31 s)
MAX_TRANSCRIPT_DELTA_CHARS = 2_000  # characters of one transcript delta kept (a few words come)
# server VAD reports the person's voice but neither cancels nor starts a response: anima's
# duplex rules decide (agent/realtime/duplex.py); silence_duration_ms is OpenAI's default
TURN_DETECTION: JsonObject = {
    "type": "server_vad",
    "silence_duration_ms": 500,
    "interrupt_response": False,
    "create_response": False,
}
# the person's words as the server hears them, for the stop-word and backchannel rules
TRANSCRIBE_MODEL = "gpt-4o-mini-transcribe"

HANDLED = frozenset(
    {
        "session.created",
        "session.updated",
        "response.created",
        "response.done",
        "response.output_audio.delta",
        "response.output_audio.done",
        "response.output_audio_transcript.delta",
        "response.function_call_arguments.done",
        "input_audio_buffer.speech_started",
        "input_audio_buffer.speech_stopped",
        "conversation.item.input_audio_transcription.delta",
        "conversation.item.input_audio_transcription.completed",
        "error",
    }
)


class WireError(ValueError):
    """A server message anima cannot read (not JSON, not an object, no type, bad audio)."""


def decode(message: str | bytes) -> dict[str, Any]:
    """A server message as an event object; WireError saying why it is skipped."""
    event = parse_object(message)
    kind = event.get("type")
    if not isinstance(kind, str) or not kind or len(kind) > 200:
        raise WireError("no event type")
    return event


def parse_object(message: str | bytes) -> dict[str, Any]:
    """A server message as a JSON object (any protocol's); WireError saying why not."""
    if len(message) > MAX_MESSAGE_BYTES:  # the socket's own limit: a message given by hand
        raise WireError(f"a message of {len(message)} bytes (at most {MAX_MESSAGE_BYTES})")
    try:
        event = json.loads(message)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise WireError(f"not JSON ({exc.msg if hasattr(exc, 'msg') else exc})") from None
    except RecursionError:
        raise WireError("JSON nested too deep") from None
    if not isinstance(event, dict):
        raise WireError(f"not a JSON object but {type(event).__name__}")
    return event


def audio(event: dict[str, Any]) -> bytes:
    """The PCM16 of an audio delta; WireError when missing, too large or not base64."""
    return pcm16(event.get("delta"))


def pcm16(delta: object) -> bytes:
    """Base64 audio as whole PCM16 samples; WireError when missing, too large or not base64."""
    if not isinstance(delta, str):
        raise WireError("audio delta without a base64 delta")
    if len(delta) > MAX_AUDIO_DELTA_CHARS:
        raise WireError(
            f"audio delta of {len(delta)} characters refused (at most {MAX_AUDIO_DELTA_CHARS})"
        )
    try:
        pcm = base64.b64decode(delta, validate=True)
    except (binascii.Error, ValueError):
        raise WireError("audio delta is not base64") from None
    return pcm[: len(pcm) - len(pcm) % 2]  # whole samples


def session_update(
    *, model: str, instructions: str, voice: str, tools: list[JsonObject]
) -> JsonObject:
    """The session anima asks for: audio both ways at 24 kHz, the server's VAD (reporting, not
    deciding), the input transcribed, the tools."""
    return {
        "type": "session.update",
        "session": {
            "type": "realtime",
            "model": model,
            "instructions": instructions,
            "output_modalities": ["audio"],
            "audio": {
                "input": {
                    "format": PCM_FORMAT,
                    "turn_detection": TURN_DETECTION,
                    "transcription": {"model": TRANSCRIBE_MODEL},
                },
                "output": {"format": PCM_FORMAT, "voice": voice},
            },
            "tools": tools,
            "tool_choice": "auto",
        },
    }


def audio_append(pcm16: bytes) -> JsonObject:
    return {"type": "input_audio_buffer.append", "audio": base64.b64encode(pcm16).decode("ascii")}


def user_text(text: str) -> JsonObject:
    return {
        "type": "conversation.item.create",
        "item": {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": text}],
        },
    }


def function_output(call_id: str, output: str) -> JsonObject:
    return {
        "type": "conversation.item.create",
        "item": {"type": "function_call_output", "call_id": call_id, "output": output},
    }


def response_create() -> JsonObject:
    return {"type": "response.create"}


def response_cancel() -> JsonObject:
    return {"type": "response.cancel"}


def truncate(item_id: str, audio_end_ms: int) -> JsonObject:
    return {
        "type": "conversation.item.truncate",
        "item_id": item_id,
        "content_index": 0,
        "audio_end_ms": audio_end_ms,
    }
