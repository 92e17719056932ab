"""What a realtime session does with each server event: the responses (one active at a time),
the model's voice through a :class:`~anima.commands.VoiceStream`, tool calls run as validated
plans, and barge-in with the exact truncation.

Threads: :meth:`Session.handle` runs on the connection's reader thread; tool calls run on the
session's own worker (:class:`~anima.agent.realtime.calls.Calls`), one at a time in arrival
order; :meth:`Session.ask` and :meth:`Session.interrupt` come from the doors' threads. One lock
guards the state; nothing blocking (a send only queues, a stream's methods return at once) is
done under it except opening a voice stream, which the runtime answers at once.

Responses: ``response.create`` is sent only when none is active; a second request while one is
waits until its ``response.done`` (the server refuses a second active response). Tool calls of
a response are answered each with its ``function_call_output`` as it ends, and the next
``response.create`` is asked for once the last outstanding call has answered.

A voice that begins over the robot may pause the playing stream at once
(:meth:`Session.pause_voice`, the duplex rules' yield at onset) until the rules decide: resumed
from the same sample, or cut as below at the pause's count.

Barge-in (a voice over the robot that the duplex rules say stops it — :mod:`.duplex`, fed the
server's VAD and input transcription —, or a wake): the playing stream is stopped — its
``stop()`` says exactly how many milliseconds of the item were played —, ``response.cancel`` is
sent if a response is active, and ``conversation.item.truncate`` cuts that audio item at those
milliseconds, so the model remembers only what the person heard.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from anima.agent.actions import ActionRegistry
from anima.agent.executor import Executor
from anima.agent.port import RobotPort
from anima.agent.presence import Presence
from anima.agent.realtime import protocol as wire
from anima.agent.realtime.calls import Calls
from anima.agent.realtime.duplex import EVENTS as PERSON_EVENTS
from anima.agent.realtime.duplex import Duplex
from anima.agent.realtime.tools import call_output, realtime_tools
from anima.agent.realtime.visemes import EVENTS as VISEME_EVENTS
from anima.agent.realtime.visemes import ServerVisemes
from anima.agent.realtime.voice import Voice, after_cut
from anima.wire.jsontypes import JsonObject

log = logging.getLogger(__name__)

Send = Callable[[JsonObject], bool]


@dataclass(frozen=True)
class Brief:
    """What a session asks for, whatever its protocol."""

    model: str  # the model's name
    voice: str  # the model's voice
    instructions: str  # the persona
    locale: str = "en-US"  # what the robot speaks (its voice streams')
    stall_s: float = 15.0  # no event this long while the model answers: the answer is ended
    barge_in_s: float = 0.8  # a voice over the robot this long stops it (listen.barge_in_s)


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
        brief: Brief,
    ) -> None:
        self.robot, self.registry, self.executor = robot, registry, executor
        self.presence = presence
        self._send = send
        self.brief, self.locale, self.stall_s = brief, brief.locale, brief.stall_s
        self.calls = Calls(self._run_call)
        self._lock = threading.Lock()
        self.response_active = False
        self._create_waiting = False  # a response.create waits for the active one's end
        self._outstanding = 0  # tool calls not yet answered
        self.voice_out = Voice(robot, brief.locale)
        self.visemes = ServerVisemes()  # the server's mouth shapes (Azure's, HF's), if sent
        self._unknown: set[str] = set()  # event types logged once
        self.truncations: list[tuple[str, int]] = []  # (item_id, audio_end_ms), newest last
        # the person's voice and words by the duplex rules: barge-in, backchannels, turns
        self.duplex = Duplex(
            robot,
            interrupt=self.interrupt,
            respond=self.request_response,
            pause=self.pause_voice,
            resume=self.resume_voice,
            barge_in_s=brief.barge_in_s,
        )

    # ------------------------------------------------------------------ session life
    def opened(self) -> None:
        """A socket opened: ask for the session (a new one starts with no response)."""
        with self._lock:
            self.response_active = False
            self._create_waiting = False
        self._send(
            wire.session_update(
                model=self.brief.model,
                instructions=self.brief.instructions,
                voice=self.brief.voice,
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

    def pause_voice(self) -> bool:
        """A voice began over the robot: its voice holds where it is (the duplex rules then
        stop it or let it go on); True when a stream was paused."""
        with self._lock:
            return self.voice_out.pause()

    def resume_voice(self) -> bool:
        """The voice over the robot let it go on: it plays on from where it was held."""
        with self._lock:
            return self.voice_out.resume()

    def interrupt(self, reason: str = "barge-in") -> int | None:
        """Barge-in: stop the voice, cancel the response, truncate what was not heard; the
        milliseconds played of the item cut (None when nothing was playing)."""
        self.duplex.yield_over()  # a pause of the voice ends with it
        with self._lock:
            item, played = self.voice_out.cut()
            if self.response_active:
                self._send(wire.response_cancel())
            if played is not None and item is not None:
                self._send(wire.truncate(item, played))
                self.truncations.append((item, played))
        after_cut(self.presence, reason, item, played)
        return played

    # ------------------------------------------------------------------ server events
    def handle(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "response.output_audio.delta":
            self._audio(event)
        elif kind == "response.output_audio_transcript.delta":
            delta = event.get("delta")
            with self._lock:
                if isinstance(delta, str):
                    self.voice_out.words(delta)
        elif kind == "response.output_audio.done":
            with self._lock:
                if event.get("item_id") == self.voice_out.item:
                    self.voice_out.finish()
        elif kind == "response.created":
            with self._lock:
                self.response_active = True
            self.presence.to("thinking", "the model answers")
        elif kind == "response.done":
            self._response_done(event)
        elif kind == "response.function_call_arguments.done":
            self._function_call(event)
        elif kind in VISEME_EVENTS:
            with self._lock:
                self.visemes.event(event, self.voice_out.item, self.voice_out.stream)
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
        with self._lock:
            item = item if isinstance(item, str) else ""
            started = self.voice_out.play(item, pcm, wire.RATE)
            stream = self.voice_out.stream if self.voice_out.item == item else None
            self.visemes.audio(event, len(pcm) / (2 * wire.RATE / 1000), item, stream)
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

    def _run_call(self, call_id: str, name: str, arguments: object) -> None:
        output = call_output(self.registry, self.executor, name, arguments)
        self._send(wire.function_output(call_id, output))  # before its response.create
        with self._lock:
            self._outstanding -= 1
            self._create_waiting = True
            if not self.response_active:
                self._create_next_locked()

    def _finish_stream_locked(self) -> None:
        self.voice_out.finish()


class SessionClosedError(Exception):
    """The server said ``session.closed``: the socket is dropped and opened again."""
