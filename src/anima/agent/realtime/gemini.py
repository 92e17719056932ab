"""What a Gemini Live session does with each server message (:mod:`.gemini_wire`): the model's
voice through a :class:`~anima.commands.VoiceStream` (one per model turn), tool calls run as
validated plans (:class:`~anima.agent.realtime.calls.Calls`, as for OpenAI) and answered by
``toolResponse`` on the same id, canceled by ``toolCallCancellation``, and ``goAway`` turned
into a new session before the server closes the socket, resuming the conversation.

Turns: Google's server decides them with its own VAD and needs no ``response.create``: the
model answers when the person stops, and after each ``toolResponse``. Barge-in:
``serverContent.interrupted`` says the person talked over the model while it was still
generating, and the audio still queued is dropped (the stream is stopped; the Live API has no
truncation: the server already knows where it was cut). The server sends nothing when the
person talks over an answer it has finished sending (the robot may have seconds of it still to
play), so with anima's VAD (full duplex) the duplex rules of :mod:`.duplex` hear the microphone
too, with ``local_voice``: the robot's voice pauses at a voice's onset, and a stop word (in the
server's ``inputTranscription`` of the person) or a held voice cuts it, a backchannel or a
false onset resumes it. A wake or the emergency stop cuts the voice here, and the rest of that
turn stays silent.

Threads as in :mod:`.session`: :meth:`GeminiSession.handle` on the connection's reader, calls
on their worker, :meth:`GeminiSession.ask` and :meth:`GeminiSession.interrupt` from the doors.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from anima.agent.actions import ActionRegistry
from anima.agent.executor import Executor
from anima.agent.port import RobotPort
from anima.agent.presence import Presence
from anima.agent.realtime import gemini_wire as wire
from anima.agent.realtime.calls import Calls
from anima.agent.realtime.connection import Connection
from anima.agent.realtime.duplex import Duplex
from anima.agent.realtime.session import Brief
from anima.agent.realtime.tools import call_output
from anima.agent.realtime.voice import Voice, after_cut

log = logging.getLogger(__name__)

MAX_CALLS = 64  # function calls read from one toolCall (a plan of one step each)


class GeminiSession:
    """The state of one Gemini Live conversation, kept across reconnects."""

    def __init__(
        self,
        robot: RobotPort,
        registry: ActionRegistry,
        executor: Executor,
        presence: Presence,
        connection: Connection,
        *,
        brief: Brief,
    ) -> None:
        self.robot, self.registry, self.executor = robot, registry, executor
        self.presence, self.connection = presence, connection
        self.brief, self.locale, self.stall_s = brief, brief.locale, brief.stall_s
        self.calls = Calls(self._run_call)
        self.voice_out = Voice(robot, brief.locale)
        self._lock = threading.Lock()
        self.ready = False  # setupComplete came on the open socket: input may be sent
        self.turn = 0  # the model's turns so far: each one's audio is one utterance
        self.answering = False  # the model's turn has begun and not ended
        self.resume_handle: str | None = None  # the server's latest resumable handle
        self.go_aways = 0  # goAway messages heeded
        self._unknown: set[str] = set()  # message kinds logged once
        self._waiting: str | None = None  # a typed request waiting for setupComplete
        # a voice over the robot, by anima's VAD (listen_with(local_voice=True)) and the
        # person's words as the server transcribes them: the turns stay Google's
        self.duplex = Duplex(
            robot,
            interrupt=self.interrupt,
            respond=lambda: None,
            pause=self.pause_voice,
            resume=self.resume_voice,
            barge_in_s=brief.barge_in_s,
        )

    # ------------------------------------------------------------------ session life
    def opened(self) -> None:
        """A socket opened: the setup first (resuming the conversation when the server gave a
        handle); nothing else until ``setupComplete``."""
        with self._lock:
            self.ready = False
            resume = self.resume_handle
        tools = wire.function_declarations(self.registry)
        self.connection.send(
            wire.setup(
                model=self.brief.model,
                instructions=self.brief.instructions,
                voice=self.brief.voice,
                tools=tools,
                resume=resume,
            )
        )

    def lost(self) -> None:
        """The socket closed: what was received plays out."""
        with self._lock:
            self.ready = False
            self._end_turn_locked()

    def idle(self, seconds: float) -> None:
        """Nothing came for ``seconds``: a turn that long silent is ended (a stalled server)."""
        with self._lock:
            if not self.answering or seconds < self.stall_s:
                return
            log.warning("gemini: no message for %.1f s in a turn: ending it", seconds)
            self._end_turn_locked()
        self.presence.to("engaged", "the server stalled")

    # ------------------------------------------------------------------ input
    def send_audio(self, pcm: bytes) -> bool:
        """Microphone audio (PCM16 at 16 kHz); False (dropped) before ``setupComplete``."""
        return self.ready and self.connection.send(wire.audio_input(pcm), droppable=True)

    def ask(self, text: str) -> None:
        """A typed request: a user turn the model answers. Before ``setupComplete`` the latest
        one waits for it (a request just after a reconnect is not lost)."""
        with self._lock:
            if not self.ready:
                self._waiting = text
                log.info("gemini: the session is not ready: %r is sent when it is", text[:60])
                return
        self.connection.send(wire.user_text(text))

    def pause_voice(self) -> bool:
        """A voice began over the robot: its voice holds where it is (the duplex rules)."""
        with self._lock:
            return self.voice_out.pause()

    def resume_voice(self) -> bool:
        with self._lock:
            return self.voice_out.resume()

    def interrupt(self, reason: str = "barge-in") -> int | None:
        """Stop the voice now; the rest of the turn stays silent. The milliseconds played of
        the turn (None when nothing was playing)."""
        self.duplex.yield_over()  # a pause of the voice ends with it
        with self._lock:
            item, played = self.voice_out.cut()
        after_cut(self.presence, reason, item, played)
        return played

    # ------------------------------------------------------------------ server messages
    def handle(self, event: dict[str, Any]) -> None:
        known = [kind for kind in wire.KINDS if kind in event]
        for kind in known:
            body = event[kind]
            if kind == "serverContent":
                self._content(body if isinstance(body, dict) else {})
            elif kind == "toolCall":
                self._tool_call(body)
            elif kind == "toolCallCancellation":
                self._cancel(body)
            elif kind == "setupComplete":
                self._ready()
            elif kind == "goAway":
                self._go_away(body)
            elif kind == "sessionResumptionUpdate":
                self._resumption(body)
        if not known:
            kind = ",".join(sorted(str(k)[:40] for k in event)[:5])
            if kind not in self._unknown:
                self._unknown.add(kind)
                log.info("gemini: message %s is not handled: skipped (logged once)", kind)

    def _content(self, content: dict[str, Any]) -> None:
        heard = content.get("inputTranscription")
        if isinstance(heard, dict) and isinstance(heard.get("text"), str):
            self.duplex.words(heard["text"][: wire.MAX_HEARD_CHARS])
        if content.get("interrupted") is True:
            self.duplex.yield_over()
            with self._lock:
                item, played = self.voice_out.cut()  # the queued audio is dropped
                self._end_turn_locked()
            after_cut(self.presence, "the person spoke (interrupted)", item, played)
        audio, skipped = wire.model_audio(content)
        for why in skipped:
            log.warning("gemini: an audio part skipped: %s", why)
        started = False
        with self._lock:
            for pcm, rate in audio:
                self.answering = True
                started = self.voice_out.play(f"turn{self.turn}", pcm, rate) or started
            text = content.get("outputTranscription")
            words = text.get("text") if isinstance(text, dict) else None
            if isinstance(words, str):
                self.voice_out.words(words)
        if started:
            self.presence.to("speaking", "the model speaks")
        if content.get("turnComplete") is True:
            with self._lock:
                self._end_turn_locked()
            self.presence.to("engaged", "the model answered")

    def _tool_call(self, body: object) -> None:
        calls = body.get("functionCalls") if isinstance(body, dict) else None
        if not isinstance(calls, list):
            log.warning("gemini: a toolCall without functionCalls: skipped")
            return
        for call in calls[:MAX_CALLS]:
            if not isinstance(call, dict):
                log.warning("gemini: a function call that is not an object: skipped")
                continue
            call_id, name = call.get("id"), call.get("name")
            if not isinstance(call_id, str) or not isinstance(name, str):
                log.warning("gemini: a function call without id or name: skipped")
                continue
            self.presence.to("thinking", "the model acts")
            self.calls.put(call_id, name, call.get("args", {}))

    def _cancel(self, body: object) -> None:
        ids = body.get("ids") if isinstance(body, dict) else None
        if not isinstance(ids, list):
            log.warning("gemini: a toolCallCancellation without ids: skipped")
            return
        wanted = [i for i in ids[:MAX_CALLS] if isinstance(i, str)]
        log.info("gemini: the model canceled calls %s", wanted)
        if self.calls.cancel(wanted):
            self.executor.cancel("canceled by the model")

    def _ready(self) -> None:
        with self._lock:
            self.ready = True
            waiting, self._waiting = self._waiting, None
        log.info("gemini: setupComplete (session ready)")
        if waiting is not None:
            self.connection.send(wire.user_text(waiting))

    def _go_away(self, body: object) -> None:
        left = wire.seconds_left(body)
        self.go_aways += 1
        when = f"in {left:g} s" if left is not None else "soon"
        log.warning("gemini: goAway: the server closes this session %s: reconnecting now", when)
        with self._lock:
            self.ready = False  # nothing more into the closing socket
            self._end_turn_locked()  # what was received plays out
        self.connection.reconnect("goAway")

    def _resumption(self, body: object) -> None:
        if not isinstance(body, dict) or body.get("resumable") is False:
            return
        handle = body.get("newHandle")
        if isinstance(handle, str) and 0 < len(handle) <= 1000:
            with self._lock:
                self.resume_handle = handle

    def _run_call(self, call_id: str, name: str, arguments: object) -> None:
        output = call_output(self.registry, self.executor, name, arguments)
        if self.calls.canceled(call_id):
            log.info("gemini: call %s was canceled: no toolResponse", call_id[:60])
            return
        self.connection.send(wire.tool_response(call_id, name, output))

    def _end_turn_locked(self) -> None:
        self.voice_out.finish()
        if self.answering:
            self.turn += 1
        self.answering = False
