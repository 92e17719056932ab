"""Play an animation as a primary move without copying it.

:class:`~anima.motion.moves.Keyframes` copies, checks and differentiates its frames when it is
made: for a long animation that is tens of megabytes of work each time it is played. An
animation's frames were checked when the file was loaded (integers 0–255, so finite) and are
read-only, so :class:`AnimationMove` shares them and interpolates between two rows per tick.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from anima.animation.xml_format import Animation
from anima.body import Body, FloatArray
from anima.motion.moves import IndexArray


class AnimationMove:
    """A :class:`~anima.motion.moves.Move` playing ``animation``'s columns ``cols``.

    Values between frames are interpolated linearly; the last frame is held at the end, like
    :class:`~anima.motion.moves.Keyframes` (which this replaces for library animations).
    """

    finite = True  # an animation's frames are 0–255: the engine need not check each tick's

    def __init__(self, animation: Animation, body: Body, cols: Sequence[int]) -> None:
        self.name = animation.name
        self._frames = animation.frames  # shared, read-only: never copied here
        every = list(cols) == list(range(len(animation.channels)))
        # a row of all columns is a view; a subset is a small gather per tick (≤ 255 values)
        self._cols: IndexArray | None = None if every else np.asarray(cols, dtype=np.intp)
        self._channels = body.indices([animation.channels[j] - 1 for j in cols])
        self._period = animation.frame_period
        self._last = animation.frame_count - 1

    @property
    def channels(self) -> IndexArray:
        return self._channels

    @property
    def duration(self) -> float:
        return self._last * self._period

    def begin(self, start: FloatArray) -> None:
        """Animations play as authored; the engine's blend takes care of the start."""

    def _row(self, i: int) -> FloatArray:
        row: FloatArray = self._frames[i]
        return row if self._cols is None else row[self._cols]

    def evaluate(self, t: float) -> FloatArray:
        x = t / self._period
        i = int(x)
        if i >= self._last:
            return self._row(self._last).copy()
        if i < 0:
            return self._row(0).copy()
        a = self._row(i)
        result: FloatArray = a + (self._row(i + 1) - a) * (x - i)
        return result
