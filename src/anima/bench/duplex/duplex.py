"""``anima bench duplex``: full duplex in a simulated room, on the audio's own time.

The robot says a long reply; its voice comes back into the microphone through an
:class:`~anima.testing.room.EchoPath` (delay, gain, reverberant tail) with the room's noise, and
the person, at a chosen moment, says nothing (the robot alone), an interruption ("wait, look at
me", "stop", "no, the other way") or a backchannel ("uh-huh", "yeah", "okay") or coughs. Each
32 ms frame goes through the echo canceller and the residual guard
(:class:`~anima.listening.echo.source.EchoCancelledSource`) into the listener's own
:class:`~anima.listening.recorder.Recorder` in full-duplex mode, with Silero VAD and Whisper; the
decisions are :mod:`anima.agent.barge_in`'s (a stop word in a partial, a voice past
``barge_in_s``, the final's words). When the robot is stopped its audio ends there.

Printed: false self-interruptions per minute of the robot's speech alone (barge-ins heard and
stops), barge-in detection latency from the person's first loud sample to the barge-in (p50 /
p95) and to the stop, backchannel false-stop rate, interruptions missed, short requests that
stopped the robot, and the echo return loss enhancement (ERLE) of the canceller alone and with
the guard; ``--trials`` adds one line per trial. Six sets of rooms, voices and phrases, each
built before the rule it was first to judge (:mod:`anima.bench.duplex.sets`;
docs/listening.md, *Measured*).

The frames come faster than real time, but Whisper's partial decodes run on their own thread
in real time: while one runs, the frames come in real time too, and the time a final's decode
takes is added to where the robot stops — so the partials and the stops fall where they would
live.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from anima.agent.barge_in import BargeIn
from anima.audio import FRAME_SAMPLES, SAMPLE_RATE
from anima.bench.conversation.audio import LOUD, Speaker
from anima.bench.duplex.sets import SPLITS, Trial, trials
from anima.config.listening import ListenConfig
from anima.listening.asr import Recognizer, Weighs
from anima.listening.echo.canceller import EchoCanceller, ResidualGuard, erle_db, make_echo
from anima.listening.listener import speech_detector
from anima.listening.makers import make_recognizer
from anima.listening.outcomes import Final, GaveUp, Partial, Woke
from anima.listening.recorder import Recorder
from anima.listening.vad import load_vad
from anima.testing.room import to_int16

DEBUG = False  # print every partial and final (while choosing the rules)
GUARD_DB = 6.0  # the residual guard's margin (ResidualGuard's default)
FRAME_S = FRAME_SAMPLES / SAMPLE_RATE
NOISE_RMS = 30.0  # the room's hiss (int16 units: ~−50 dB under a loud voice)


@dataclass
class DuplexResult:
    robot_alone_s: float = 0.0
    false_barge_ins: int = 0  # barge-ins heard with nobody talking
    false_stops: int = 0  # the robot stopped with nobody talking
    detect_ms: list[float] = field(default_factory=list)  # interruptions: onset → barge-in
    stop_ms: list[float] = field(default_factory=list)  # interruptions: onset → stopped
    interruptions: int = 0
    missed: list[str] = field(default_factory=list)  # interruptions that never stopped it
    backchannels: int = 0
    backchannel_stops: list[str] = field(default_factory=list)
    requests: int = 0  # short requests with no stop word (REQUESTS)
    request_stops: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)  # one line per trial: what was heard, decided
    erle_aec: list[float] = field(default_factory=list)
    erle_guard: list[float] = field(default_factory=list)
    trials: int = 0
    not_run: int = 0


def _onset(samples: NDArray[np.int16]) -> int:
    loud = np.flatnonzero(np.abs(samples) > LOUD)
    return int(loud[0]) if loud.size else 0


@dataclass
class _Heard:
    """What one trial's frames led to (sample positions; None: never)."""

    barge_ins: int = 0
    heard_at: int | None = None  # the barge-in (the first)
    stopped_at: int | None = None  # the robot stopped
    sustain_due: int | None = None  # where the "voice goes on" check falls
    how: str = ""  # what stopped the robot: a partial, the voice held, the final
    heard: list[str] = field(default_factory=list)  # the finals: text, confidence, voiced


def _decide(o: object, pos: int, barge: BargeIn, heard: _Heard) -> None:
    """One outcome of the recorder, decided as the conversation decides it."""
    if isinstance(o, Woke) and o.source == "barge_in" and heard.stopped_at is None:
        barge.open()
        heard.barge_ins += 1
        heard.heard_at = heard.heard_at if heard.heard_at is not None else pos
        heard.sustain_due = pos + round(barge.sustain_s * SAMPLE_RATE)
    elif isinstance(o, Partial) and barge.on_partial(o.text):
        heard.stopped_at, heard.how = pos, f"partial {o.text!r}"
    elif isinstance(o, Final):
        conf = "-" if o.confidence is None else f"{o.confidence:.2f}"
        heard.heard.append(f"{o.text!r} ({conf}, {o.voiced_s or 0:.2f} s voiced)")
        began, read = time.monotonic(), barge.read_as_backchannel  # a second reading is a
        decision = barge.on_final(o.text, o.confidence)  # decode: its time counts too
        if barge.read_as_backchannel > read:
            heard.heard[-1] += " read again as a backchannel"
        if decision == "stop":
            late = round((time.monotonic() - began) * SAMPLE_RATE)
            heard.stopped_at, heard.how = pos + late, "final"
    elif isinstance(o, GaveUp):
        barge.on_gave_up()
    if DEBUG and isinstance(o, Partial | Final | GaveUp):
        print(type(o).__name__, pos, repr(o.text), o.confidence if isinstance(o, Final) else None)


def _mix(trial: Trial) -> tuple[NDArray[np.int16], NDArray[np.float64], int | None]:
    """The robot's audio (with 2.5 s after it), the person's and the room's noise on the
    microphone (echo excluded), and where the person's voice begins."""
    robot = np.concatenate([trial.robot, np.zeros(int(2.5 * SAMPLE_RATE), np.int16)])
    n = len(robot)
    rng = np.random.default_rng(len(trial.label))
    near = rng.standard_normal(n) * NOISE_RMS
    if trial.user is None:
        return robot, near, None
    end = min(n, trial.at + len(trial.user))
    near[trial.at : end] += trial.user[: end - trial.at]
    return robot, near, trial.at + _onset(trial.user)


def _run_trial(
    trial: Trial, echo: EchoCanceller, cfg: ListenConfig, recognizer: Recognizer,
    result: DuplexResult,
) -> None:  # fmt: skip
    from anima.listening.whisper.asr import WhisperAsr

    vad = load_vad("auto")
    vad.load()
    recorder = Recorder(cfg, recognizer, speech_detector(cfg, vad))
    whisper = recognizer if isinstance(recognizer, WhisperAsr) else None
    guard = ResidualGuard(margin_db=GUARD_DB)
    barge = BargeIn(sustain_s=cfg.barge_in_s, min_confidence=cfg.barge_in_confidence,
                    second_reading=recognizer.likelier if isinstance(recognizer, Weighs)
                    else None)  # fmt: skip
    playing, near, onset = _mix(trial)
    heard = _Heard()
    aec_erle = _Erle()
    recorder.speaking(True)
    echo_full = trial.path.apply(playing)
    for i in range(0, len(playing) - FRAME_SAMPLES, FRAME_SAMPLES):
        began = time.monotonic()
        if heard.stopped_at is not None and i >= heard.stopped_at and playing[i:].any():
            playing[heard.stopped_at :] = 0  # the robot was stopped: its voice ends there
            echo_full = trial.path.apply(playing)
            recorder.speaking(False)
        sl = slice(i, i + FRAME_SAMPLES)
        mic = to_int16(echo_full[sl] + near[sl])
        ref = playing[sl]
        aec = echo.process(mic, ref)
        out = guard.check(mic, aec, ref)
        if trial.kind == "alone" and i > SAMPLE_RATE and ref.any():
            aec_erle.add(echo_full[sl], aec, out)
        pos = i + FRAME_SAMPLES
        outcomes = recorder.feed(out)
        # the frames come faster than real time, so the time the listener spent on this frame
        # past its length (a final's decode) is added: live, the audio would have gone on
        late = max(0, round((time.monotonic() - began - FRAME_S) * SAMPLE_RATE))
        for o in outcomes:
            _decide(o, pos + late, barge, heard)
        if heard.sustain_due is not None and pos >= heard.sustain_due:
            heard.sustain_due = None  # checked once, as the conversation's timer
            if barge.on_sustained(recorder.voice_held):
                heard.stopped_at, heard.how = pos, "voice held"
        if whisper is not None and whisper.decoding:  # a partial decode runs: real time, as live
            time.sleep(max(0.0, FRAME_S - (time.monotonic() - began)))
    _count(trial, heard, onset, aec_erle, result)


class _Erle:
    """The echo alone, and what the canceller and the guard left of it."""

    def __init__(self) -> None:
        self.echo: list[NDArray[np.float64]] = []
        self.aec: list[NDArray[np.float64]] = []
        self.guard: list[NDArray[np.float64]] = []

    def add(
        self, echo: NDArray[np.float64], aec: NDArray[np.int16], out: NDArray[np.int16]
    ) -> None:
        self.echo.append(echo)
        self.aec.append(aec.astype(np.float64))
        self.guard.append(out.astype(np.float64))


def _count(
    trial: Trial, heard: _Heard, onset: int | None, erle: _Erle, result: DuplexResult
) -> None:
    result.trials += 1
    stopped_at, heard_at = heard.stopped_at, heard.heard_at
    at = "" if onset is None or stopped_at is None else f" {(stopped_at - onset) / 16:.0f} ms"
    what = f"stopped by {heard.how}{at}" if heard.how else "went on"
    heard_line = f"; heard {', '.join(heard.heard)}" if heard.heard else ""
    result.log.append(f"{trial.kind:12} {trial.label}: {what}{heard_line}")
    if trial.kind == "alone":
        result.false_barge_ins += heard.barge_ins
        result.false_stops += stopped_at is not None
        result.robot_alone_s += len(trial.robot) / SAMPLE_RATE
        if erle.echo:
            e = np.concatenate(erle.echo)
            result.erle_aec.append(erle_db(e, np.concatenate(erle.aec)))
            result.erle_guard.append(erle_db(e, np.concatenate(erle.guard)))
    elif trial.kind == "interruption":
        result.interruptions += 1
        assert onset is not None
        if heard_at is not None and heard_at >= onset - FRAME_SAMPLES:
            result.detect_ms.append((heard_at - onset) / SAMPLE_RATE * 1000)
        if stopped_at is None:
            result.missed.append(trial.label)
        else:
            result.stop_ms.append((stopped_at - onset) / SAMPLE_RATE * 1000)
    elif trial.kind == "request":
        result.requests += 1
        if stopped_at is not None:
            result.request_stops.append(trial.label)
    else:
        result.backchannels += 1
        if stopped_at is not None:
            result.backchannel_stops.append(trial.label)


def _agent_phrases() -> list[str]:
    """What the agent's listener is given (its prompt: each kind of action in turn)."""
    from anima.agent.assembly import listening_phrases
    from anima.agent.vocabulary import robot_registry
    from anima.runtime import Runtime

    runtime = Runtime()
    runtime.library.load()
    return listening_phrases(robot_registry(runtime), runtime.config.listen)


def run_duplex_bench(
    splits: tuple[str, ...] = SPLITS,
    *,
    budget_s: float = 600.0,
    echo: str = "auto",
    barge_in_s: float | None = None,
    barge_in_confidence: float | None = None,
) -> dict[str, DuplexResult]:
    """The trials of ``splits`` within about ``budget_s``; ``barge_in_s`` and
    ``barge_in_confidence`` (None: the config's defaults) to weigh the rules' trade-offs."""
    given = {"barge_in_s": barge_in_s, "barge_in_confidence": barge_in_confidence}
    chosen = {key: value for key, value in given.items() if value is not None}
    cfg = ListenConfig(duplex=True, asr="auto", wake_word=False, **chosen)  # type: ignore[arg-type]
    recognizer = make_recognizer(cfg, phrases=_agent_phrases())
    recognizer.load()
    speaker = Speaker()
    start = time.monotonic()
    results: dict[str, DuplexResult] = {}
    for split in splits:
        result = results[split] = DuplexResult()
        for trial in trials(split, speaker):
            if time.monotonic() - start > budget_s:
                result.not_run += 1
                continue
            canceller = make_echo(echo)
            canceller.load()
            _run_trial(trial, canceller, cfg, recognizer, result)
    return results


def _p(values: list[float], q: float) -> str:
    if not values:
        return "—"
    if len(values) == 1:
        return f"{values[0]:.0f}"
    return f"{statistics.quantiles(values, n=100, method='inclusive')[int(q) - 1]:.0f}"


def _requests_line(r: DuplexResult) -> str:
    return (
        f"  short requests with no stop word that stopped it: {len(r.request_stops)} of "
        f"{r.requests} (the rules' trade-off: a backchannel is short too)"
    )


def report(results: dict[str, DuplexResult], *, trials: bool = False) -> str:
    """The figures per split; ``trials``: first, one line per trial (what stopped the robot,
    the finals heard with their confidence and voiced seconds)."""
    lines = [f"{split}: {line}" for split, r in results.items() for line in r.log] if trials else []
    for split, r in results.items():
        minutes = r.robot_alone_s / 60 or float("nan")
        lines += [
            f"{split}: {r.trials} trials ({r.not_run} not run: time limit)",
            f"  false self-interruptions: {r.false_barge_ins / minutes:.2f} barge-ins/min, "
            f"{r.false_stops / minutes:.2f} stops/min over {r.robot_alone_s:.0f} s of robot speech"
            " alone (target 0)",
            f"  barge-in detection from the first word: p50 {_p(r.detect_ms, 50)} ms, "
            f"p95 {_p(r.detect_ms, 95)} ms over {len(r.detect_ms)} (target p50 ≤ 250 ms)",
            f"  robot stopped after the first word: p50 {_p(r.stop_ms, 50)} ms, "
            f"p95 {_p(r.stop_ms, 95)} ms; missed {len(r.missed)} of {r.interruptions}"
            + (f" ({'; '.join(r.missed)})" if r.missed else ""),
            f"  backchannels that stopped the robot: {len(r.backchannel_stops)} of "
            f"{r.backchannels} ({100 * len(r.backchannel_stops) / max(r.backchannels, 1):.0f} %,"
            " target ≤ 5 %)"
            + (f" ({'; '.join(r.backchannel_stops)})" if r.backchannel_stops else ""),
            *([_requests_line(r)] if r.requests else []),
            f"  ERLE: canceller {_p(r.erle_aec, 50)} dB, with the residual guard "
            f"{_p(r.erle_guard, 50)} dB (median over {len(r.erle_aec)} rooms)",
        ]
    return "\n".join(lines)


def main(budget_s: float = 600.0) -> None:
    print(report(run_duplex_bench(budget_s=budget_s)))


if __name__ == "__main__":
    main()
