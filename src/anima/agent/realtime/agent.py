"""The realtime brain as the runtime's agent: :class:`RealtimeAgent`, a part that replaces the
conversation (ears, planner and voice) with a speech-to-speech model's session.

It owns the session's :class:`~anima.agent.realtime.connection.Connection` (its reader and
writer threads), the tool calls' worker and executor, and the microphone: the agent's audio
source (through the echo canceller in full duplex) resampled from 16 kHz to the session's 24 kHz
and appended while a socket is open; the server's VAD reports the turns and anima's duplex
rules decide them (:mod:`anima.agent.realtime.duplex`, with anima's own VAD in full duplex).
A typed :class:`~anima.commands.Ask` becomes a user message and a response; a
:class:`~anima.commands.Listen` (a wake) interrupts what the robot says.

When the socket is lost the robot says so, once until it is back (:data:`LOST_LINE`, through
the port like any speech; refused speech is only logged), and the connection comes back with
backoff.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from anima import commands as cmd
from anima.agent.executor import Executor
from anima.agent.presence import Presence
from anima.agent.realtime import gemini_wire
from anima.agent.realtime import protocol as wire
from anima.agent.realtime.connection import Connection, require_websockets
from anima.agent.realtime.gemini import GeminiSession
from anima.agent.realtime.privacy import WakeGate
from anima.agent.realtime.session import Brief, Session, SessionClosedError
from anima.audio import SAMPLE_RATE, Frame, StreamResampler
from anima.config.planner import GeminiLivePlannerConfig, RealtimePlannerConfig
from anima.errors import AnimaError
from anima.events import ConversationPhase, EStopChanged, Event, Transcript
from anima.parts import PART_STOP_S

if TYPE_CHECKING:
    from anima.agent.actions import ActionRegistry
    from anima.agent.persona import Persona
    from anima.agent.port import RobotPort
    from anima.agent.remembering import Remembering
    from anima.config import AgentConfig
    from anima.listening.sources import AudioSource
    from anima.listening.vad import Vad
    from anima.listening.wake.spotter import Spotter

log = logging.getLogger(__name__)

LOST_LINE = "I lost my connection. Give me a moment."
# events that are a voice (the person's, by the server's VAD and transcription, or the model's):
# with privacy on, each one keeps the session open another agent.engaged_s
VOICES = frozenset(
    {
        "input_audio_buffer.speech_started",
        "input_audio_buffer.speech_stopped",
        "conversation.item.input_audio_transcription.delta",
        "response.output_audio.delta",
    }
)


class Microphone:
    """The source's frames at the session's rate, sent (the source's
    :class:`~anima.listening.sources.FrameSink`: it only queues)."""

    def __init__(
        self,
        send: Callable[[bytes], bool],
        rate: int = wire.RATE,
        gated: Callable[[], bool] | None = None,
        hear: Callable[[Frame], None] | None = None,
        admit: Callable[[Frame], bool] | None = None,
    ) -> None:
        """``send``: PCM16 at ``rate`` to the session (False: dropped); ``gated``: True while
        the microphone must not be heard (the robot speaks, and no echo canceller takes its
        voice out: the server's VAD would take it for the person); ``hear``: every frame,
        for anima's own VAD (the duplex rules' held voice); ``admit``: False for a frame that
        must not leave the robot (privacy: before the wake, :class:`WakeGate`)."""
        self._send = send
        self._admit = admit
        self._gated = gated
        self._hear = hear
        self._resampler = StreamResampler(SAMPLE_RATE, rate)  # none when rate is 16 kHz
        self.sent = 0  # frames sent
        self.dropped = 0  # frames with no open socket (or a full queue)
        self.gated = 0  # frames not sent while the robot spoke

    def frame(self, samples: Frame) -> None:
        if self._admit is not None and not self._admit(samples):
            return
        if self._hear is not None:
            self._hear(samples)
        if self._gated is not None and self._gated():
            self.gated += 1
            return
        pcm = self._resampler.feed(samples).astype("<i2").tobytes()
        if pcm and self._send(pcm):
            self.sent += 1
        else:
            self.dropped += 1

    def end(self, reason: str) -> None:
        log.info("realtime: the microphone ended (%s)", reason)


class RealtimeAgent:
    """A speech-to-speech model as the robot's agent (satisfies :class:`anima.parts.Agent`)."""

    def __init__(
        self,
        robot: RobotPort,
        registry: ActionRegistry,
        settings: RealtimePlannerConfig | GeminiLivePlannerConfig,
        agent: AgentConfig,
        *,
        key: str,
        source: AudioSource | None = None,
        echo_cancelled: bool = False,
        barge_in_s: float = 0.8,
        vad: Vad | None = None,
        spotter: Spotter | None = None,
        memory: Remembering | None = None,
    ) -> None:
        """``key``: the API key (sent as ``settings.auth`` says); ``source``: the microphone
        (16 kHz frames), None for none (typed requests only); ``echo_cancelled``: the source
        has the robot's voice taken out (full duplex), else it is not sent while the robot
        speaks; ``barge_in_s``: a voice over the robot this long stops it
        (``listen.barge_in_s``), judged by ``vad`` (loaded; None: by the server's VAD alone),
        which also pauses the voice at a voice's onset (``settings.yield_at_onset``);
        ``spotter``: the wake phrase's, when ``settings.listen_after_wake`` (privacy: no
        session until the wake, :mod:`~anima.agent.realtime.privacy`); ``memory``: what the
        robot remembers, told in the instructions (pinned and everyone's memories, ≤ 1,500
        tokens: the session has no request to choose by). Touches no network."""
        self.robot, self.registry, self.settings = robot, registry, settings
        self.memory = memory  # what it remembers (the doors read it)
        self.persona: Persona | None = None  # who it is (build_realtime_agent's)
        self.source = source
        self.executor = Executor.from_config(robot, agent, source="realtime")
        self.presence = Presence(
            robot.publish,
            robot.clock,
            robot.call_later,
            engaged_s=agent.engaged_s,
            sleep_after_s=agent.sleep_after_s,
        )
        instructions = settings.instructions
        if agent.instructions:
            instructions = f"{instructions}\n\n{agent.instructions}"
        if memory is not None:
            from anima.agent.remembering import memory_block

            remembered = memory_block(memory, "")
            if remembered:
                instructions = f"{instructions}\n\n{remembered}"
        brief = Brief(
            model=settings.model,
            voice=settings.voice,
            instructions=instructions,
            locale=agent.locale,
            stall_s=settings.stall_s,
            barge_in_s=barge_in_s,
        )
        parts = (robot, registry, self.executor, self.presence)
        self.session: Session | GeminiSession
        if isinstance(settings, GeminiLivePlannerConfig):
            self.connection = self._connection(gemini_wire.session_url(settings.url, key), {})
            self.session = GeminiSession(*parts, self.connection, brief=brief)
            send_audio, rate = self.session.send_audio, gemini_wire.INPUT_RATE
        else:
            headers = {
                "bearer": {"Authorization": f"Bearer {key}"},
                "api-key": {"api-key": key},
                "none": {},  # a local server that asks for no key
            }[settings.auth]
            self.connection = self._connection(session_url(settings.url, settings.model), headers)
            self.session = Session(*parts, self.connection.send, brief=brief)
            send_audio, rate = self._append, wire.RATE
        gate = None if echo_cancelled else (lambda: robot.speaking)
        hear = None
        if vad is not None:  # Gemini reports no voice: anima's VAD says when one starts and ends
            local = isinstance(self.session, GeminiSession)
            duplex = self.session.duplex
            duplex.listen_with(vad, yield_at_onset=settings.yield_at_onset, local_voice=local)
            hear = duplex.hear
        self.gate: WakeGate | None = None
        if settings.listen_after_wake:
            self.gate = WakeGate(robot, spotter, agent.engaged_s, self._open, self._close)
        admit = None if self.gate is None else self.gate.admit
        self.microphone = Microphone(send_audio, rate, gate, hear, admit)
        self._unsubscribe: Callable[[], None] | None = None
        self._said_lost = threading.Event()  # the lost line was said for this outage
        self.listener = None  # no text listener: the model hears (build's report reads it)

    def _connection(self, url: str, headers: dict[str, str]) -> Connection:
        settings = self.settings
        gemini = isinstance(settings, GeminiLivePlannerConfig)
        return Connection(
            url,
            headers,
            on_event=self._event,
            on_open=self._opened,
            on_lost=self._lost,
            on_idle=self._idle,
            reconnect_s=settings.reconnect_s,
            reconnect_max_s=settings.reconnect_max_s,
            decode=gemini_wire.decode if gemini else wire.decode,
        )

    def _append(self, pcm: bytes) -> bool:
        """OpenAI's microphone: appended to the input buffer (dropped when the queue is full)."""
        return self.connection.send(wire.audio_append(pcm), droppable=True)

    # ------------------------------------------------------------------ the Part
    def prepare(self) -> None:
        require_websockets()
        if self.gate is not None and self.gate.spotter is not None:
            self.gate.spotter.load()  # the wake phrase's model, at start

    def start(self) -> None:
        self._unsubscribe = self.robot.subscribe(self._estop, EStopChanged.kind)
        self.session.calls.start()
        if self.gate is None:
            self.connection.start()
        else:
            self.gate.start()  # the session opens on the wake
        if self.source is not None:
            self.source.start(self.microphone)

    def stop(self, timeout: float = PART_STOP_S) -> None:
        share = timeout / 4
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self.source is not None:
            self.source.stop(share)
        if self.gate is not None:
            self.gate.stop(share)
            if self.gate.spotter is not None:
                self.gate.spotter.close()
        self.connection.stop(share)
        self.executor.close(share)
        self.session.calls.stop(share)
        self.presence.close()

    # ------------------------------------------------------------------ the Agent
    def wake(self, source: str = "manual") -> None:
        """A wake (a door's Listen): whatever the robot says is cut, the model listens; with
        privacy on and no session open, the session opens."""
        if self.gate is not None and not self.gate.awake:
            self.gate.wake(source)
            return
        self.session.interrupt(f"wake ({source})")

    def hear(self, transcript: Transcript) -> None:
        """A typed request (a door's Ask): a user message and a response."""
        if transcript.final and transcript.text.strip():
            self.session.ask(transcript.text)

    @property
    def phase(self) -> ConversationPhase:
        return self.presence.state

    @property
    def connected(self) -> bool:
        return self.connection.open

    # ------------------------------------------------------------------ the connection's
    def _opened(self) -> None:
        self._said_lost.clear()
        self.session.opened()

    def _estop(self, event: Event) -> None:
        """The emergency stop: the plan is canceled, the response too, the voice cut where
        it was (the runtime has stopped it)."""
        if isinstance(event, EStopChanged) and event.active:
            self.executor.cancel("emergency stop")
            self.session.interrupt("emergency stop")

    def _idle(self, seconds: float) -> None:
        self.session.idle(seconds)

    def _event(self, event: dict[str, Any]) -> None:
        if self.gate is not None and (event.get("type") in VOICES or "serverContent" in event):
            self.gate.voice()  # the person's or the model's voice: the session stays
        try:
            self.session.handle(event)
        except SessionClosedError as exc:
            self.connection.drop(f"session.closed {exc}")

    def _open(self) -> None:
        """Privacy: the wake opens the session (the gate's thread)."""
        self.connection.start()
        self.presence.to("listening", "woken: the session opens")

    def _close(self) -> None:
        """Privacy: the session closed after the quiet time (the gate's thread)."""
        self.connection.stop(PART_STOP_S / 4)
        self.session.lost()
        self.presence.to("idle", "no voice for agent.engaged_s: the session is closed")

    def _lost(self, reason: str) -> None:
        log.warning("realtime: the session was lost: %s", reason)
        self.session.lost()
        if self._said_lost.is_set():
            return
        self._said_lost.set()
        try:
            self.robot.execute(cmd.Speak(text=LOST_LINE, locale=self.session.locale))
        except AnimaError as exc:
            log.warning("realtime: cannot say the connection was lost: %s", exc)


def session_url(url: str, model: str) -> str:
    """``url`` with ``?model=`` added when it names none (OpenAI's form)."""
    if "model=" in url.split("?", 1)[-1] and "?" in url:
        return url
    from urllib.parse import quote

    return f"{url}{'&' if '?' in url else '?'}model={quote(model, safe='')}"
