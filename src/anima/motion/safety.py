"""The safety stage: the one place where limits are enforced before anything reaches a driver.

In order: non-finite values are replaced by the last commanded value (and reported), every
channel is clamped to its range, the body's forbidden combinations are resolved, and every
channel's change per tick is limited to its speed limit × period. The forbidden-combination
rule is re-checked after the step limit and resolved within it, so both invariants hold for
every frame sent.

While the emergency stop holds the robot, :meth:`SafetyStage.hold` makes the frame: the last
commanded one, except the lips, which go back to rest under the same limits.
"""

from __future__ import annotations

import math

import numpy as np

from anima.body import Body, FloatArray, Role

# Channels an estop does not hold: a mouth frozen open looks broken and holds nothing safe, so
# the lips return to rest (at the step limit) while everything else stays put.
_ESTOP_RELEASED = (Role.LIPS_OPEN, Role.LIPS_WIDE, Role.LIPS_NARROW)
_sum = np.add.reduce  # ndarray.sum() without its Python-level wrapper: this runs every tick


def all_finite(values: FloatArray) -> bool:
    """True when no value is NaN or infinite.

    One reduction on the fast path (any NaN or inf makes the sum so); only when the sum is not
    finite — which huge but finite values can also cause, by overflow — is each value checked.
    """
    return math.isfinite(_sum(values)) or bool(np.isfinite(values).all())


class SafetyStage:
    def __init__(self, body: Body, period: float) -> None:
        self.lower = body.lower()
        self.upper = body.upper()
        self.step = body.max_speeds() * period  # units per tick
        self.rule = body.lip_rule
        self._rest = body.defaults()
        released = (body.role_index(r) for r in _ESTOP_RELEASED)
        self._released = np.array([i for i in released if i is not None], dtype=np.intp)
        self._lo = np.zeros(len(body))
        self._hi = np.zeros(len(body))

    def apply(self, frame: FloatArray, last: FloatArray, out: FloatArray) -> bool:
        """Write into ``out`` what is safe to send after ``last`` of ``frame`` (``out`` may be
        ``frame`` itself; ``frame`` is left as it was otherwise).

        Returns False when ``frame`` had non-finite values (they were replaced).
        """
        finite = all_finite(frame)
        rule = self.rule
        # (the thresholds lie inside the channels' ranges, so checking before the clamp is the same)
        if not finite or (rule is not None and rule.violated(frame)):
            if out is not frame:
                np.copyto(out, frame)
            frame = out
            if not finite:
                bad = ~np.isfinite(frame)
                frame[bad] = last[bad]
            if rule is not None and rule.violated(frame):
                # Nadine's rule: the mouth cannot be pulled wide and narrow at once: close it
                for i in (rule.open, rule.wide, rule.narrow):
                    frame[i] = self._rest[i]
        # one clamp to [max(min, last − step), min(max, last + step)]: last is in range, so the
        # result is both in range and within one step of last
        lo, hi = self._lo, self._hi
        np.subtract(last, self.step, out=lo)
        np.maximum(lo, self.lower, out=lo)
        np.add(last, self.step, out=hi)
        np.minimum(hi, self.upper, out=hi)
        np.maximum(frame, lo, out=out)
        np.minimum(out, hi, out=out)
        if rule is not None and rule.violated(out):
            # The step limit kept both widths up on the way from one to the other. ``last`` was
            # safe, so one of them was inactive there: hold that one at its threshold, which is
            # closer to ``last`` than the limited value and therefore still within the step.
            if last[rule.wide] <= rule.wide_active:
                out[rule.wide] = rule.wide_active
            else:
                out[rule.narrow] = rule.narrow_active
        return finite

    def hold(self, frame: FloatArray, last: FloatArray) -> None:
        """The estop frame into ``frame``: ``last``, the lips on their way to rest."""
        np.copyto(frame, last)
        released = self._released
        if released.size:
            frame[released] = self._rest[released]
            self.apply(frame, last, frame)  # one step per tick, the lip rule kept
