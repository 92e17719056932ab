"""``anima bench duplex``: full duplex in a simulated room, on the audio's own time.

The robot says a long reply; its voice comes back into the microphone through an
:class:`~anima.testing.room.EchoPath` (delay, gain, reverberant tail) with the room's noise, and
the person, at a chosen moment, says nothing (the robot alone), an interruption ("wait, look at
me", "stop", "no, the other way") or a backchannel ("uh-huh", "yeah", "okay") or coughs. Each
32 ms frame goes through the echo canceller and the residual guard
(:class:`~anima.listening.echo.EchoCancelledSource`) into the listener's own
:class:`~anima.listening.recorder.Recorder` in full-duplex mode, with Silero VAD and Whisper; the
decisions are :mod:`anima.agent.barge_in`'s (a stop word in a partial, a voice past
``barge_in_s``, the final's words). When the robot is stopped its audio ends there.

Printed: false self-interruptions per minute of the robot's speech alone (barge-ins heard and
stops), barge-in detection latency from the person's first loud sample to the barge-in (p50 /
p95) and to the stop, backchannel false-stop rate, interruptions missed, and the echo return
loss enhancement (ERLE) of the canceller alone and with the guard. Dev conditions chose the
guard's margin; held-out ones (other rooms, other phrases) are only measured.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from anima.agent.barge_in import classify
from anima.bench.conversation_audio import LOUD, Speaker
from anima.listening.audio import FRAME_SAMPLES, SAMPLE_RATE
from anima.listening.config import ListenConfig
from anima.listening.echo import EchoCanceller, ResidualGuard, erle_db, make_echo
from anima.listening.recorder import Final, GaveUp, Partial, Recorder, RoundEnded, Woke
from anima.listening.registry import make_recognizer
from anima.listening.turn import turn_for
from anima.listening.vad import SpeechDetector, load_vad
from anima.testing.room import EchoPath, to_int16

REPLY = (
    "Hello! I am anima, a robot that can wave, nod and look around. Today I would like to tell "
    "you about the sea, the mountains and the little town where I was built, a long time ago."
)
ROOMS = {
    "dev": (EchoPath(0.03, -6.0, 0.3, seed=1), EchoPath(0.06, 0.0, 0.5, seed=2)),
    "heldout": (EchoPath(0.045, -3.0, 0.4, seed=5), EchoPath(0.1, -10.0, 0.7, -3.0, seed=7)),
}
INTERRUPTIONS = {
    "dev": ("wait, look at me", "stop", "no, the other way", "can you wave instead?"),
    "heldout": ("hold on a second", "no no no", "stop talking please", "what is your name?"),
}
BACKCHANNELS = {"dev": ("uh-huh", "yeah", "okay", "cough"), "heldout": ("mm-hmm", "right", "ok")}
USERS = ("espeak-us", "espeak-gb-fast")
ROBOTS = ("piper-joe", "espeak-us-slow")
DEBUG = False  # print every partial and final (while choosing the rules)
GUARD_DB = 10.0
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
    erle_aec: list[float] = field(default_factory=list)
    erle_guard: list[float] = field(default_factory=list)
    trials: int = 0
    not_run: int = 0


def _cough(seed: int) -> NDArray[np.int16]:
    """Two bursts of shaped noise (~0.35 s): a cough has no words."""
    rng = np.random.default_rng(seed)
    n = int(0.15 * SAMPLE_RATE)
    env = np.sin(np.linspace(0, np.pi, n)) ** 2
    burst = np.convolve(rng.standard_normal(n), np.ones(6) / 6, mode="same") * env * 6000
    return to_int16(np.concatenate([burst, np.zeros(int(0.05 * SAMPLE_RATE)), burst * 0.7]))


def _onset(samples: NDArray[np.int16]) -> int:
    loud = np.flatnonzero(np.abs(samples) > LOUD)
    return int(loud[0]) if loud.size else 0


@dataclass
class _Trial:
    robot: NDArray[np.int16]
    path: EchoPath
    user: NDArray[np.int16] | None
    at: int  # sample where the user's audio starts
    kind: str  # alone | interruption | backchannel
    label: str


def _run_trial(  # noqa: PLR0915 - one frame loop, its decisions in order
    trial: _Trial,
    echo: EchoCanceller,
    cfg: ListenConfig,
    recognizer: object,
    result: DuplexResult,
) -> None:
    vad = load_vad("auto")
    vad.load()
    detector = SpeechDetector(
        vad, start_threshold=cfg.vad_start_threshold, end_threshold=cfg.vad_end_threshold,
        start_frames=cfg.vad_start_frames, end_s=cfg.endpoint_silence_s, turn=turn_for(cfg),
    )  # fmt: skip
    recorder = Recorder(cfg, recognizer, detector)  # type: ignore[arg-type]
    guard = ResidualGuard(margin_db=GUARD_DB)
    tail = int(2.5 * SAMPLE_RATE)
    robot = np.concatenate([trial.robot, np.zeros(tail, np.int16)])
    n = len(robot)
    user = np.zeros(n)
    onset = None
    if trial.user is not None:
        end = min(n, trial.at + len(trial.user))
        user[trial.at : end] = trial.user[: end - trial.at]
        onset = trial.at + _onset(trial.user)
    rng = np.random.default_rng(len(trial.label))
    noise = rng.standard_normal(n) * NOISE_RMS
    stopped_at: int | None = None
    heard_at: int | None = None
    pending = False
    barge_ins = 0
    echo_only, cleaned_aec, cleaned_out = [], [], []
    recorder.speaking(True)
    playing = robot.copy()
    echo_full = trial.path.apply(playing)
    for i in range(0, n - FRAME_SAMPLES, FRAME_SAMPLES):
        if stopped_at is not None and i >= stopped_at and playing[i:].any():
            playing[stopped_at:] = 0  # the robot was stopped: its voice ends there
            echo_full = trial.path.apply(playing)
            recorder.speaking(False)
        sl = slice(i, i + FRAME_SAMPLES)
        mic = to_int16(echo_full[sl] + user[sl] + noise[sl])
        ref = playing[sl]
        aec = echo.process(mic, ref)
        out = guard.check(mic, aec, ref)
        if trial.kind == "alone" and i > SAMPLE_RATE and ref.any():
            echo_only.append(echo_full[sl])
            cleaned_aec.append(aec.astype(np.float64))
            cleaned_out.append(out.astype(np.float64))
        for o in recorder.feed(out):
            pos = i + FRAME_SAMPLES
            if isinstance(o, Woke) and o.source == "barge_in" and stopped_at is None:
                heard_at, pending = pos, True
                barge_ins += 1
            elif isinstance(o, Partial) and pending and classify(o.text) == "stop":
                stopped_at, pending = pos, False
            if isinstance(o, Partial | Final | GaveUp) and DEBUG:
                print(
                    trial.label,
                    type(o).__name__,
                    pos - (onset or 0),
                    repr(o.text),
                    getattr(o, "confidence", None),
                    getattr(o, "reason", None),
                )
            if isinstance(o, Final | GaveUp) and pending:
                sure = getattr(o, "confidence", None)
                # a final the recognizer is unsure of is not words (Whisper's "Thank you for
                # watching." on a breath): as the conversation, it lets the robot go on
                unsure = sure is not None and sure < cfg.min_confidence
                words = "nothing" if unsure else classify(o.text)
                pending = False
                if words in ("stop", "other"):
                    stopped_at = pos
            elif isinstance(o, RoundEnded):
                pending = False
        if (
            pending and heard_at is not None and stopped_at is None
            and i + FRAME_SAMPLES - heard_at >= cfg.barge_in_s * SAMPLE_RATE
            and recorder.detector.probability >= recorder.detector.start_threshold
        ):  # fmt: skip
            stopped_at, pending = i + FRAME_SAMPLES, False
    result.trials += 1
    if trial.kind == "alone":
        result.false_barge_ins += barge_ins
        result.false_stops += stopped_at is not None
        result.robot_alone_s += len(trial.robot) / SAMPLE_RATE
        if echo_only:
            e = np.concatenate(echo_only)
            result.erle_aec.append(erle_db(e, np.concatenate(cleaned_aec)))
            result.erle_guard.append(erle_db(e, np.concatenate(cleaned_out)))
    elif trial.kind == "interruption":
        result.interruptions += 1
        assert onset is not None
        if heard_at is not None and heard_at >= onset - FRAME_SAMPLES:
            result.detect_ms.append((heard_at - onset) / SAMPLE_RATE * 1000)
        if stopped_at is None:
            result.missed.append(trial.label)
        else:
            result.stop_ms.append((stopped_at - onset) / SAMPLE_RATE * 1000)
    else:
        result.backchannels += 1
        if stopped_at is not None:
            result.backchannel_stops.append(trial.label)


def trials(split: str, speaker: Speaker) -> list[_Trial]:
    out: list[_Trial] = []
    for r, robot_voice in enumerate(ROBOTS):
        robot = speaker.say(robot_voice, REPLY)
        for p, path in enumerate(ROOMS[split]):
            room = f"{robot_voice} room{p}"
            out.append(_Trial(robot, path, None, 0, "alone", f"{room} alone"))
            for k, text in enumerate(INTERRUPTIONS[split] + BACKCHANNELS[split]):
                kind = "interruption" if text in INTERRUPTIONS[split] else "backchannel"
                voice = USERS[(k + r + p) % len(USERS)]
                said = _cough(k) if text == "cough" else speaker.say(voice, text)
                at = int((1.5 + 0.7 * ((k + p) % 4)) * SAMPLE_RATE)
                out.append(_Trial(robot, path, said, at, kind, f"{room} {voice} {text!r}"))
    return out


def _agent_phrases() -> list[str]:
    """What the agent's listener is given (its prompt: each kind of action in turn)."""
    from anima.agent.assembly import listening_phrases
    from anima.agent.vocabulary import runtime_registry
    from anima.runtime import Runtime

    runtime = Runtime()
    runtime.library.load()
    return listening_phrases(runtime_registry(runtime), runtime.config.listen)


def run_duplex_bench(splits: tuple[str, ...] = ("dev", "heldout"), *, budget_s: float = 600.0,
                     echo: str = "auto") -> dict[str, DuplexResult]:  # fmt: skip
    cfg = ListenConfig(duplex=True, asr="auto", wake_word=False)
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


def report(results: dict[str, DuplexResult]) -> str:
    lines = []
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
            f"  ERLE: canceller {_p(r.erle_aec, 50)} dB, with the residual guard "
            f"{_p(r.erle_guard, 50)} dB (median over {len(r.erle_aec)} rooms)",
        ]
    return "\n".join(lines)


def main(budget_s: float = 600.0) -> None:
    print(report(run_duplex_bench(budget_s=budget_s)))


if __name__ == "__main__":
    main()
