"""What a realtime session does with each server event: the responses (one active at a time),
the model's voice through a :class:`~anima.commands.VoiceStream`, tool calls run as validated
plans, and barge-in with the exact truncation.

Threads: :meth:`Session.handle` runs on the connection's reader thread; tool calls run on the
session's own worker (:class:`Calls`), one at a time in arrival order; :meth:`Session.ask` and
:meth:`Session.interrupt` come from the doors' threads. One lock guards the state; nothing
blocking (a send only queues, a stream's methods return at once) is done under it except
opening a voice stream, which the runtime answers at once.

Responses: ``response.create`` is sent only when none is active; a second request while one is
waits until its ``response.done`` (the server refuses a second active response). Tool calls of
a response are answered each with its ``function_call_output`` as it ends, and the next
``response.create`` is asked for once the last outstanding call has answered.

Barge-in (the server's VAD heard the person start, ``input_audio_buffer.speech_started``, or a
wake): the playing stream is stopped — its ``stop()`` says exactly how many milliseconds of the
item were played —, ``response.cancel`` is sent if a response is active, and
``conversation.item.truncate`` cuts that audio item at those milliseconds, so the model
remembers only what the person heard.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from anima import commands as cmd
from anima.agent.actions import ActionRegistry
from anima.agent.executor import Executor
from anima.agent.port import RobotPort
from anima.agent.presence import Presence
from anima.agent.realtime import protocol as wire
from anima.agent.realtime.duplex import EVENTS as PERSON_EVENTS
from anima.agent.realtime.duplex import Duplex
from anima.agent.realtime.tools import realtime_tools, run_call
from anima.errors import AnimaError
from anima.wire.jsontypes import JsonObject

log = logging.getLogger(__name__)

Send = Callable[[JsonObject], bool]


class Calls:
    """The tool calls' worker: one call at a time, in arrival order, on a thread it owns."""

    def __init__(self, run: Callable[[str, str, str], None]) -> None:
        self._run = run
        self._queue: queue.Queue[tuple[str, str, str] | None] = queue.Queue()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="anima-realtime-calls")
        self._thread.daemon = True
        self._thread.start()

    def put(self, call_id: str, name: str, arguments: str) -> None:
        self._queue.put((call_id, name, arguments))

    def stop(self, timeout: float) -> None:
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("realtime: the tool calls' thread did not stop in %g s", timeout)
            self._thread = None

    def _loop(self) -> None:
        while (call := self._queue.get()) is not None:
            try:
                self._run(*call)
            except Exception:  # one call must not end the worker
                log.exception("realtime: tool call %s failed", call[1][:60])


class Session:
    """The state of one realtime conversation, kept across reconnects."""

    def __init__(
        self,
        robot: RobotPort,
        registry: ActionRegistry,
        executor: Executor,
        presence: Presence,
        send: Send,
        *,
        model: str,
        voice: str,
        instructions: str,
        locale: str = "en-US",
        stall_s: float = 15.0,
        barge_in_s: float = 0.8,
    ) -> None:
        """``barge_in_s``: a voice over the robot this long stops it (``listen.barge_in_s``)."""
        self.robot, self.registry, self.executor = robot, registry, executor
        self.presence = presence
        self._send = send
        self.model, self.voice, self.instructions = model, voice, instructions
        self.locale = locale
        self.stall_s = stall_s
        self.calls = Calls(self._run_call)
        self._lock = threading.Lock()
        self.response_active = False
        self._create_waiting = False  # a response.create waits for the active one's end
        self._outstanding = 0  # tool calls not yet answered
        self._stream: cmd.VoiceStream | None = None
        self._stream_item: str | None = None  # the audio item the stream plays
        self._mute_item: str | None = None  # an item whose audio could not be played
        self._finished = False  # the stream was told finish()
        self._fed_ms = 0.0  # milliseconds of audio fed to the stream
        self._refused_item: str | None = None  # an item whose audio the stream refused
        self._unknown: set[str] = set()  # event types logged once
        self.truncations: list[tuple[str, int]] = []  # (item_id, audio_end_ms), newest last
        # the person's voice and words by the duplex rules: barge-in, backchannels, turns
        self.duplex = Duplex(
            robot,
            interrupt=self.interrupt,
            respond=self.request_response,
            barge_in_s=barge_in_s,
        )

    # ------------------------------------------------------------------ session life
    def opened(self) -> None:
        """A socket opened: ask for the session (a new one starts with no response)."""
        with self._lock:
            self.response_active = False
            self._create_waiting = False
        self._send(
            wire.session_update(
                model=self.model,
                instructions=self.instructions,
                voice=self.voice,
                tools=realtime_tools(self.registry),
            )
        )

    def lost(self) -> None:
        """The socket closed: what was received plays out; no response is active any more."""
        with self._lock:
            self.response_active = False
            self._create_waiting = False
            self._finish_stream_locked()

    def idle(self, seconds: float) -> None:
        """Nothing came for ``seconds``: a response that long silent is ended (a stalled
        server), its audio played out."""
        with self._lock:
            if not self.response_active or seconds < self.stall_s:
                return
            log.warning("realtime: no event for %.1f s in a response: ending it", seconds)
            self.response_active = False
            self._finish_stream_locked()
            self._create_next_locked()
        self.presence.to("engaged", "the server stalled")

    # ------------------------------------------------------------------ requests
    def ask(self, text: str) -> None:
        """A typed request: a user message, then a response."""
        self._send(wire.user_text(text))
        self.request_response()

    def request_response(self) -> None:
        with self._lock:
            if self.response_active:
                self._create_waiting = True
                return
            self.response_active = self._send(wire.response_create())

    def _create_next_locked(self) -> None:
        if self._create_waiting and self._outstanding == 0:
            self._create_waiting = False
            self.response_active = self._send(wire.response_create())

    def interrupt(self, reason: str = "barge-in") -> int | None:
        """Barge-in: stop the voice, cancel the response, truncate what was not heard; the
        milliseconds played of the item cut (None when nothing was playing)."""
        with self._lock:
            stream, item = self._stream, self._stream_item
            played: int | None = None
            if stream is not None and not stream.done:
                played = stream.stop("interrupted")
            elif stream is not None and stream.played_ms() < self._fed_ms - 1:
                played = stream.played_ms()  # cut by someone else (an estop, a door's stop)
            self._stream = None
            self._mute_item = item  # its later deltas (sent before the cancel) stay silent
            if self.response_active:
                self._send(wire.response_cancel())
            if played is not None and item is not None:
                self._send(wire.truncate(item, played))
                self.truncations.append((item, played))
        if played is not None:
            log.info("realtime: %s: stopped after %d ms of %s", reason, played, item)
            self.presence.to("interrupted", reason)
        self.presence.to("listening", reason)
        return played

    # ------------------------------------------------------------------ server events
    def handle(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "response.output_audio.delta":
            self._audio(event)
        elif kind == "response.output_audio_transcript.delta":
            delta = event.get("delta")
            with self._lock:
                if isinstance(delta, str) and self._stream is not None:
                    self._stream.words(delta[: wire.MAX_TRANSCRIPT_DELTA_CHARS])
        elif kind == "response.output_audio.done":
            with self._lock:
                if event.get("item_id") == self._stream_item:
                    self._finish_stream_locked()
        elif kind == "response.created":
            with self._lock:
                self.response_active = True
            self.presence.to("thinking", "the model answers")
        elif kind == "response.done":
            self._response_done(event)
        elif kind == "response.function_call_arguments.done":
            self._function_call(event)
        elif kind in PERSON_EVENTS:
            self.duplex.handle(kind, event)
        elif kind == "error":
            error = event.get("error")
            message = error.get("message") if isinstance(error, dict) else error
            log.warning("realtime: the server reported an error: %s", str(message)[:300])
        elif kind in ("session.created", "session.updated"):
            log.info("realtime: %s", kind)
        elif kind == "session.closed":
            raise SessionClosedError(str(event.get("reason", ""))[:200])
        elif kind not in self._unknown:
            self._unknown.add(kind)
            log.info("realtime: event %s is not handled: skipped (logged once)", kind[:80])

    def _audio(self, event: dict[str, Any]) -> None:
        try:
            pcm = wire.audio(event)
        except wire.WireError as exc:
            log.warning("realtime: %s", exc)
            return
        item = event.get("item_id")
        item = item if isinstance(item, str) else ""
        with self._lock:
            if item == self._mute_item:
                return
            if self._stream is None or item != self._stream_item:
                self._finish_stream_locked()
                try:
                    opened = self.robot.execute(
                        cmd.OpenVoiceStream(locale=self.locale, source="realtime")
                    )
                except AnimaError as exc:
                    log.warning("realtime: the model's voice cannot play: %s", exc)
                    self._mute_item = item
                    return
                self._stream, self._stream_item, self._finished = opened.stream, item, False
                self._fed_ms = 0.0
                started = True
            else:
                started = False
            try:
                self._stream.feed(pcm, wire.RATE)
            except AnimaError as exc:  # past what may wait unplayed: a server far too fast
                if self._refused_item != item:
                    self._refused_item = item
                    log.warning("realtime: audio refused (logged once per item): %s", exc)
                return
            self._fed_ms += len(pcm) / (2 * wire.RATE / 1000)
        if started:
            self.presence.to("speaking", "the model speaks")

    def _response_done(self, event: dict[str, Any]) -> None:
        response = event.get("response")
        status = response.get("status") if isinstance(response, dict) else None
        with self._lock:
            self.response_active = False
            self._finish_stream_locked()
            self._create_next_locked()
            busy = self.response_active or self._outstanding > 0
        log.debug("realtime: response done (%s)", status)
        if not busy:
            self.presence.to("engaged", "the model answered")

    def _function_call(self, event: dict[str, Any]) -> None:
        call_id, name = event.get("call_id"), event.get("name")
        arguments = event.get("arguments", "")
        if not isinstance(call_id, str) or not isinstance(name, str):
            log.warning("realtime: a function call without call_id or name: skipped")
            return
        with self._lock:
            self._outstanding += 1
        self.calls.put(call_id, name, arguments if isinstance(arguments, str) else "")

    def _run_call(self, call_id: str, name: str, arguments: str) -> None:
        t0 = time.monotonic()
        try:
            output = run_call(self.registry, self.executor, name, arguments)
        except Exception as exc:  # a bug of ours: the model is told, the session goes on
            log.exception("realtime: tool call %s raised", name[:60])
            output = f"failed: {type(exc).__name__}"
        ms = 1e3 * (time.monotonic() - t0)
        log.info("realtime: %s → %s (%.0f ms)", name[:60], output[:200], ms)
        self._send(wire.function_output(call_id, output))  # before its response.create
        with self._lock:
            self._outstanding -= 1
            self._create_waiting = True
            if not self.response_active:
                self._create_next_locked()

    def _finish_stream_locked(self) -> None:
        if self._stream is not None and not self._finished:
            self._stream.finish()
            self._finished = True


class SessionClosedError(Exception):
    """The server said ``session.closed``: the socket is dropped and opened again."""
