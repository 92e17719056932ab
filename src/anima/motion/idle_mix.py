"""Mixing idle layers into the held pose, channel by channel, without fighting moves.

Each idle channel has a weight ramp: 0 while a primary move owns the channel, rising to 1
(minimum-jerk over ``handback_s``) once the move lets go, so a released channel blends back
into idle life instead of jumping. Layers can be added or stopped from any thread; the change
takes effect at the next tick.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from anima.body import FloatArray
from anima.motion.idle import IdleLayer
from anima.motion.minjerk import min_jerk


class IdleMixer:
    def __init__(self, layers: Sequence[IdleLayer], n: int, period: float, handback_s: float):
        self._target = np.zeros(n)  # scratch: the layers' targets
        self._ramp_step = period / handback_s
        self._ramp: dict[int, float] = {}
        self._channels: list[int] = []
        self._settled = True
        self._changes: collections.deque[IdleLayer | str] = collections.deque()
        self.layers: list[IdleLayer] = []
        self._set(list(layers), np.zeros(n, dtype=bool))

    # --- any thread ---------------------------------------------------------------------------
    def add(self, layer: IdleLayer) -> None:
        """Run ``layer`` from the next tick on, replacing any layer of the same name."""
        self._changes.append(layer)

    def stop(self, name: str) -> None:
        """Ask layer ``name`` to stop (it may fade out first); unknown names are ignored."""
        self._changes.append(name)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(layer.name for layer in self.layers)

    # --- engine thread --------------------------------------------------------------------------
    def ownership_changed(self) -> None:
        """A move took or released channels: re-run the ramps."""
        self._settled = False

    def release_all(self) -> None:
        """Every idle channel starts again from weight 0 (after an estop)."""
        for i in self._ramp:
            self._ramp[i] = 0.0
        self._settled = False

    def _set(self, layers: list[IdleLayer], owned: NDArray[np.bool_]) -> None:
        self.layers = layers
        channels = sorted({int(i) for layer in layers for i in layer.channels})
        # known channels keep their weight; a new one is idle's at once unless a move owns it
        # (layers start from their own zero, so they need no blend of their own)
        self._ramp = {i: self._ramp.get(i, 0.0 if owned[i] else 1.0) for i in channels}
        self._channels = channels
        self._settled = False

    def _apply_changes(self, owned: NDArray[np.bool_]) -> None:
        layers = list(self.layers)
        while self._changes:
            change = self._changes.popleft()
            if isinstance(change, str):
                for layer in layers:
                    if layer.name == change:
                        layer.stop()
            else:
                layers = [old for old in layers if old.name != change.name]
                layers.append(change)
        self._set(layers, owned)

    def mix(self, t: float, base: FloatArray, owned: NDArray[np.bool_], out: FloatArray) -> None:
        """Write base + weighted idle targets into ``out`` (already a copy of ``base``)."""
        if self._changes:
            self._apply_changes(owned)
        if not self.layers:
            return
        target = self._target
        np.copyto(target, base)
        finished = False
        for layer in self.layers:
            layer.apply(t, base, target)
            finished = finished or layer.finished
        if finished:
            self._set([layer for layer in self.layers if not layer.finished], owned)
        ramp = self._ramp
        if not self._settled:
            settled = True
            for i in self._channels:
                if owned[i]:
                    ramp[i] = 0.0
                elif ramp[i] < 1.0:
                    ramp[i] = min(1.0, ramp[i] + self._ramp_step)
                    settled = False
            self._settled = settled
        for i in self._channels:
            r = ramp[i]
            if r > 0.0:  # plain floats: a numpy scalar's arithmetic costs more on this path
                b = base.item(i)
                out[i] = b + (min_jerk(r) if r < 1.0 else 1.0) * (target.item(i) - b)
