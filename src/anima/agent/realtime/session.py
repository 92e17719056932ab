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
import queue
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from anima import commands as cmd
from anima.agent.actions import ActionRegistry
from anima.agent.executor import Executor
from anima.agent.port import RobotPort
from anima.agent.presence import Presence
from anima.agent.realtime import protocol as wire
from anima.agent.realtime.duplex import EVENTS as PERSON_EVENTS
from anima.agent.realtime.duplex import Duplex
from anima.agent.realtime.tools import call_output, realtime_tools
from anima.agent.realtime.visemes import EVENTS as VISEME_EVENTS
from anima.agent.realtime.visemes import ServerVisemes
from anima.errors import AnimaError
from anima.wire.jsontypes import JsonObject

log = logging.getLogger(__name__)

Send = Callable[[JsonObject], bool]


class Calls:
    """The tool calls' worker: one call at a time, in arrival order, on a thread it owns.
    A call canceled before it starts is skipped (:meth:`cancel`)."""

    def __init__(self, run: Callable[[str, str, object], None]) -> None:
        self._run = run
        self._queue: queue.Queue[tuple[str, str, object] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._waiting: set[str] = set()  # call ids queued
        self._canceled: set[str] = set()  # call ids queued or running, not to go on
        self.running: str | None = None  # the call id running now

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="anima-realtime-calls")
        self._thread.daemon = True
        self._thread.start()

    def put(self, call_id: str, name: str, arguments: object) -> None:
        with self._lock:
            self._waiting.add(call_id)
        self._queue.put((call_id, name, arguments))

    def cancel(self, ids: Iterable[str]) -> bool:
        """Calls ``ids`` are not run if still waiting; True when one of them is running now
        (its plan is the caller's to cancel)."""
        with self._lock:
            known = self._waiting | ({self.running} if self.running is not None else set())
            self._canceled.update(known.intersection(ids))  # ids long done are no concern
            return self.running is not None and self.running in self._canceled

    def canceled(self, call_id: str) -> bool:
        """The running call ``call_id`` was canceled (its outcome is not to be told)."""
        with self._lock:
            return call_id in self._canceled

    def stop(self, timeout: float) -> None:
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("realtime: the tool calls' thread did not stop in %g s", timeout)
            self._thread = None

    def _loop(self) -> None:
        while (call := self._queue.get()) is not None:
            with self._lock:
                self._waiting.discard(call[0])
                if call[0] in self._canceled:
                    self._canceled.discard(call[0])
                    log.info("realtime: tool call %s canceled before it ran", call[1][:60])
                    continue
                self.running = call[0]
            try:
                self._run(*call)
            except Exception:  # one call must not end the worker
                log.exception("realtime: tool call %s failed", call[1][:60])
            finally:
                with self._lock:
                    self.running = None
                    self._canceled.discard(call[0])


class Voice:
    """The model's voice: one :class:`~anima.commands.VoiceStream` per audio item (OpenAI's
    ``item_id``, a Gemini turn), opened on its first audio, finished at its end, cut on a
    barge-in. Not thread-safe: the session calls it under its lock."""

    def __init__(self, robot: RobotPort, locale: str) -> None:
        self.robot, self.locale = robot, locale
        self.stream: cmd.VoiceStream | None = None
        self.item: str | None = None  # the audio item the stream plays
        self._mute_item: str | None = None  # an item whose audio must not (or cannot) play
        self._finished = False  # the stream was told finish()
        self._fed_ms = 0.0  # milliseconds of audio fed to the stream
        self._refused_item: str | None = None  # an item whose audio the stream refused
        self._paused: tuple[cmd.VoiceStream, str | None] | None = None  # held by pause()

    def play(self, item: str, pcm: bytes, rate: int) -> bool:
        """Feed ``pcm`` (PCM16 at ``rate``) of ``item``; True when it opened a new stream
        (the robot starts speaking)."""
        if item == self._mute_item:
            return False
        started = False
        if self.stream is None or item != self.item:
            self.finish()
            try:
                opened = self.robot.execute(
                    cmd.OpenVoiceStream(locale=self.locale, source="realtime")
                )
            except AnimaError as exc:
                log.warning("realtime: the model's voice cannot play: %s", exc)
                self._mute_item = item
                return False
            self.stream, self.item, self._finished = opened.stream, item, False
            self._fed_ms = 0.0
            started = True
        assert self.stream is not None
        try:
            self.stream.feed(pcm, rate)
        except AnimaError as exc:  # past what may wait unplayed: a server far too fast
            if self._refused_item != item:
                self._refused_item = item
                log.warning("realtime: audio refused (logged once per item): %s", exc)
            return started
        self._fed_ms += len(pcm) / (2 * rate / 1000)
        return started

    def words(self, text: str) -> None:
        if self.stream is not None:
            self.stream.words(text[: wire.MAX_TRANSCRIPT_DELTA_CHARS])

    def finish(self) -> None:
        """No more audio for the stream: it plays out."""
        if self.stream is not None and not self._finished:
            self.stream.finish()
            self._finished = True

    def pause(self) -> bool:
        """Hold the voice at the sample it reached (a voice began over it); True when a stream
        was paused."""
        stream = self.stream
        if stream is None or stream.done or not stream.pause():
            return False
        self._paused = (stream, self.item)
        return True

    def resume(self) -> bool:
        """Play on from where :meth:`pause` held it; True when a stream resumed."""
        paused, self._paused = self._paused, None
        return paused is not None and paused[0].resume()

    def cut(self) -> tuple[str | None, int | None]:
        """Stop the voice now: the item cut and the milliseconds of it played (None when
        nothing was playing). Its later audio stays silent."""
        paused, self._paused = self._paused, None
        if paused is not None and paused[0] is not self.stream and not paused[0].done:
            # paused, then the next item came (queued behind it): the paused one is what the
            # person heard, the next never sounded
            if self.stream is not None:
                self.stream.stop("interrupted")
            self.stream, self._mute_item = None, self.item
            return paused[1], paused[0].stop("interrupted")
        stream, item = self.stream, self.item
        played: int | None = None
        if stream is not None and not stream.done:
            played = stream.stop("interrupted")
        elif stream is not None and stream.played_ms() < self._fed_ms - 1:
            played = stream.played_ms()  # cut by someone else (an estop, a door's stop)
        self.stream = None
        self._mute_item = item  # its later deltas (sent before the cancel) stay silent
        return item, played


def after_cut(presence: Presence, reason: str, item: str | None, played: int | None) -> None:
    """A barge-in told: logged with what was played of ``item``; the conversation's phase
    interrupted (when the robot was speaking), then listening."""
    if played is not None:
        log.info("realtime: %s: stopped after %d ms of %s", reason, played, item)
        presence.to("interrupted", reason)
    presence.to("listening", reason)


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
