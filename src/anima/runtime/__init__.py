"""The core of one robot: body, driver, motion, behaviour, speech; ``execute``, the one way in
(:mod:`.commands`); a typed state snapshot (:mod:`.state`); the start/stop order of its parts.

Start, the garbage collector paused (:func:`~anima.motion.priority.collector_paused`): event
hub → driver.connect() → motion loop and timers (the first tick, ``on_moving``: `anima serve`
2.4 → 0.7 s) → speech engines, each part's ``prepare`` (imports, models), voices → animations
→ idle life → speech → humanoid link → front doors and agent. No tick missed while they load.
Stop: speech (every utterance gets its ``end_speak``, reason ``shutdown``) → the event hub
delivers what was published → front doors and agent (last attached first) → humanoid link →
idle life → timers → ease the body to its rest posture (bounded in time) → motion loop →
driver.disconnect() → event hub. A start that fails part-way stops exactly what it prepared
or started. Which humanoid, doors and agent there are is the composition root's choice
(:mod:`anima.build`).

An emergency stop, from any front door, comes through :meth:`Runtime.execute`: motion holds,
speech stops (``end_speak`` reason ``estop``) and both are refused until the reset.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, overload

from anima import commands as cmd
from anima.animation.library import AnimationLibrary, configured_folders
from anima.behaviour.body_language import BodyLanguage
from anima.behaviour.controller import Behaviour
from anima.behaviour.idle_life import IdleLife
from anima.behaviour.rest import ease_to_rest
from anima.behaviour.vocabulary import Vocabulary
from anima.body import Body, load_body
from anima.clock import Clock
from anima.commands import LookAtResult
from anima.config import AnimaConfig
from anima.drivers import Driver, create_driver
from anima.errors import EngineStateError
from anima.events import Event, EventHub, Notice
from anima.health import HealthMonitor
from anima.humanoid.spec import RobotState

if TYPE_CHECKING:
    from anima.attention.part import AttentionPart
    from anima.humanoid.link import HumanoidLink
    from anima.speech.base import AudioSink, TTSEngine
    from anima.speech.reference import PlaybackReference
    from anima.speech.service import SpeechService
from anima.motion.engine import MotionEngine
from anima.motion.priority import SwitchInterval, collector_paused
from anima.parts import Agent, Part, Parts
from anima.runtime.commands import carry_out
from anima.runtime.state import loop_state, runtime_state
from anima.speech.startup import load_voices, speech_engines, start_speech
from anima.timers import Timers
from anima.wire.state import LoopState, RuntimeState

log = logging.getLogger(__name__)


MAX_SKIPPED_SHOWN = 5  # skipped animation files named in a reload's summary (the rest counted)


class Runtime:
    """One robot's runtime: body, driver, motion engine and event hub, started in order."""

    def __init__(
        self,
        config: AnimaConfig | None = None,
        *,
        body: Body | None = None,
        driver: Driver | None = None,
        clock: Clock | None = None,
        tts: Sequence[TTSEngine] | None = None,
        audio_sink: AudioSink | None = None,
        humanoid: HumanoidLink | None = None,
    ) -> None:
        """Parts given here replace the configured ones (tests, custom engines). The humanoid
        link, the agent and the front doors are the composition root's to add
        (:func:`anima.build.build`)."""
        self.config = config or AnimaConfig()
        self._tts = list(tts) if tts is not None else None
        self._audio_sink = audio_sink
        self.body = body or load_body(self.config.body.checker_ini)
        self.events = EventHub()
        self.driver = driver or create_driver(self.config.driver, self.body)
        self.engine = MotionEngine(
            self.body, self.driver, clock=clock, config=self.config.motion, events=self.events
        )
        self.library = AnimationLibrary(
            configured_folders(self.config.animation, self.body.animations), len(self.body)
        )
        self.behaviour = Behaviour(
            self.engine,
            self.library,
            self.events,
            self.engine.clock,
            config=self.config.behaviour,
            animation=self.config.animation,
        )
        # callbacks at a time on the engine's clock (idle life, the conversation's phases)
        self.timers = Timers(self.engine.clock)
        self.idle_life = IdleLife(
            self.behaviour, self.timers, every_s=self.config.behaviour.full_blink_every_s
        )
        # the conversation's phase on the body (follows the agent's conversation events)
        self.body_language = BodyLanguage(self.behaviour, self.events, self.config.body_language)
        # the humanoid link, then the front doors and the agent as attached: started last,
        # stopped first, once speech ended
        self.parts = Parts()
        self.speech: SpeechService | None = None  # created at start when an engine loads
        self.humanoid = humanoid  # when humanoid.type is sim or adam (anima.build)
        if humanoid is not None:
            self.parts.add(humanoid, running=False)
        self.agent: Agent | None = None  # the voice agent, when attached (attach_agent)
        self.attention: AttentionPart | None = None  # social attention (attach_attention)
        # full duplex (listen.duplex): what the speech sink really plays, for the echo canceller
        self.playback: PlaybackReference | None = None
        # also for a microphone array (or a Reachy Mini daemon's, attention.daemon_voice): its
        # voice direction must know the robot's own voice
        cfg = self.config
        daemon_voice = cfg.driver.type == "reachy_mini" and cfg.attention.daemon_voice
        if cfg.listen.duplex or cfg.listen.mics or daemon_voice:
            from anima.speech.reference import PlaybackReference

            self.playback = PlaybackReference()
        self.speech_problem = "speech has not started (the runtime is not running)"
        self._started = False
        self._stepped = False
        self._lock = threading.Lock()
        self._switch = SwitchInterval(self.config.motion.switch_interval_ms)

    def start(
        self, *, stepped: bool = False, on_moving: Callable[[], object] | None = None
    ) -> None:
        """Start every part in order. ``stepped``: the motion loop, the event hub and the
        timers get no thread; :meth:`step` runs them, one tick at a time (the fake-time
        harness, :class:`anima.testing.FakeTimeRobot`). Speech, the agent and the doors run
        their threads either way. ``on_moving``: called once the loop has run its first tick,
        before the rest loads (``anima serve`` says so)."""
        with collector_paused():
            engines = self._start_core(stepped, on_moving)
            try:
                self._start_speech(engines)
                self.parts.start()
            except BaseException:
                # a part that cannot start (a taken port, an unreachable robot) stops the ones
                # that did, and the core
                self.stop(ease=False)
                raise

    def _start_core(self, stepped: bool, on_moving: Callable[[], object] | None) -> list[TTSEngine]:
        """The core and every part prepared; the speech engines to start with."""
        with self._lock:
            if self._started:
                raise EngineStateError("runtime already started")
            self._stepped = stepped
            undo: list[Callable[[], object]] = []  # what started, to stop if the next fails
            try:
                undo.append(self.parts.stop)
                if not stepped:
                    self.events.start()
                undo.append(self.events.stop)
                self.driver.connect()
                undo.append(self.driver.disconnect)
                if not stepped:
                    self._switch.apply()  # a tick waits at most this long for the GIL
                    undo.append(self._switch.restore)
                    self.engine.start()
                    undo.append(self.engine.stop)
                    self.timers.start()
                    self.wait_first_tick()
                undo.append(self.timers.stop)
                if on_moving is not None:
                    on_moving()
                engines, problem = speech_engines(self.config.speech, self._tts)
                self.speech_problem = problem or self.speech_problem
                self.parts.prepare()  # model loads and imports, beside the running loop
                load_voices(engines)
                self.reload_animations()
                self.idle_life.start()
            except BaseException:
                # a driver that cannot connect (a port missing) left the events thread running
                for stop in reversed(undo):
                    try:
                        stop()
                    except Exception:  # the first error is the one to report
                        log.exception("stopping a part that started failed")
                raise
            self._started = True
            return engines

    def step(self, ticks: int = 1) -> None:
        """Run ``ticks`` motion ticks on this thread, each followed by the events it published
        and the timers it made due (a runtime started with ``stepped=True``)."""
        if not (self._started and self._stepped):
            raise EngineStateError("step() runs a runtime started with stepped=True")
        for _ in range(ticks):
            self.engine.run(1)
            self.events.drain()
            self.timers.run_due()
            self.events.drain()  # what the timers published

    def _start_speech(self, engines: list[TTSEngine]) -> None:
        if engines:
            self.speech = start_speech(
                self.config.speech,
                engines,
                engine=self.engine,
                behaviour=self.behaviour,
                events=self.events,
                sink=self._audio_sink,
                playback=self.playback,
            )

    @property
    def frontdoors(self) -> list[Part]:
        """The parts attached (front doors, an owned broker, the agent), in start order; a
        :class:`~anima.parts.Deferred` part's own parts once it made them."""
        return [p for p in self.parts.flat() if p is not self.humanoid]

    def attach(self, door: Part) -> None:
        """Add a front door: started after the runtime, stopped before it (prepared and
        started at once when the runtime runs)."""
        self.parts.add(door, running=self._started)

    def attach_agent(self, agent: Agent) -> None:
        """Attach the voice agent: :class:`~anima.commands.Listen` and
        :class:`~anima.commands.Ask` reach it; started and stopped as a front door."""
        if self.agent is not None:
            raise EngineStateError("an agent is already attached")
        self.agent = agent
        self.attach(agent)

    def detach_agent(self) -> None:
        """Stop the attached agent (when started) and take it away; Listen and Ask are then
        refused. A benchmark tries one planner after another on one runtime."""
        agent, self.agent = self.agent, None
        if agent is not None:
            self.parts.remove(agent)

    # --- what the agent sees of the robot (anima.agent.port.RobotPort) ----------------------
    @property
    def speaking(self) -> bool:
        """True while an utterance plays or waits."""
        return self.speech is not None and self.speech.speaking

    @property
    def clock(self) -> Clock:
        return self.engine.clock

    @property
    def estopped(self) -> bool:
        return self.engine.estopped

    @property
    def moving(self) -> bool:
        """A primary move runs or waits (one just asked for included)."""
        return not self.engine.is_idle

    def vocabulary(self) -> Vocabulary:
        """The names the agent may use; loads the library when nothing was loaded yet (the
        agent is built before the runtime starts)."""
        if len(self.library) == 0:
            self.library.load()
        humanoid = self.humanoid is not None
        return Vocabulary.of(self.library, self.behaviour.config, humanoid=humanoid)

    def subscribe(self, handler: Callable[[Event], None], *kinds: str) -> Callable[[], None]:
        return self.events.subscribe(handler, *kinds)

    def call_later(self, seconds: float, fn: Callable[[], None]) -> Callable[[], None]:
        """Call ``fn`` after ``seconds`` on the runtime's clock; returns its cancel."""
        return self.timers.call_later(seconds, fn)

    def publish(self, event: Event) -> None:
        self.events.publish(event)

    def prepare_speech(self, texts: Sequence[str], locale: str) -> None:
        if self.speech is not None:
            self.speech.prepare(texts, locale)

    def reload_animations(self) -> str:
        """(Re)load the animation folders without stopping anything; returns a summary. A load
        that fails as a whole (the process out of descriptors) keeps the animations there were:
        it used to skip every file as unreadable and leave none."""
        try:
            summary = self.library.load().summary(MAX_SKIPPED_SHOWN)
        except OSError as exc:
            kept = self.library.last_report.loaded
            summary = (
                f"animations: reload failed ({exc.strerror or exc}): the {kept} loaded before "
                "are kept"
            )
            log.error(summary)
        else:
            log.info(summary)
        self.events.publish(Notice(t=self.engine.clock.now(), source="animations", message=summary))
        return summary

    @overload
    def execute(self, command: cmd.PlayAnimation) -> cmd.Played: ...
    @overload
    def execute(self, command: cmd.Speak) -> cmd.Spoken: ...
    @overload
    def execute(self, command: cmd.OpenVoiceStream) -> cmd.VoiceStreamOpened: ...
    @overload
    def execute(self, command: cmd.LookAt) -> LookAtResult: ...
    @overload
    def execute(self, command: cmd.HumanoidCommand) -> cmd.HumanoidAnswer: ...
    @overload
    def execute(self, command: cmd.ReadHumanoidState) -> RobotState: ...
    @overload
    def execute(self, command: cmd.Command) -> cmd.Result: ...

    def execute(self, command: cmd.Command) -> cmd.Result:
        """Carry out a typed command from any front door; AnimaError when refused. A
        :class:`~anima.commands.PlayAnimation` whether it became an idle layer, a
        :class:`~anima.commands.Speak` its utterance's id, a
        :class:`~anima.commands.LookAt` what the gaze did, a humanoid command the robot's
        answer (a gRPC round trip: call it off a network thread), :class:`~anima.commands.
        ReadHumanoidState` the robot's state; the rest give None (:mod:`.commands`)."""
        return carry_out(self, command)

    def wait_first_tick(self, timeout: float = 2.0) -> bool:
        """Block until the motion loop has sent its first frame (True) or timeout (False)."""
        return self.engine.wait_first_tick(timeout)

    def ease_to_rest(self, timeout: float | None = None) -> bool:
        """Blend the whole body to its rest posture (``body.rest_posture``) and end idle life;
        True when it got there within ``timeout`` (``serve.shutdown_s``)."""
        timeout = self.config.serve.shutdown_s if timeout is None else timeout
        return ease_to_rest(self.engine, self.body, self.config.body.rest_posture, timeout)

    def attach_attention(self, attention: AttentionPart) -> None:
        """Attach social attention (docs/attention.md): its state is the state's
        ``attention``; started and stopped as a front door."""
        if self.attention is not None:
            raise EngineStateError("attention is already attached")
        self.attention = attention
        self.attach(attention)

    @functools.cached_property
    def health(self) -> HealthMonitor:
        """The robot's health with its warnings (:mod:`anima.health`), made on first use."""
        return HealthMonitor(self)

    def loop_state(self) -> LoopState:
        """The motion loop's statistics: percentiles over thousands of ticks, so a reader that
        asks many times a second keeps them a while (``frontdoors.state.StateReader``)."""
        return loop_state(self)

    def state(self, loop: LoopState | None = None) -> RuntimeState:
        """The runtime's state now, as every front door and the SDK report it; ``loop``: the
        loop's statistics when the caller has recent ones (else computed now)."""
        return runtime_state(self, loop)

    def stop(self, *, ease: bool = True) -> None:
        with self._lock:
            if not self._started:
                return
            try:
                if self.speech is not None:
                    # before the doors: every start_speak they sent gets its end_speak
                    self.speech_problem = "the runtime is stopping"
                    try:
                        self.speech.stop("shutdown")
                    except Exception:  # a failing sink must not keep the doors open
                        log.exception("stopping speech failed")
                    self.speech = None
                if not self.events.flush(1.0):  # the doors hear those ends before they close
                    log.warning("events still undelivered when the front doors stop")
                self.parts.stop()  # the doors (last attached first), then the humanoid link
                self.idle_life.stop()
                self.timers.stop()
                if ease and not self._stepped:  # a stepped loop moves only when stepped
                    reached = self.ease_to_rest()
                    log.info("eased to rest posture" if reached else "stopped before rest")
            finally:
                self.engine.stop()
                self.driver.disconnect()
                self.events.stop()
                self._switch.restore()
                self._started = False

    def __enter__(self) -> Runtime:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop(ease=exc_type is None)
