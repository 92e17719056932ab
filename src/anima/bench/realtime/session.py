"""The session side of ``anima bench realtime``: the realtime brain on a runtime (the sim driver,
the real clock, the null sink) talking to the scripted server on 127.0.0.1, with a scripted
person speaking into its microphone.

* **tool call → first moving frame**: from the server sending
  ``response.function_call_arguments.done`` (``play_animation nod``) to the first frame the
  driver is sent that differs from the rest before it (target ≤ 50 ms p95);
* **barge-in**: the server plays a 4 s answer (a burst, as OpenAI sends it); 0.5 s into its
  playback a person speaks into the microphone (a :class:`~anima.listening.sources.PushSource`
  fed the scripted TTS voice in 32 ms frames at real-time pace, as an echo-cancelled microphone
  would give it: the robot's voice is not in it). The server's ears
  (:class:`~anima.testing.realtime_ears.ServerEars`, an energy VAD, each word transcribed as it
  ends) report the voice; anima's own VAD hears the microphone too (``listen_with``: an energy
  VAD), so the robot's voice yields at the onset and the duplex rules decide. Per condition:
  voice onset (the first loud sample, at the wall time its frame was pushed) → playback stopped
  (the sink's first stop after it: the pause; target ≤ 100 ms p95), onset → cut (the rule's
  decision: the truncate sent), the rule's evidence (the stop word's transcript delta sent; for
  a held voice ``speech_started`` + ``barge_in_s``) → cut; ``audio_end_ms`` of the truncate
  against what the sink had played of the item at its last stop before it (±20 ms);
  backchannels that stopped it (target 0) and how long their pause lasted until the sink
  started again (the resume); the false onsets the duplex rules counted. One more condition,
  **echo**: a 96 ms noise burst that anima's VAD hears and the server's does not (its ears
  made deaf for the trial), as the echo canceller's remains of the robot's own voice: the
  voice pauses and must resume as a false onset, never stop;
* **the loop**: the engine's missed ticks over all of it (microphone up, voice down; target 0).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from anima import commands as cmd
from anima.agent.realtime import RealtimeAgent
from anima.agent.realtime.duplex import HEARD, HEARD_DELTA, SPEECH_STARTED
from anima.agent.realtime.session import Session
from anima.bench.realtime.barge import (
    BARGE_IN_S,
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
from anima.config.planner import RealtimePlannerConfig
from anima.listening.sources import PushSource
from anima.runtime import Runtime
from anima.testing.realtime_ears import ServerEars
from anima.testing.realtime_server import ScriptedRealtimeServer, answer, function_call
from anima.testing.tts import ScriptedEngine

TRUNCATE = "conversation.item.truncate"
# what the person says over the robot, per condition (the scripted TTS voice)
SAYS = {
    "stop word": "stop",
    "stop word, turn": "stop",  # transcribed after the turn, as OpenAI does (below)
    "held voice": "tell me more about the garden please",
    "backchannel": "mm-hmm",
    # the robot's own voice left in the microphone by the echo canceller: a 96 ms burst that
    # anima's VAD hears and the server's does not (its ears deaf for the trial)
    "echo": "",
}
# OpenAI transcribes the input when server VAD commits it (speech_stopped after 500 ms of
# silence), so its words come after the turn: the "turn" conditions' ears do the same
AFTER_TURN_SILENCE_MS = 500


@dataclass(kw_only=True)
class SessionFigures:
    tool_to_frame_ms: list[float] = field(default_factory=list)
    # the same nod executed directly (its first ~30 ms of frames are still, by design)
    direct_to_frame_ms: list[float] = field(default_factory=list)
    barge: list[BargeFigures] = field(default_factory=list)
    ticks: int = 0  # the loop's ticks over the session's trials
    missed_ticks: int = 0


def run_session_bench(trials: int = 5) -> SessionFigures:
    """``trials`` tool calls, then ``trials`` barge-ins of each condition."""
    clock = MonotonicClock()
    driver = TimedDriver(capacity=20_000)
    sink = StopSink(clock)
    runtime = Runtime(bench_config(), driver=driver, audio_sink=sink, tts=[ScriptedEngine()])
    ears = ServerEars()
    figures = SessionFigures()
    with ScriptedRealtimeServer(hear=ears) as server:
        runtime.start()
        try:
            mic = PushSource()
            agent = bench_agent(runtime, RealtimePlannerConfig(url=server.url), mic)
            server.wait_for("session.update")
            person = Person(mic)
            person.start()
            rig = _Rig(runtime, server, ears, person, sink, agent)
            before = runtime.engine.stats()
            try:
                for k in range(trials):
                    _tool_trial(runtime, driver, server, k, figures)
                    _direct_trial(runtime, driver, figures)
                for condition, text in SAYS.items():
                    barge = BargeFigures(condition=condition)
                    for k in range(trials):
                        _barge_trial(rig, text, k, barge)
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


# ---------------------------------------------------------------------- tool call → frame
def _tool_trial(
    runtime: Runtime, driver: TimedDriver, server: ScriptedRealtimeServer, k: int, f: SessionFigures
) -> None:
    _wait_rest(driver, runtime)
    rest = _last_frame(driver, runtime)
    server.push(function_call("play_animation", {"name": "nod"}, call_id=f"bench_call{k}"))
    sent = _sent_at(server, "response.function_call_arguments.done", k + 1)
    _first_move(driver, runtime, rest, sent, f.tool_to_frame_ms)


def _direct_trial(runtime: Runtime, driver: TimedDriver, f: SessionFigures) -> None:
    _wait_rest(driver, runtime)
    rest = _last_frame(driver, runtime)
    sent = time.monotonic()
    runtime.execute(cmd.PlayAnimation(name="nod"))
    _first_move(driver, runtime, rest, sent, f.direct_to_frame_ms)


def _first_move(
    driver: TimedDriver, runtime: Runtime, rest: np.ndarray, sent: float, into: list[float]
) -> None:
    """Note the ms from ``sent`` to the first frame that left ``rest`` (none: not noted)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        moved = _first_change(driver, runtime, rest, sent)
        if moved is not None:
            into.append((moved - sent) * 1e3)
            return
        time.sleep(0.005)


def _channels(runtime: Runtime) -> int:
    return len(runtime.body.channels)


def _last_frame(driver: TimedDriver, runtime: Runtime) -> np.ndarray:
    since = time.monotonic() - 1.0  # _wait_rest saw frames in the last 0.2 s
    return np.array([driver.since(since, c)[1][-1] for c in range(_channels(runtime))])


def _first_change(
    driver: TimedDriver, runtime: Runtime, rest: np.ndarray, after: float
) -> float | None:
    first: float | None = None
    for c in range(_channels(runtime)):
        times, values = driver.since(after, c)
        moved = np.flatnonzero(np.abs(values - rest[c]) > 1e-6)
        if len(moved) and (first is None or times[moved[0]] < first):
            first = float(times[moved[0]])
    return first


def _wait_rest(driver: TimedDriver, runtime: Runtime) -> None:
    """Until the last 0.2 s of frames are all the same (the nod before is over)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline and (runtime.moving or runtime.speaking):
        time.sleep(0.02)
    while time.monotonic() < deadline:
        since = time.monotonic() - 0.2
        windows = [driver.since(since, c)[1] for c in range(_channels(runtime))]
        if all(len(w) > 1 and np.ptp(w) < 1e-6 for w in windows):  # none: the loop starved
            return
        time.sleep(0.05)


def _sent_at(server: ScriptedRealtimeServer, kind: str, count: int) -> float:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        sent = [t for t, k in list(server.sent) if k == kind]
        if len(sent) >= count:
            return sent[count - 1]
        time.sleep(0.002)
    raise RuntimeError(f"the server never sent {kind} #{count}")


# ---------------------------------------------------------------------- barge-in
@dataclass(frozen=True)
class _Rig:
    runtime: Runtime
    server: ScriptedRealtimeServer
    ears: ServerEars
    person: Person
    sink: StopSink
    agent: RealtimeAgent


def _barge_trial(rig: _Rig, text: str, k: int, f: BargeFigures) -> None:
    runtime, server, ears, person, sink = rig.runtime, rig.server, rig.ears, rig.person, rig.sink
    f.trials += 1
    speech = utterance(f.condition, text, k)
    onset_sample = int(np.flatnonzero(np.abs(speech) > 300)[0])
    item = f"item_bench_{f.condition.replace(' ', '_')}{k}"
    # where this trial's events start (the lists only grow): no scan of the whole session's
    # thousands of appends while the loop runs
    got, sent = len(server.received), len(server.sent)
    wait_quiet(runtime)
    stops, starts = len(sink.stops), len(sink.starts)
    session = rig.agent.session
    assert isinstance(session, Session)
    duplex = session.duplex
    false_onsets = duplex.false_onsets
    sink.new_item()
    deadline = time.monotonic() + WAIT_S
    while ears.voiced and time.monotonic() < deadline:
        time.sleep(0.01)  # the last trial's voice has ended (its words sent as they were set)
    after_turn = f.condition.endswith(", turn")
    ears.stream_words = not after_turn
    ears.silence_ms = AFTER_TURN_SILENCE_MS if after_turn else 200
    threshold = ears.threshold
    if f.condition == "echo":
        ears.threshold = float("inf")  # the server's VAD does not take it for a voice
    else:
        ears.say(text)
    server.push(*answer(audio=voice(4.0), item_id=item)[:-1])
    deadline = time.monotonic() + WAIT_S
    while not runtime.speaking and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(0.3)
    person.say(speech)
    cut = _decided(server, item, got, len(server.sent), echo=f.condition == "echo")
    ears.threshold = threshold
    pushed = list(person.pushed)
    if not cut:
        time.sleep(0.3)  # a pause resumed: its restart noted
    person.say(np.zeros(0, np.int16))  # cut short by the robot's stop, as a person would be
    frame = onset_sample // FRAME
    onset = None
    if len(pushed) > frame:
        onset = pushed[frame] - ((frame + 1) * FRAME - onset_sample) / 16_000
    rule = _rule_time(server, f, sent)
    _tally(f, onset, cut, stops=sink.stops[stops:], starts=sink.starts[starts:], rule=rule)
    f.false_onsets += duplex.false_onsets - false_onsets
    server.push({"type": "response.done", "response": {"status": "completed"}})
    runtime.execute(cmd.StopSpeaking())


def _tally(
    f: BargeFigures,
    onset: float | None,
    cut: list[Any],
    *,
    stops: list[tuple[float, float]],
    starts: list[float],
    rule: float | None,
) -> None:
    """One trial's figures: ``onset`` of the voice (None: it never began), the truncates of
    its item (``cut``), the sink's ``stops`` and ``starts`` since the trial began, when the
    rule had its evidence."""
    # the sink's stops since the voice began: the pause's (if it yielded), the cut's
    mine = [stop for stop in stops if onset is not None and stop[0] >= onset]
    if cut and (onset is None or not mine):
        f.early += 1  # cut before the person's voice began: not this trial's barge-in
    elif onset is not None and mine:
        first = mine[0]
        f.onset_to_stop_ms.append((first[0] - onset) * 1e3)
        # the cut's own stop: the last before the truncate reached the server
        cut_stop = ([s for s in mine if s[0] <= cut[0].t] or mine)[-1] if cut else None
        if cut_stop is not first:
            f.paused += 1
        resumed = [t for t in starts if t > first[0]]
        if cut_stop is None and resumed:
            f.paused_ms.append((resumed[0] - first[0]) * 1e3)
        if cut and cut_stop is not None:
            f.stopped += 1
            f.onset_to_cut_ms.append((cut_stop[0] - onset) * 1e3)
            f.end_error_ms.append(cut[0].event["audio_end_ms"] - cut_stop[1])
            if rule is not None:
                f.rule_to_stop_ms.append((cut_stop[0] - rule) * 1e3)


def _decided(
    server: ScriptedRealtimeServer, item: str, got: int, sent: int, *, echo: bool = False
) -> list[Any]:
    """Wait until the robot was cut (truncates of ``item`` received since index ``got``) or
    the turn's transcript was sent (since index ``sent``) and 0.2 s more passed without a cut
    (the robot went on); an echo's trial (no transcript comes): :data:`ECHO_WAIT_S`."""
    if echo:
        time.sleep(ECHO_WAIT_S)
        return [r for r in server.received[got:] if r.type == TRUNCATE]
    deadline = time.monotonic() + WAIT_S
    settled: float | None = None
    while time.monotonic() < deadline:
        cut = [
            r for r in server.received[got:] if r.type == TRUNCATE and r.event["item_id"] == item
        ]
        if cut or (settled is not None and time.monotonic() > settled):
            return cut
        if settled is None and any(kind == HEARD for _, kind in server.sent[sent:]):
            settled = time.monotonic() + 0.2
        time.sleep(0.01)
    return []


def _rule_time(server: ScriptedRealtimeServer, f: BargeFigures, sent: int) -> float | None:
    """When the rule had its evidence: the first transcript delta sent since index ``sent``,
    or for a held voice ``speech_started`` + ``barge_in_s``."""
    wanted = SPEECH_STARTED if f.condition == "held voice" else HEARD_DELTA
    times = [t for t, kind in server.sent[sent:] if kind == wanted]
    if not times:
        return None
    return times[0] + (BARGE_IN_S if wanted == SPEECH_STARTED else 0.0)


def figures_dict(f: SessionFigures) -> dict[str, object]:
    return dataclasses.asdict(f)
