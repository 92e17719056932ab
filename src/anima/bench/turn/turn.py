"""End of turn: how soon after the last word a detector ends the turn, and how often too soon.

Every take of the turn-taking set (:mod:`anima.bench.turn.takes`: requests said straight and with
0.5–1 s pauses inside, by eSpeak NG and Piper voices, clean and with pink noise) is fed frame by
frame to a :class:`~anima.listening.speech_detector.SpeechDetector` on Silero VAD, with each
detector:

- ``silence``: the fixed 0.8 s endpoint (the behaviour before turn detectors);
- ``cues, no partials``: VAD and pitch only (a recognizer that gives no partials, as Whisper);
- ``cues, partials``: also the words heard so far, given ``PARTIAL_LAG_S`` after each piece of
  the sentence ends (an ideal streaming recognizer, as pocketsphinx's ~30 ms partials are on
  the words it hears right);
- ``cues, late partials``: the same words ``LATE_LAG_S`` later (Whisper decodes ~0.1 s into a
  pause, and a decode takes 0.1–0.5 s here);
- ``early, late partials``: the same, with the early reply of full duplex
  (``listen.turn_early_s``, :data:`EARLY_S`): the reply begins at the first pause that may end
  the turn, and is taken back if the person goes on; the turn's own end, which confirms it,
  waits full duplex's ``turn_confirm_quick_s`` and ``turn_confirm_endpoint_s``.

Figures, per detector and voice (and in total, per split): **delay** from the last loud sample
to the frame that ends the turn (audio time, so machine load does not change it; p50/p95 over
the takes the turn ended after their end), **cut** = the turn ended before the last word was
said (a pause ended it), **missed** = still not ended ``TRAIL_S`` after the speech. With an
early reply also: **reply** = from the last loud sample to the frame where the reply begins (the
early pause after the last word, or the turn's end), and **taken back** = takes where a reply
began in a pause inside the sentence (the person went on, so it was taken back).

The VAD's probabilities are computed once per take and replayed to each detector, so a detector
costs only its own work. :func:`run_turn_bench` stops adding takes after ``budget_s``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from anima.audio import FRAME_SAMPLES, SAMPLE_RATE, Frame
from anima.bench.measure import percentile
from anima.bench.turn.takes import VOICES, Take, Voice, iter_takes
from anima.config.listening import ListenConfig
from anima.listening.speech_detector import SpeechChange, SpeechDetector
from anima.listening.turn.cues import CuesTurn
from anima.listening.turn.detector import TurnDetector, make_turn, turn_for
from anima.listening.vad import SileroVad, Vad

PARTIAL_LAG_S = 0.1  # words reach the detector this long after they were said
LATE_LAG_S = 0.4  # … from a recognizer that decodes at pauses (Whisper: ~0.1 s + a decode)
EARLY = "early, late partials"
DETECTORS = ("silence", "cues, no partials", "cues, partials", "cues, late partials", EARLY)
EARLY_S = ListenConfig().turn_early_s  # listen.turn_early_s's default


class _Replay:
    """A Vad that gives back probabilities computed before (``name`` as the real one)."""

    name = "replay"

    def __init__(self, probabilities: Sequence[float]) -> None:
        self._probabilities = probabilities
        self._next = 0

    def load(self) -> None:
        """Nothing to load."""

    def reset(self) -> None:
        """The position runs on: the detector resets at the wake, not per frame."""

    def probability(self, frame: Frame) -> float:
        p = self._probabilities[self._next]
        self._next += 1
        return p


@dataclass(frozen=True, kw_only=True)
class TurnOutcome:
    """What one detector did with one take."""

    take: str  # Take.label
    voice: str
    split: str
    paused: bool
    ended_at: int | None  # sample where the turn was ended (None: never)
    delay_ms: float | None  # after the speech's end (None: cut or missed)
    cut: bool  # ended before the last word
    reason: str  # the cues detector's last decision ("" for silence)
    reply_ms: float | None = None  # early reply: after the speech's end (None: cut or missed)
    taken_back: int = 0  # early replies begun in pauses before the last word


@dataclass(frozen=True, kw_only=True)
class TurnFigures:
    detector: str
    group: str  # a voice, or "all <split>"
    turns: int
    cut: int
    cut_paused: int  # of the cuts, in takes with a pause (the others cut at a word gap)
    paused: int
    missed: int
    delay_p50_ms: float
    delay_p95_ms: float
    early: bool = False  # an early reply was measured (the fields below)
    reply_p50_ms: float = float("nan")
    reply_p95_ms: float = float("nan")
    taken_back: int = 0  # takes where an early reply was taken back

    def line(self) -> str:
        line = (
            f"{self.detector:<18} {self.group:<17} delay p50 {self.delay_p50_ms:5.0f} ms "
            f"p95 {self.delay_p95_ms:5.0f} ms   cut {self.cut}/{self.turns} "
            f"({100 * self.cut / max(1, self.turns):.1f} %; {self.cut_paused} of "
            f"{self.paused} paused)   missed {self.missed}"
        )
        if not self.early:
            return line
        return line + (
            f"\n{'':<18} {'':<17} reply p50 {self.reply_p50_ms:5.0f} ms "
            f"p95 {self.reply_p95_ms:5.0f} ms   taken back {self.taken_back}/{self.turns} "
            f"({100 * self.taken_back / max(1, self.turns):.1f} %)"
        )


@dataclass(frozen=True, kw_only=True)
class TurnBenchResult:
    figures: tuple[TurnFigures, ...]
    outcomes: tuple[TurnOutcome, ...]
    takes: int
    elapsed_s: float
    complete: bool  # every take was measured (False: the budget ran out first)

    def lines(self) -> list[str]:
        head = f"anima bench turn — {self.takes} takes in {self.elapsed_s:.0f} s"
        return [head + ("" if self.complete else " (budget reached: a part)")] + [
            f.line() for f in self.figures
        ]


def probabilities(audio: Frame, vad: Vad | None = None) -> list[float]:
    """Silero's speech probability of each whole frame of ``audio`` (``vad``: a loaded Silero
    to reuse; loading one costs more than a take)."""
    if vad is None:
        vad = SileroVad()
        vad.load()
    vad.reset()
    n = len(audio) // FRAME_SAMPLES
    return [vad.probability(audio[i * FRAME_SAMPLES : (i + 1) * FRAME_SAMPLES]) for i in range(n)]


def run_take(
    take: Take,
    turn: TurnDetector | None,
    *,
    with_partials: bool,
    vad_probabilities: Sequence[float] | None = None,
    partial_lag_s: float = PARTIAL_LAG_S,
    early_s: float | None = None,
) -> TurnOutcome:
    """Feed ``take`` to a SpeechDetector consulting ``turn``; the first end after a start.
    With ``early_s``, the detector's early pauses too (the module docstring's reply)."""
    probs = probabilities(take.audio) if vad_probabilities is None else vad_probabilities
    detector = SpeechDetector(_Replay(probs), turn=turn, early_s=early_s)
    detector.reset()
    words = list(take.segments) if with_partials else []
    lag = round(partial_lag_s * SAMPLE_RATE)
    started, ended_at, early_at, taken_back = False, None, None, 0
    for i in range(len(probs)):
        position = (i + 1) * FRAME_SAMPLES  # where this frame ends
        while words and words[0][1] + lag <= position - FRAME_SAMPLES:
            detector.partial(words.pop(0)[0])
        change = detector.feed(take.audio[i * FRAME_SAMPLES : position])
        started = started or change is SpeechChange.STARTED
        if started and change is SpeechChange.PAUSED:
            if position < take.speech_end:
                taken_back += 1
            elif early_at is None:
                early_at = position
        if started and change is SpeechChange.ENDED:
            ended_at = position
            break
    cut = ended_at is not None and ended_at < take.speech_end  # a pause ended it
    delay = None if ended_at is None or cut else 1e3 * (ended_at - take.speech_end) / SAMPLE_RATE
    reply = delay
    if early_at is not None and not cut:
        reply = 1e3 * (early_at - take.speech_end) / SAMPLE_RATE
    return TurnOutcome(
        take=take.label, voice=take.voice, split=take.split, paused=take.pause_s > 0,
        ended_at=ended_at, delay_ms=delay, cut=cut,
        reason=turn.reason if isinstance(turn, CuesTurn) else "",
        reply_ms=reply, taken_back=taken_back,
    )  # fmt: skip


def _detector(name: str) -> tuple[TurnDetector | None, bool, float]:
    """The turn detector a row of the figures measures, whether it gets partials, their lag."""
    if name == "silence":
        return None, False, 0.0
    lag = LATE_LAG_S if name in ("cues, late partials", EARLY) else PARTIAL_LAG_S
    if name == EARLY:  # full duplex's: the turn's own end confirms a reply already begun
        return turn_for(ListenConfig(turn="cues", duplex=True)), True, lag
    return make_turn("cues"), name != "cues, no partials", lag


def figures(detector: str, group: str, outcomes: Iterable[TurnOutcome]) -> TurnFigures:
    rows = list(outcomes)
    delays = [o.delay_ms for o in rows if o.delay_ms is not None]
    replies = [o.reply_ms for o in rows if o.reply_ms is not None]
    return TurnFigures(
        detector=detector, group=group, turns=len(rows), cut=sum(o.cut for o in rows),
        cut_paused=sum(o.cut and o.paused for o in rows), paused=sum(o.paused for o in rows),
        missed=sum(o.ended_at is None for o in rows),
        delay_p50_ms=percentile(delays, 50), delay_p95_ms=percentile(delays, 95),
        early=detector == EARLY, reply_p50_ms=percentile(replies, 50),
        reply_p95_ms=percentile(replies, 95), taken_back=sum(o.taken_back > 0 for o in rows),
    )  # fmt: skip


def run_turn_bench(
    voices: tuple[Voice, ...] = VOICES,
    *,
    splits: tuple[str, ...] = ("dev", "heldout"),
    detectors: tuple[str, ...] = DETECTORS,
    noises: tuple[float | None, ...] = (None, 20.0),
    budget_s: float = 170.0,
    progress: Callable[[str], None] | None = None,
) -> TurnBenchResult:
    """Measure each detector on the set (see the module docstring) within about ``budget_s``
    (each split gets its share; the voices take turns, so a part measures them alike)."""
    t0 = time.monotonic()
    per: dict[tuple[str, str], list[TurnOutcome]] = {}
    measured, complete = 0, True
    vad = SileroVad()
    vad.load()
    for k, split in enumerate(splits, start=1):
        for one in iter_takes(voices, split=split, noises=noises):
            if time.monotonic() - t0 > budget_s * k / len(splits):  # each split its share
                complete = False
                break
            probs = probabilities(one.audio, vad)
            for name in detectors:
                turn, partials, lag = _detector(name)
                outcome = run_take(
                    one, turn, with_partials=partials, vad_probabilities=probs,
                    partial_lag_s=lag, early_s=EARLY_S if name == EARLY else None,
                )  # fmt: skip
                per.setdefault((name, one.voice), []).append(outcome)
            measured += 1
        if progress is not None:
            progress(f"{split}: {measured} takes, {time.monotonic() - t0:.0f} s")
    rows: list[TurnFigures] = []
    everything = [o for v in per.values() for o in v]
    for name in detectors:
        for voice in voices:
            if (name, voice.name) in per:
                rows.append(figures(name, voice.name, per[(name, voice.name)]))
        for split in splits:
            mine = [o for (n, _), v in per.items() if n == name for o in v if o.split == split]
            if mine:
                rows.append(figures(name, f"all {split}", mine))
    return TurnBenchResult(
        figures=tuple(rows), outcomes=tuple(everything), takes=measured,
        elapsed_s=time.monotonic() - t0, complete=complete,
    )  # fmt: skip


def main() -> None:  # pragma: no cover - a command-line entry for the figures
    import sys

    result = run_turn_bench(progress=lambda s: print(s, file=sys.stderr))
    print("\n".join(result.lines()))


if __name__ == "__main__":  # pragma: no cover
    main()
