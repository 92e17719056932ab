"""What the conversation bench records during its trials: the sink's onsets (when the robot's
voice first became audible), the runtime's events and the listener's round reports, each with
its time (monotonic seconds), each safe to fill from the runtime's threads."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np

from anima.events import Event
from anima.listening import RoundReport
from anima.speech.base import Samples as Pcm
from anima.speech.sinks import NullSink

AUDIBLE = 328  # |sample| above this (−40 dBFS) is the robot's voice, not a clause's silence


@dataclass
class Onset:
    """One utterance at the sink: when its first audio came, and when its first audible sample
    played (monotonic seconds; None while only silence has come)."""

    started: float
    audible: float | None = None


class StampedSink(NullSink):
    """A null sink that notes when each utterance's audio began and became audible."""

    def __init__(self) -> None:
        super().__init__()
        self._stamp_lock = threading.Lock()
        self.onsets: list[Onset] = []
        self._stamp_rate = 22050
        self._stamped = 0  # samples written so far in the current utterance

    def start(self, sample_rate: int) -> None:
        with self._stamp_lock:
            self.onsets.append(Onset(started=time.monotonic()))
            self._stamp_rate, self._stamped = sample_rate, 0
        super().start(sample_rate)

    def write(self, samples: Pcm) -> None:
        now = time.monotonic()
        with self._stamp_lock:
            onset = self.onsets[-1] if self.onsets else None
            if onset is not None and onset.audible is None:
                loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > AUDIBLE)
                if loud.size:
                    k = int(loud[0])  # plays k samples into this write, or later if behind
                    onset.audible = max(
                        onset.started + (self._stamped + k) / self._stamp_rate,
                        now + k / self._stamp_rate,
                    )
            self._stamped += len(samples)
        super().write(samples)

    def since(self, t: float) -> list[Onset]:
        with self._stamp_lock:
            return [o for o in self.onsets if o.started >= t]


class EventLog:
    """Every event of the runtime, with the time it happened (engine clock: monotonic)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.events: list[tuple[float, Event]] = []

    def add(self, event: Event) -> None:
        with self._lock:
            self.events.append((event.t or time.monotonic(), event))

    def since(self, t0: float) -> list[tuple[float, Event]]:
        with self._lock:
            return [(t, e) for t, e in self.events if t >= t0]


class RoundLog:
    """The listener's round reports (when each round's end was decided)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.rounds: list[RoundReport] = []

    def add(self, report: RoundReport) -> None:
        with self._lock:
            self.rounds.append(report)

    def finals_since(self, t0: float) -> list[RoundReport]:
        with self._lock:
            return [r for r in self.rounds if r.decided_t >= t0 and r.round.outcome == "final"]
