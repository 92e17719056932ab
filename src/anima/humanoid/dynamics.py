"""The simulated body's continuous state: posture and gait velocity, each following its target.

Targets change only at discrete instants (a command, a mode change, the 5 s speed lapse), and
between them every value moves towards its target at a constant rate, so :meth:`advance` is
exact for any step: the FSM integrates from one event to the next, never in fixed ticks.
"""

from __future__ import annotations

from anima.humanoid.spec import ACCEL, AT_REST, POSTURE_RATE, SPEED_LAPSE_S


class Ramp:
    """A value that follows its target at ``rate`` units per second (a rate limit)."""

    __slots__ = ("rate", "target", "value")

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.value = 0.0
        self.target = 0.0

    def advance(self, dt: float) -> None:
        step = self.rate * dt
        gap = self.target - self.value
        self.value = self.target if abs(gap) <= step else self.value + (step if gap > 0 else -step)

    @property
    def settled(self) -> bool:
        return self.value == self.target

    def hold(self, value: float) -> None:
        """Jump to ``value`` and stay there (calibration, emergency stop)."""
        self.value = self.target = value


class Posture:
    """Stand pitch, roll, yaw and height, applied with a rate limit and reported as reached."""

    def __init__(self) -> None:
        self.axes: dict[str, Ramp] = {name: Ramp(rate) for name, rate in POSTURE_RATE.items()}

    def aim(self, targets: dict[str, float]) -> float:
        """Set new targets; returns the seconds the slowest axis needs to get there."""
        worst = 0.0
        for name, target in targets.items():
            ramp = self.axes[name]
            ramp.target = target
            worst = max(worst, abs(target - ramp.value) / ramp.rate)
        return worst

    def relax(self) -> None:
        """Head back to the neutral posture (leaving Stand)."""
        for ramp in self.axes.values():
            ramp.target = 0.0

    def freeze(self) -> None:
        """Stay exactly where the body is (drives off)."""
        for ramp in self.axes.values():
            ramp.hold(ramp.value)

    def zero(self) -> None:
        """Calibration: every axis at its neutral value."""
        for ramp in self.axes.values():
            ramp.hold(0.0)

    def advance(self, dt: float) -> None:
        for ramp in self.axes.values():
            ramp.advance(dt)

    def moving(self) -> tuple[str, ...]:
        """The axes still on their way to their target."""
        return tuple(name for name, ramp in self.axes.items() if not ramp.settled)

    def value(self, name: str) -> float:
        return self.axes[name].value


class Gait:
    """Walk / Run velocity: ramps towards the commanded speed, which lapses after 5 s unless
    the command was continuous; and the AutoUnigaitCOM switch."""

    def __init__(self) -> None:
        self.axes: dict[str, Ramp] = {name: Ramp(accel) for name, accel in ACCEL.items()}
        self.lapse_at: float | None = None  # when a non-continuous command's target returns to 0
        self.unigait_com = False

    def command(self, speeds: dict[str, float], *, continuous: bool, now: float) -> None:
        for name, target in speeds.items():
            self.axes[name].target = target
        self.lapse_at = None if continuous else now + SPEED_LAPSE_S

    def lapse(self) -> None:
        """The command ran out (or the gait ends): aim for rest, keep ramping down."""
        for ramp in self.axes.values():
            ramp.target = 0.0
        self.lapse_at = None

    def halt(self) -> None:
        """Emergency stop: velocity is zero at once."""
        for ramp in self.axes.values():
            ramp.hold(0.0)
        self.lapse_at = None
        self.unigait_com = False

    def advance(self, dt: float) -> None:
        for ramp in self.axes.values():
            ramp.advance(dt)

    @property
    def at_rest(self) -> bool:
        return all(abs(r.value) < AT_REST and r.target == 0.0 for r in self.axes.values())

    def value(self, name: str) -> float:
        return self.axes[name].value
