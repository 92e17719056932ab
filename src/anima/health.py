"""One robot's health, from what the runtime and its driver can see, with warnings a person can
act on: published retained on MQTT's ``<prefix>/agent/health``, served at ``GET /api/health``,
listed by ``anima fleet`` (docs/fleet.md).

- **the loop**: its rate, and deadlines missed in the last ``window_s``;
- **the driver**: connected, and its link's counters where it keeps them (the serial board's
  write timeouts, drops, losses and reopens; the Reachy daemon's reconnects) with the last
  error; counters that moved in the window are a warning;
- **following**: on a driver that reads its robot back, a channel more than ``stall_units``
  from what it was sent for ``stall_s`` is *likely stalled or loose*;
- **the humanoid**, when one is linked: a robot that stopped answering (its state reads or
  commands fail, e.g. gRPC UNAVAILABLE) is a warning with the last error;
- **faults**: the engine faults of the last minute;
- **speech**: its engines and audio output, or why it is not available; with ``audio_out``
  left to ``auto``, no sound card found is a warning (speech would play silently).

:class:`HealthMonitor` keeps a sample a second of the counters to tell what moved recently;
``now()`` is cheap and called by every door that reports it.
"""

from __future__ import annotations

import collections
import threading
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Protocol

from anima.drivers.base import Counting, LinkCounters
from anima.drivers.feedback import Measuring
from anima.events import EngineFault, Event
from anima.wire.jsontypes import JsonObject

if TYPE_CHECKING:
    from anima.config import AnimaConfig
    from anima.drivers.base import Driver
    from anima.events import EventHub
    from anima.humanoid.link import HumanoidLink
    from anima.motion.engine import MotionEngine
    from anima.speech.service import SpeechService


class Observed(Protocol):
    """What the monitor reads of a runtime (:class:`anima.runtime.Runtime` is one)."""

    config: AnimaConfig
    driver: Driver
    engine: MotionEngine
    events: EventHub
    speech: SpeechService | None
    speech_problem: str
    humanoid: HumanoidLink | None


@dataclass(frozen=True, kw_only=True)
class Health:
    ok: bool  # no warning
    warnings: tuple[str, ...]
    uptime_s: float
    loop_rate_hz: float
    missed_recent: int  # deadlines missed in the window
    missed: int  # since start
    driver: str  # its type
    driver_connected: bool
    link: LinkCounters | None  # None: the driver counts nothing
    deviation: float | None  # commanded vs measured at the worst channel; None: not measured
    worst: str
    faults_recent: int  # in the last minute
    last_fault: str
    speech: str  # its engines and audio out, or why it is not available

    def to_json(self) -> JsonObject:
        data = asdict(self)
        data["warnings"] = list(self.warnings)
        data["uptime_s"] = round(self.uptime_s, 1)
        data["loop_rate_hz"] = round(self.loop_rate_hz, 2)
        if self.deviation is not None:
            data["deviation"] = round(self.deviation, 2)
        return data


class HealthMonitor:
    """Samples the counters once a second; ``now()`` gives the health with its warnings."""

    def __init__(
        self,
        runtime: Observed,
        *,
        window_s: float = 10.0,
        stall_units: float = 5.0,
        stall_s: float = 1.0,
        fault_window_s: float = 60.0,
    ) -> None:
        self.runtime = runtime
        self.window_s = window_s
        self.stall_units = stall_units
        self.stall_s = stall_s
        self.fault_window_s = fault_window_s
        self.started = time.monotonic()
        self._lock = threading.Lock()
        self._samples: collections.deque[tuple[float, int, LinkCounters | None]] = (
            collections.deque()
        )
        self._faults: collections.deque[tuple[float, str]] = collections.deque(maxlen=200)
        self._off_since: float | None = None  # a channel far from what it was sent, since
        self.problems: dict[str, str] = {}  # a part's standing problem (the MQTT door stood down)
        self._unsubscribe = runtime.events.subscribe(self._on_event, EngineFault.kind)

    def _on_event(self, event: Event) -> None:
        if isinstance(event, EngineFault):
            with self._lock:
                self._faults.append((time.monotonic(), f"{event.source}: {event.reason}"))

    def close(self) -> None:
        self._unsubscribe()

    def now(self) -> Health:
        rt = self.runtime
        t = time.monotonic()
        stats = rt.engine.stats()
        driver = rt.driver
        link = driver.link_counters() if isinstance(driver, Counting) else None
        connected = rt.engine.state().driver_connected
        with self._lock:
            if not self._samples or t - self._samples[-1][0] >= 1.0:
                self._samples.append((t, stats.missed, link))
            while self._samples and self._samples[0][0] < t - self.window_s:
                self._samples.popleft()
            _, missed_then, link_then = self._samples[0]
            faults = [f for at, f in self._faults if at >= t - self.fault_window_s]
        warnings: list[str] = []
        if not connected:
            why = f": {link.error}" if link is not None and link.error else ""
            warnings.append(f"driver {rt.config.driver.type} not connected{why}")
        recent = stats.missed - missed_then
        if recent:
            warnings.append(f"the loop missed {recent} deadlines in the last {self.window_s:g} s")
        if link is not None and link_then is not None:
            warnings += _link_warnings(link, link_then, self.window_s)
        deviation, worst = self._following(t, warnings)
        if faults:
            warnings.append(f"{len(faults)} faults in the last minute (last: {faults[-1]})")
        warnings += _speech_warnings(rt)
        if rt.humanoid is not None and rt.humanoid.error:
            warnings.append(f"humanoid not answering: {rt.humanoid.error}")
        warnings += self.problems.values()
        return Health(
            ok=not warnings,
            warnings=tuple(warnings),
            uptime_s=t - self.started,
            loop_rate_hz=stats.rate_hz,
            missed_recent=recent,
            missed=stats.missed,
            driver=rt.config.driver.type,
            driver_connected=connected,
            link=link,
            deviation=deviation,
            worst=worst,
            faults_recent=len(faults),
            last_fault=faults[-1] if faults else "",
            speech=_speech(rt),
        )

    def _following(self, t: float, warnings: list[str]) -> tuple[float | None, str]:
        driver = self.runtime.driver
        fb = driver.feedback() if isinstance(driver, Measuring) else None
        if fb is None:
            return None, ""
        if fb.deviation > self.stall_units:
            with self._lock:
                since = self._off_since = self._off_since or t
            if t - since >= self.stall_s:
                warnings.append(
                    f"{fb.worst} likely stalled or loose: {fb.deviation:.1f} units from what it "
                    f"was sent for {t - since:.0f} s"
                )
        else:
            with self._lock:
                self._off_since = None
        return fb.deviation, fb.worst


def _link_warnings(now: LinkCounters, then: LinkCounters, window_s: float) -> list[str]:
    out = []
    for name, what in (("timeouts", "write timeouts"), ("losses", "link losses"),
                       ("reconnects", "reconnects"), ("dropped", "frames dropped")):  # fmt: skip
        moved = getattr(now, name) - getattr(then, name)
        if moved > 0:
            out.append(f"driver: {moved} {what} in the last {window_s:g} s")
    return out


def _speech_warnings(rt: Observed) -> list[str]:
    """Speech on but unavailable; or, with audio_out left to auto, no sound card found."""
    if not rt.config.speech.enabled:
        return []
    if rt.speech is None:
        return [f"speech not available: {rt.speech_problem}"]
    chose_null = rt.speech.sink.name == "null"  # AudioSink declares its name
    if chose_null and rt.config.speech.audio_out in (None, "auto"):
        return ["audio out: no sound card found, speech plays silently (connect one, or say "
                "it is meant: --audio-out null, or audio_out: 'null' quoted in YAML)"]  # fmt: skip
    return []


def _speech(rt: Observed) -> str:
    speech = rt.speech
    if speech is None:
        return f"not available: {rt.speech_problem}"
    engines = ", ".join(e.name for e in speech.engines)
    return f"engines {engines}, audio out {type(speech.sink).__name__}"
