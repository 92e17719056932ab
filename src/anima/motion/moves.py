"""Primary moves: mutually exclusive, queued, each owning a set of channels for a while.

A move is a small object with ``channels`` (the indices it owns), ``duration`` (seconds, may be
``inf``), ``begin(start)`` called once with the full frame it starts from, and ``evaluate(t)``
returning the values of its channels at local time ``t``. Moves are single-use: queue a new one
each time. The engine blends every move in from the last commanded frame, so a move need not
start where the robot is (see :mod:`anima.motion.engine`).

A move may also say ``finite = True`` when its values cannot be NaN or infinite (the built-in
ones, where their inputs allow it): the engine then skips checking each tick's values, the
check a plug-in's move gets (a broken one is dropped, the body held).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from anima.body import Body, FloatArray
from anima.errors import InvalidCommandError, NonFiniteValueError
from anima.motion.minjerk import min_jerk

IndexArray = NDArray[np.intp]


@runtime_checkable
class Move(Protocol):
    """What the engine needs of a primary move."""

    name: str

    @property
    def channels(self) -> IndexArray:
        """Indices of the channels this move owns while it runs."""
        ...

    @property
    def duration(self) -> float:
        """Seconds; ``math.inf`` for a move that runs until cleared or preempted."""
        ...

    def begin(self, start: FloatArray) -> None:
        """Called once, on the engine thread, with the full frame the move starts from."""
        ...

    def evaluate(self, t: float) -> FloatArray:
        """Values for ``channels`` at local time ``t`` ≥ 0 (clamped to ``duration`` by callers)."""
        ...


def check_finite(values: Iterable[float], what: str) -> None:
    """Raise :class:`NonFiniteValueError` naming ``what`` when any value is NaN or infinite."""
    for v in values:
        if not math.isfinite(v):
            raise NonFiniteValueError(f"{what}: value {v!r} is not finite")


def _duration(duration: float, what: str, *, allow_inf: bool = False) -> float:
    d = float(duration)
    if math.isnan(d) or d < 0 or (math.isinf(d) and not allow_inf):
        allowed = "≥ 0 (or inf)" if allow_inf else "finite and ≥ 0"
        raise InvalidCommandError(f"{what}: duration must be {allowed}, got {duration!r}")
    return d


class _FixedMove:
    """What the built-in moves share: a fixed channel set and a fixed duration."""

    # finite values by construction: the engine skips its per-tick check of them (a move
    # without this attribute, a plug-in's, is checked every tick)
    finite = True
    name: str
    _channels: IndexArray
    _duration: float

    @property
    def channels(self) -> IndexArray:
        return self._channels

    @property
    def duration(self) -> float:
        return self._duration


class Goto(_FixedMove):
    """Minimum-jerk motion from wherever the body is to a target (a partial frame or posture)."""

    def __init__(
        self, body: Body, target: Mapping[str | int, float], duration: float, name: str = "goto"
    ) -> None:
        if not target:
            raise InvalidCommandError(f"{name}: empty target")
        check_finite(target.values(), f"{name} target")
        self.name = name
        self._channels = body.indices(target.keys())
        self._target = np.array(list(target.values()), dtype=np.float64)
        self._duration = _duration(duration, name)
        self._start = self._target.copy()
        self._delta = np.zeros_like(self._target)

    @classmethod
    def posture(cls, body: Body, posture: str, duration: float) -> Goto:
        """A goto of the whole body to one of its named postures.

        A posture names the channels it sets; every other channel goes to its default, so no
        channel stays where the last gesture left it (an arm still up after "eased to rest").
        """
        values = body.posture(posture).values
        target: dict[str | int, float] = {i: ch.default for i, ch in enumerate(body.channels)}
        target.update({body.index(name): value for name, value in values.items()})
        return cls(body, target, duration, name=f"goto:{posture}")

    def target_items(self) -> list[tuple[int, float]]:
        """(channel index, target value) pairs."""
        return list(zip(self._channels.tolist(), self._target.tolist(), strict=True))

    def begin(self, start: FloatArray) -> None:
        self._start = start[self._channels].copy()
        self._delta = self._target - self._start
        self.finite = bool(np.isfinite(self._delta).all())  # not when a huge target overflows

    def evaluate(self, t: float) -> FloatArray:
        s = 1.0 if self._duration <= 0.0 else min_jerk(t / self._duration)
        return self._start + self._delta * s


class Keyframes:
    """Per-channel trajectories sampled every ``frame_period`` seconds, resampled by time.

    An animation authored at 30 ms per frame therefore plays at its true speed on the 100 Hz
    loop: values between frames are interpolated linearly; the last frame is held at the end.
    """

    finite = True  # frames checked finite when made, and their steps too

    def __init__(
        self,
        body: Body,
        channels: Sequence[str | int],
        frames: Sequence[Sequence[float]] | FloatArray,
        frame_period: float = 0.03,
        name: str = "keyframes",
    ) -> None:
        data = np.asarray(frames, dtype=np.float64)
        if data.ndim != 2 or data.shape[0] < 1:
            raise InvalidCommandError(f"{name}: frames must be a non-empty 2-D array")
        if data.shape[1] != len(channels):
            raise InvalidCommandError(
                f"{name}: {data.shape[1]} values per frame for {len(channels)} channels"
            )
        if not np.isfinite(data).all():
            raise NonFiniteValueError(f"{name}: frames contain NaN or infinite values")
        if not (math.isfinite(frame_period) and frame_period > 0):
            raise InvalidCommandError(f"{name}: frame_period must be > 0, got {frame_period!r}")
        self.name = name
        self._channels = body.indices(channels)
        self._frames = data
        with np.errstate(over="ignore"):  # huge values whose difference overflows: refused
            self._steps = np.diff(data, axis=0)
        if not np.isfinite(self._steps).all():
            raise NonFiniteValueError(f"{name}: two frames differ by more than a float holds")
        self._period = float(frame_period)
        self._last = len(data) - 1

    @property
    def channels(self) -> IndexArray:
        return self._channels

    @property
    def duration(self) -> float:
        return self._last * self._period

    @property
    def frame_count(self) -> int:
        return self._last + 1

    def begin(self, start: FloatArray) -> None:
        """Keyframes play as authored; the engine's blend takes care of the start."""

    def evaluate(self, t: float) -> FloatArray:
        x = t / self._period
        i = int(x)
        frames: FloatArray = self._frames
        if i >= self._last:
            return frames[self._last]  # type: ignore[no-any-return]  # numpy row of a 2-D array
        if i < 0:
            return frames[0]  # type: ignore[no-any-return]
        result: FloatArray = self._frames[i] + self._steps[i] * (x - i)
        return result


class Hold(_FixedMove):
    """Hold channels where they are for ``duration`` seconds (``inf``: until cleared)."""

    def __init__(
        self, body: Body, duration: float, channels: Sequence[str | int] | None = None
    ) -> None:
        self.name = "hold"
        self._duration = _duration(duration, "hold", allow_inf=True)
        self._channels = (
            np.arange(len(body), dtype=np.intp) if channels is None else body.indices(channels)
        )
        self._values = np.zeros(len(self._channels), dtype=np.float64)

    def begin(self, start: FloatArray) -> None:
        self._values = start[self._channels].copy()

    def evaluate(self, t: float) -> FloatArray:
        return self._values


class Decelerate(_FixedMove):
    """Bring moving channels to rest with a linearly decaying velocity (used by ``clear``).

    Position and velocity stay continuous: x(t) = x0 + v·(t − t²/2T) until T, then held.
    """

    def __init__(self, channels: IndexArray, velocity: FloatArray, stop_time: float) -> None:
        self.name = "decelerate"
        self._channels = channels
        self._velocity = velocity
        self.finite = bool(np.isfinite(velocity).all())
        self._stop = self._duration = max(float(stop_time), 1e-6)
        self._start = np.zeros(len(channels), dtype=np.float64)

    def begin(self, start: FloatArray) -> None:
        self._start = start[self._channels].copy()

    def evaluate(self, t: float) -> FloatArray:
        tt = min(t, self._stop)
        return self._start + self._velocity * (tt - tt * tt / (2.0 * self._stop))
