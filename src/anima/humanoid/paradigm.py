"""The control paradigm (traditional MPC or RL) and its slow, asynchronous switch.

On the robot, ``SetControlMode`` publishes on DDS ``rt/control_mode_cmd`` and returns at once;
the controller switches a few seconds later and reports on ``rt/control_mode_state``, which is
what ``GetControlState`` shows (-1 until the first report). Here both delays are simulated
from the injected clock: the first report arrives ``CONTROL_FEEDBACK_S`` after start-up, and a
switch shows ``CONTROL_SWITCH_S`` after it was asked for.
"""

from __future__ import annotations

from anima.humanoid.spec import (
    CONTROL_FEEDBACK_S,
    CONTROL_MODES,
    CONTROL_SWITCH_S,
    NO_FEEDBACK,
    TRADITIONAL,
)


class ControlParadigm:
    """Which controller drives the robot, and a switch in progress. Times are clock seconds."""

    def __init__(self, started_at: float) -> None:
        self.mode = TRADITIONAL  # the controller actually in charge
        self._feedback_at = started_at + CONTROL_FEEDBACK_S
        self._pending: tuple[int, float] | None = None  # (target, when it completes)

    @property
    def pending(self) -> tuple[int, float] | None:
        """The switch in progress: (target, when it completes)."""
        return self._pending

    def next_event(self) -> float | None:
        return self._pending[1] if self._pending else None

    def fire(self, now: float) -> None:
        """Complete the switch once its time has come."""
        if self._pending and self._pending[1] <= now:
            self.mode = self._pending[0]
            self._pending = None

    def feedback(self, now: float) -> int:
        """What ``GetControlState`` reports: the mode in charge, or -1 before the first report."""
        return self.mode if now >= self._feedback_at else NO_FEEDBACK

    def switching(self, now: float) -> str | None:
        """``None`` when no switch is in progress, else what is happening, in words."""
        if self._pending is None:
            return None
        target, done = self._pending
        return f"switching to {CONTROL_MODES[target]} control ({done - now:.1f} s left)"

    def request(self, target: int, now: float) -> str:
        """Start a switch (the caller checked it is allowed); returns the message to answer."""
        if target == self.mode:
            return f"already in {CONTROL_MODES[target]} control"
        self._pending = (target, now + CONTROL_SWITCH_S)
        # the feedback channel is live once a switch completes, even if it had not spoken yet
        self._feedback_at = min(self._feedback_at, now + CONTROL_SWITCH_S)
        return (
            f"switching to {CONTROL_MODES[target]} control; it completes in about "
            f"{CONTROL_SWITCH_S:g} s: poll GetControlState"
        )
