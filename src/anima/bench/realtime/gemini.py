"""The Gemini Live side of ``anima bench realtime``: the same person talking over the robot as
in :mod:`anima.bench.realtime.session`, against the scripted Live API server on 127.0.0.1.

The model's answer (4 s of the bench's voice) arrives whole with ``turnComplete``, as a Live
model sends it (faster than real time), so the server has nothing left to interrupt and sends
no ``interrupted``: only anima's duplex rules on its own VAD (``local_voice``, docs/realtime.md
*Gemini Live: barge-in*) can stop the robot. The server's ears
(:class:`~anima.testing.realtime_ears.GeminiEars`) send the person's words as
``inputTranscription``, each word as its voiced stretch ends. Conditions: a stop word, a held
voice, a backchannel, and the echo (a 96 ms burst the ears do not hear). Per condition: voice
onset → playback stopped (the pause at the onset), onset → cut (the voice stream's end,
``interrupted``), the stop word's transcript sent → cut, backchannels that stopped the robot
(target 0) and how long pauses lasted, false onsets; and the loop's missed ticks over the run.
No truncation to check: the Live API has none.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from anima import commands as cmd
from anima.agent.realtime.gemini import GeminiSession
from anima.bench.realtime.barge import (
    ECHO_WAIT_S,
    FRAME,
    WAIT_S,
    BargeFigures,
    Person,
    StopSink,
    bench_agent,
    bench_config,
    utterance,
    wait_quiet,
)
from anima.bench.realtime.voice import voice
from anima.bench.timed_driver import TimedDriver
from anima.clock import MonotonicClock
from anima.config.planner import GeminiLivePlannerConfig
from anima.events import SpeechEnded
from anima.listening.sources import PushSource
from anima.runtime import Runtime
from anima.testing.events import EventRecorder
from anima.testing.gemini_server import ScriptedGeminiServer, model_turn
from anima.testing.realtime_ears import GeminiEars
from anima.testing.realtime_server import ScriptedRealtimeServer
from anima.testing.tts import ScriptedEngine

SAYS = {
    "stop word": "stop",
    "held voice": "tell me more about the garden please",
    "backchannel": "mm-hmm",
    "echo": "",  # a burst anima's VAD hears and the server's ears do not
}
# after the person's last frame, a voice not cut is over: anima's VAD's end (16 frames) and
# the wait for its last words (0.3 s), with room
SETTLE_S = 1.2


@dataclass(kw_only=True)
class GeminiFigures:
    barge: list[BargeFigures] = field(default_factory=list)
    ticks: int = 0  # the loop's ticks over the run
    missed_ticks: int = 0


@dataclass(frozen=True)
class _Rig:
    runtime: Runtime
    server: ScriptedRealtimeServer
    ears: GeminiEars
    person: Person
    sink: StopSink
    session: GeminiSession
    events: EventRecorder


def run_gemini_bench(trials: int = 5) -> GeminiFigures:
    """``trials`` barge-ins of each condition."""
    clock = MonotonicClock()
    sink = StopSink(clock)
    runtime = Runtime(
        bench_config(), driver=TimedDriver(capacity=2_000), audio_sink=sink, tts=[ScriptedEngine()]
    )
    ears = GeminiEars()
    figures = GeminiFigures()
    with ScriptedGeminiServer(hear=ears) as server:
        runtime.start()
        try:
            mic = PushSource()
            agent = bench_agent(runtime, GeminiLivePlannerConfig(url=server.url), mic)
            server.wait_for("setup")
            assert isinstance(agent.session, GeminiSession)
            person = Person(mic)
            person.start()
            events = EventRecorder().attach(runtime.events)
            rig = _Rig(runtime, server, ears, person, sink, agent.session, events)
            before = runtime.engine.stats()
            try:
                _ready(agent.session)
                for condition, text in SAYS.items():
                    barge = BargeFigures(condition=condition)
                    for k in range(trials):
                        _trial(rig, text, k, barge)
                    figures.barge.append(barge)
            finally:
                after = runtime.engine.stats()
                figures.ticks = after.ticks - before.ticks
                figures.missed_ticks = after.missed - before.missed
                person.stop()
                runtime.detach_agent()
        finally:
            runtime.stop(ease=False)
    return figures


def _ready(session: GeminiSession) -> None:
    _until(lambda: session.ready, WAIT_S)
    if not session.ready:
        raise RuntimeError("the scripted Live server never completed the setup")


def _trial(rig: _Rig, text: str, k: int, f: BargeFigures) -> None:
    runtime, ears, person, sink = rig.runtime, rig.ears, rig.person, rig.sink
    duplex = rig.session.duplex
    f.trials += 1
    speech = utterance(f.condition, text, k)
    onset_sample = int(np.flatnonzero(np.abs(speech) > 300)[0])
    wait_quiet(runtime)
    # the last trial's voice has ended, for the ears and for anima's own VAD (its voice ends
    # after 16 unvoiced frames, 0.5 s): a stop word said while the last one's voice was still
    # open belonged to that voice, whose rule had decided already (1 trial in 3-4 was not
    # stopped in a fast hour, when trials came 0.7 s apart)
    _until(lambda: not ears.voiced and not duplex.voice_open, WAIT_S)
    stops, starts, heard = len(sink.stops), len(sink.starts), len(ears.heard_at)
    false_onsets, cuts = duplex.false_onsets, len(duplex.stops)
    mark = rig.events.mark()
    sink.new_item()
    threshold = ears.threshold
    if f.condition == "echo":
        ears.threshold = float("inf")
    else:
        ears.say(text)
    rig.server.push(*model_turn(audio=voice(4.0)))  # whole, with turnComplete
    _until(lambda: runtime.speaking, WAIT_S)
    time.sleep(0.3)
    person.say(speech)
    spoken = len(speech) / 16_000
    wait = ECHO_WAIT_S if f.condition == "echo" else spoken + SETTLE_S
    _until(lambda: len(duplex.stops) > cuts, min(wait, WAIT_S))
    ears.threshold = threshold
    pushed = list(person.pushed)
    cut = len(duplex.stops) > cuts
    if not cut:  # a pause resumes: its restart noted (a loaded machine's may come late)
        _until(lambda: len(sink.starts) > starts + 1, WAIT_S)
    person.say(np.zeros(0, np.int16))  # cut short by the robot's stop, as a person would be
    frame = onset_sample // FRAME
    onset = None
    if len(pushed) > frame:
        onset = pushed[frame] - ((frame + 1) * FRAME - onset_sample) / 16_000

    def interrupted() -> list[SpeechEnded]:
        return [e for e in rig.events.of(SpeechEnded, since=mark) if e.reason == "interrupted"]

    if cut:  # the event hub delivers its end_speak on its own thread
        _until(lambda: bool(interrupted()), 1.0)
    ended = interrupted()
    words = ears.heard_at[heard:]
    _tally(
        f,
        onset,
        ended[0].t if cut and ended else None,
        stops=sink.stops[stops:],
        starts=sink.starts[starts:],
        rule=words[0] if words and f.condition == "stop word" else None,
    )
    f.false_onsets += duplex.false_onsets - false_onsets
    runtime.execute(cmd.StopSpeaking())


def _until(done: Callable[[], bool], seconds: float) -> None:
    """Poll ``done`` every 5 ms until it is true or ``seconds`` have passed."""
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        time.sleep(0.005)


def _tally(
    f: BargeFigures,
    onset: float | None,
    cut: float | None,
    *,
    stops: list[tuple[float, float]],
    starts: list[float],
    rule: float | None,
) -> None:
    """One trial's figures: ``onset`` of the voice, when the voice stream was cut (None: it
    was not), the sink's ``stops`` and ``starts`` since the trial began, when the rule had its
    evidence (the stop word's transcript sent)."""
    mine = [stop for stop in stops if onset is not None and stop[0] >= onset]
    if cut is not None and (onset is None or not mine or cut < onset):
        f.early += 1  # cut before the person's voice began: not this trial's barge-in
        return
    if onset is None or not mine:
        return
    first = mine[0][0]
    f.onset_to_stop_ms.append((first - onset) * 1e3)
    if cut is None:
        resumed = [t for t in starts if t > first]
        if resumed:
            f.paused += 1
            f.paused_ms.append((resumed[0] - first) * 1e3)
        return
    f.stopped += 1
    f.paused += first < cut - 0.005  # the onset's pause came before the cut
    f.onset_to_cut_ms.append((cut - onset) * 1e3)
    if rule is not None:
        f.rule_to_stop_ms.append((cut - rule) * 1e3)
