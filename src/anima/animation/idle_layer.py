"""Play an animation as an idle layer (Nadine's ``blink`` and ``breathingSlow``).

The layer is *relative*: it adds the animation's change from its first frame to whatever the
body holds, so a blink closes the lids from where they are and a breath rises and falls around
the current pose. One-shot layers finish by themselves; looping layers fade in, and fade out
when stopped.
"""

from __future__ import annotations

from anima.animation.xml_format import Animation
from anima.body import Body, FloatArray
from anima.motion.minjerk import min_jerk
from anima.motion.moves import IndexArray


class AnimationLayer:
    """An :class:`~anima.motion.idle.IdleLayer` made from an animation."""

    def __init__(
        self, animation: Animation, body: Body, *, loop: bool, fade_s: float = 0.5
    ) -> None:
        self.name = f"anim:{animation.name}"  # apart from the engine's own "blink" layer
        self._channels = body.indices([c - 1 for c in animation.channels])
        # the change from the first frame is taken per tick (two rows), not for the whole
        # animation here: this runs on the caller's thread when the layer starts
        self._frames = animation.frames
        self._first = animation.frames[0].copy()
        self._period = animation.frame_period
        self._count = animation.frame_count
        self._loop = loop
        self._fade = fade_s if loop else 0.0
        self._t0: float | None = None
        self._stop_at: float | None = None
        self._stopping = False
        self._finished = False

    @property
    def channels(self) -> IndexArray:
        return self._channels

    @property
    def finished(self) -> bool:
        return self._finished

    def stop(self) -> None:
        """Fade out (looping) or end at once (one-shot); the engine then drops the layer."""
        self._stopping = True

    def apply(self, t: float, base: FloatArray, target: FloatArray) -> None:
        if self._t0 is None:
            self._t0 = t
        lt = t - self._t0
        if self._stopping and self._stop_at is None:
            self._stop_at = t
        x = lt / self._period
        if self._loop:
            x %= self._count
        elif x >= self._count - 1:
            self._finished = True
            return
        i = int(x)
        j = i + 1 if i + 1 < self._count else 0
        f = x - i
        delta = self._frames[i] * (1.0 - f) + self._frames[j] * f - self._first
        gain = 1.0
        if self._fade > 0.0:
            gain = min_jerk(lt / self._fade)
            if self._stop_at is not None:
                gain *= 1.0 - min_jerk((t - self._stop_at) / self._fade)
                if t - self._stop_at >= self._fade:
                    self._finished = True
        elif self._stop_at is not None:
            self._finished = True
            return
        target[self._channels] = base[self._channels] + delta * gain
