"""One trial of ``anima bench conversation``: a request spoken to the running agent, and what
the robot did about it (:class:`Harness`).

The request is pushed frame by frame as fast as the listener takes it, waiting for each (so the
listener is never behind, as with a microphone); from the moment the person stops speaking the
rest — the trailing audio and the room's noise — is pushed in real time, so everything after it
(endpoint, recognition, planning, speech, motion) runs on the wall clock and is timed there,
stage by stage (:class:`~anima.bench.conversation.figures.Stages`: the listener's round report,
the transcript, the conversation's :attr:`~anima.agent.conversation.Conversation.timings`, the
speech request, the sink's first chunk and its first audible sample). The
trial ends when the robot has been idle for a moment after the round, or at a deadline; nothing
at all happening for a while fast-forwards the listener's wait. Each trial starts from the same
robot: no round left recording, no gaze posture held, nothing moving or said.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from anima import commands as cmd
from anima.agent.conversation import Conversation
from anima.audio import FRAME_S, FRAME_SAMPLES, SAMPLE_RATE, Framer
from anima.bench.conversation.audio import Room, Samples, Speaker, last_loud
from anima.bench.conversation.figures import Stages, Trial, word_errors
from anima.bench.conversation.judge import Observed, judge
from anima.bench.conversation.logs import EventLog, RoundLog, StampedSink
from anima.bench.conversation.requests import Request
from anima.build import attach_agent, build
from anima.config import AnimaConfig
from anima.drivers.sim import SimDriver
from anima.errors import AnimaError
from anima.events import (
    ActionStatus,
    Event,
    ListenTimeout,
    MoveFinished,
    MoveStarted,
    PlanFinished,
    PlanStarted,
    SpeechEnded,
    SpeechStarted,
    Transcript,
    WakeDetected,
)
from anima.listening import Listener, PushSource

Mode = Literal["wake", "ptt", "text"]  # text: the request's words as cmd.Ask (no audio)
TEXT = "text"  # the voice and room of a text trial
PRE_GESTURE = "LOOKUP_Waving"  # what the robot is doing when a stop request is spoken (4.6 s)
# steps that move the robot: their start is its first motion (the engine or the humanoid takes the
# command at once). Not MoveStarted: idle life (a full blink now and then) and the wake's glance
# start moves of their own.
MOVING_STEPS = frozenset(
    {"play_animation", "look_at", "look_at_target", "walk_forward", "walk_backward", "turn",
     "stand_motion", "posture", "set_gait"}
)  # fmt: skip
WAKE_GAP_S = 0.35  # the pause people leave after "hey robot"
# the room before each request: longer than the wake spotter's noise floor (2 s of steady
# level), so what it hears does not depend on how long the trial before went on (the stream
# pauses between trials; a room does not)
LEAD_S = 2.5
WAKE_WAIT_S = 4.0  # no wake this long after the request: the phrase was missed (a spotter on
# the ASR reports it when the speech stretch ends and is decoded: late on a loaded machine)
DRAIN_S = 20.0  # at most this much silence pushed to end a round left over from a trial
STALL_S = 2.5  # nothing at all this long after the request: fast-forward the listener's wait
SETTLE_S = 0.8  # idle this long after the round: the trial is over
TRIAL_S = 10.0  # at most this long after the person stopped speaking
HUMANOID_TRIAL_S = 20.0  # … for humanoid requests (bring-up: Start → Zero → Stand → Walk)


@dataclass(frozen=True, kw_only=True)
class Condition:
    voice: str
    noise: str
    mode: Mode


class Harness:
    """The runtime, the conversation and the listener for one run; trials one at a time."""

    def __init__(self, config: AnimaConfig, speaker: Speaker) -> None:
        self.speaker = speaker
        self.sink = StampedSink()
        self.log = EventLog()
        self.round_log = RoundLog()
        self._early_from = 0  # the conversation's early replies when the trial began
        self.source = PushSource()
        self.framer = Framer()
        self.runtime = build(config, doors=False, driver=SimDriver(), audio_sink=self.sink)
        self.conversation: Conversation | None = None
        self.listener: Listener | None = None

    def start(self) -> None:
        rt = self.runtime
        rt.events.subscribe(self.log.add)
        # the agent's own wiring, started with the runtime and stopped with it
        conversation = attach_agent(rt, audio_in=self.source, on_round=self.round_log.add)
        self.listener = conversation.listener
        self.conversation = conversation
        rt.start()

    def stop(self) -> None:
        self.runtime.stop(ease=False)

    # ------------------------------------------------------------------ feeding audio
    def push_fast(self, samples: Samples) -> None:
        """Frame by frame, each waited for: the listener is never behind."""
        assert self.listener is not None
        for frame in self.framer.feed(samples):
            self.source.push(frame)
            if not self.listener.sync(10.0):
                raise AnimaError("conversation bench: the listener stopped answering")

    def push_paced(
        self,
        samples: Samples,
        room: Room,
        *,
        until: Callable[[], bool],
        stalled: Callable[[], bool],
        deadline: float,
    ) -> bool:
        """``samples`` then the room's noise, one frame per 32 ms of wall time, until
        ``until()`` or ``deadline`` (monotonic). Once ``stalled()`` (nothing has happened for a
        while: the listener waits out a timeout on audio time) the rest goes as fast as the
        listener takes it; True when that happened (the trial's latencies are then not real)."""
        assert self.listener is not None
        frames = self.framer.feed(samples)
        start = time.monotonic()
        fast = False
        for n in itertools.count():
            now = time.monotonic()
            if now >= deadline or (n >= len(frames) and until()):
                return fast
            fast = fast or stalled()
            if fast:
                self.listener.sync(10.0)
            else:
                time.sleep(max(0.0, start + n * FRAME_S - now))
            frame = frames[n] if n < len(frames) else room.mix(np.zeros(FRAME_SAMPLES, np.int16))
            self.source.push(frame)
        return fast

    # ------------------------------------------------------------------ one trial
    def trial(
        self, request: Request, cond: Condition, room: Room, wake_audio: Samples | None
    ) -> Trial:
        began = time.monotonic()
        self._settle()
        assert self.conversation is not None
        self._early_from = self.conversation.early_replies  # replies begun early before it
        if cond.mode == "text":
            return self._text_trial(request, cond, room, began)
        assert wake_audio is not None
        command = self.speaker.say(cond.voice, request.text)
        room.level_for(command)
        t0 = time.monotonic()
        if request.kind == "stop":
            self._pre_gesture(t0)
        self.push_fast(room.quiet(LEAD_S))
        if cond.mode == "ptt":
            assert self.conversation is not None
            self.conversation.wake("manual")
            audio = command
        else:
            gap = np.zeros(round(WAKE_GAP_S * SAMPLE_RATE), dtype=np.int16)
            audio = np.concatenate([wake_audio, gap, command])
        mixed = room.mix(audio)
        cut = len(audio) - len(command) + last_loud(command)
        self.push_fast(mixed[:cut])
        t_end = time.monotonic()  # the person has stopped speaking
        limit = HUMANOID_TRIAL_S if request.humanoid else TRIAL_S
        fast = self.push_paced(
            mixed[cut:], room,
            until=lambda: self._over(t0, t_end, cond.mode, request),
            stalled=lambda: self._stalled(t_end),
            deadline=t_end + limit,
        )  # fmt: skip
        return self._finish(request, cond, t0=t0, t_end=t_end, fast=fast, began=began)

    def _text_trial(self, request: Request, cond: Condition, room: Room, began: float) -> Trial:
        """The request's words straight to the agent (``cmd.Ask``): understanding alone."""
        t0 = time.monotonic()
        if request.kind == "stop":
            self._pre_gesture(t0)
        t_end = time.monotonic()
        self.runtime.execute(cmd.Ask(text=request.text))
        limit = HUMANOID_TRIAL_S if request.humanoid else TRIAL_S
        fast = self.push_paced(
            np.zeros(0, np.int16), room,
            until=lambda: self._over(t0, t_end, cond.mode, request),
            stalled=lambda: False, deadline=t_end + limit,
        )  # fmt: skip
        return self._finish(request, cond, t0=t0, t_end=t_end, fast=fast, began=began)

    def _finish(
        self,
        request: Request,
        cond: Condition,
        *,
        t0: float,
        t_end: float,
        fast: bool,
        began: float,
    ) -> Trial:
        self._abandon()
        seen, audio_t, motion_t, heard = self._observe(t0, t_end, cond.mode, request)
        stages = Stages() if fast else self._stages(t0, t_end)
        assert self.conversation is not None
        verdict = judge(request, seen, self.conversation.registry)
        spoken = cond.mode != "text"  # a text trial has no word error
        return Trial(
            text=request.text, category=request.category, split=request.split,
            voice=cond.voice, noise=cond.noise, mode=cond.mode,
            correct=verdict.correct, outcome=verdict.outcome, detail=verdict.detail,
            kind=request.kind, woke=seen.woke if cond.mode == "wake" else None,
            transcript=heard if spoken else request.text,
            word_errors=word_errors(request.text, heard) if spoken else 0,
            words=len(request.text.split()) if spoken else 0,
            first_audio_ms=None if audio_t is None or fast else (audio_t - t_end) * 1e3,
            first_motion_ms=None if motion_t is None or fast else (motion_t - t_end) * 1e3,
            fast_forwarded=fast,
            seconds=time.monotonic() - began,
            stages=stages,
        )  # fmt: skip

    def _pre_gesture(self, t0: float) -> None:
        started = threading.Event()
        unsubscribe = self.runtime.events.subscribe(
            lambda e: (
                started.set() if isinstance(e, MoveStarted) and e.name == PRE_GESTURE else None
            ),
            MoveStarted.kind,
        )
        try:
            self.runtime.execute(cmd.PlayAnimation(name=PRE_GESTURE))
            started.wait(2.0)
        finally:
            unsubscribe()

    def _over(self, t0: float, t_end: float, mode: Mode, request: Request) -> bool:
        """The round ended, nothing runs or speaks, and nothing happened for SETTLE_S; or the
        wake phrase went unheard (nothing will happen)."""
        events = self.log.since(t0)
        now = time.monotonic()
        woke = any(isinstance(e, WakeDetected) for _, e in events)
        if mode == "wake" and not woke and now - t_end > WAKE_WAIT_S:
            return request.kind != "stop" or not self._pre_moving(events)
        if not events:
            return False
        round_over = mode == "text" or any(
            isinstance(e, ListenTimeout) or (isinstance(e, Transcript) and e.final)
            for _, e in events
        )
        plans = {e.plan for _, e in events if isinstance(e, PlanStarted)}
        done = {e.plan for _, e in events if isinstance(e, PlanFinished)}
        talks = {e.utterance for _, e in events if isinstance(e, SpeechStarted)}
        ended = {e.utterance for _, e in events if isinstance(e, SpeechEnded)}
        moving = request.kind == "stop" and self._pre_moving(events)
        if not round_over or plans - done or talks - ended or moving or self.runtime.speaking:
            return False
        return now - max(t for t, _ in events) > SETTLE_S

    def _stalled(self, t_end: float) -> bool:
        """Nothing at all has happened since the person stopped speaking, for STALL_S."""
        now = time.monotonic()
        return now - t_end > STALL_S and not self.log.since(t_end)

    @staticmethod
    def _pre_moving(events: Sequence[tuple[float, Event]]) -> bool:
        return not any(isinstance(e, MoveFinished) and e.name == PRE_GESTURE for _, e in events)

    def _abandon(self) -> None:
        """At the deadline: whatever still runs is canceled, so the next trial starts clean."""
        assert self.conversation is not None
        self.conversation.executor.cancel("bench: trial over")
        if self.runtime.speech is not None and self.runtime.speaking:
            self.runtime.speech.stop_speaking()

    def _settle(self) -> None:
        """Before a trial: no round left over (a trial cut at its deadline while the listener
        still recorded babble would hand its transcript to the next), no gaze posture held,
        nothing moving or said."""
        assert self.listener is not None
        assert self.conversation is not None
        if self.listener.recording:
            silence = np.zeros(FRAME_SAMPLES, np.int16)
            for _ in range(round(DRAIN_S / FRAME_S)):
                if not self.listener.recording:
                    break
                self.push_fast(silence)
            self.listener.sync(10.0)
            self.runtime.events.flush(1.0)
            time.sleep(0.2)  # the conversation's worker takes the transcript, if any
            self.conversation.interrupt(WakeDetected(t=time.monotonic(), source="bench"))
        behaviour = self.runtime.behaviour
        if behaviour.latched_target is not None:  # each trial from the same start: a gaze
            # posture held from the last one would refuse the next look_at ("latched")
            self.runtime.execute(cmd.LookAtTarget(name=behaviour.config.default_posture))
        self.runtime.engine.wait_until_idle(6.0)
        deadline = time.monotonic() + 6.0
        while self.runtime.speaking and time.monotonic() < deadline:
            time.sleep(0.02)
        self.runtime.events.flush(1.0)

    def _observe(
        self, t0: float, t_end: float, mode: Mode, request: Request
    ) -> tuple[Observed, float | None, float | None, str]:
        self.runtime.events.flush(1.0)
        seen = Observed(woke=mode != "wake")  # heard by the spotter, in wake mode
        motion: list[float] = []
        heard: list[str] = []
        for t, e in self.log.since(t0):
            if isinstance(e, WakeDetected) and e.source != "manual":
                seen.woke = seen.woke or mode == "wake"
            elif isinstance(e, Transcript) and e.final:
                heard.append(e.text)
            elif isinstance(e, PlanStarted):
                seen.plans.append(tuple(e.steps))
            elif isinstance(e, ActionStatus):
                if e.status == "failed":
                    seen.failed.append(f"{e.step}: {e.message}"[:160])
                elif e.status == "running" and e.action in MOVING_STEPS and t >= t_end:
                    motion.append(t)
            elif isinstance(e, SpeechStarted) and t >= t_end:
                seen.spoken.append(e.text)
            elif isinstance(e, MoveFinished) and e.name == PRE_GESTURE and e.cut and t >= t_end:
                seen.pre_cut = True
        onsets = [o.audible for o in self.sink.since(t_end) if o.audible is not None]
        first_audio = min(onsets) if onsets else None
        return seen, first_audio, min(motion) if motion else None, " ".join(heard)

    def _stages(self, t0: float, t_end: float) -> Stages:
        """The moments between the person stopping and the first audible reply (see
        :class:`Stages`), each the first one after the moment before."""
        events = self.log.since(t0)
        heard = next((t for t, e in events if isinstance(e, Transcript) and e.final), None)
        turn = next((r.decided_arrival_t for r in self.round_log.finals_since(t0)), None)
        assert self.conversation is not None
        timings = [x for x in list(self.conversation.timings) if x.heard_t >= t_end]
        planned = next(
            (x.planned_t for x in timings if heard is not None and abs(x.heard_t - heard) < 1e-9),
            None,
        )
        first = timings[0] if timings else None
        begun = self.conversation.early_replies > self._early_from  # in this trial
        early = begun and first is not None and (heard is None or first.heard_t < heard - 1e-9)
        if early and first is not None:
            # full duplex's early reply: planned from the reading at the pause (not an event),
            # before the final; the end of turn is then to that reading, the pause and the
            # read-ahead's decode together (its transcript stage 0)
            turn = heard = first.heard_t
            planned = first.planned_t
        # start_speak goes out as the utterance's first audio is handed to the sink (the
        # player's show, just before the write the sink stamps), so the reply's onset is the
        # first one after the plan, and start_speak → 1st chunk is the hand-over (≈ 0)
        since = planned or t_end
        spoke = next((t for t, e in events if isinstance(e, SpeechStarted) and t >= since), None)
        onset = next(iter(self.sink.since(since)), None) if spoke is not None else None
        chunk = None if onset is None or spoke is None else max(onset.started, spoke)
        moments = [
            t_end, turn, heard, planned, spoke, chunk, onset.audible if onset else None,
        ]  # fmt: skip
        gaps: list[float | None] = []
        for before, after in itertools.pairwise(moments):
            gaps.append(None if before is None or after is None else (after - before) * 1e3)
        return Stages(
            turn_end=gaps[0], transcript=gaps[1], plan=gaps[2], speak=gaps[3], chunk=gaps[4],
            onset=gaps[5],
        )  # fmt: skip
