"""Overrides: a source owns a channel subset outright for as long as it sets it.

The lips are the example: while speech plays, the viseme under the audio playback position
replaces the lip channels whatever the primary move or offsets say. A source is either fixed
values or a callable evaluated on the engine thread at each tick (it must be quick and must
not block: read a position, index a table). A callable returning ``None`` releases the override.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from anima.body import Body, FloatArray
from anima.motion.moves import IndexArray, check_finite
from anima.motion.safety import all_finite

log = logging.getLogger(__name__)

OverrideFn = Callable[[float], Sequence[float] | FloatArray | None]


@dataclass(frozen=True)
class _Override:
    channels: IndexArray
    values: FloatArray | None  # fixed values, or None when ``fn`` supplies them
    fn: OverrideFn | None
    indices: tuple[int, ...] = field(init=False)  # the channels as ints (plain floats' writes)

    def __post_init__(self) -> None:
        object.__setattr__(self, "indices", tuple(int(i) for i in self.channels))


class OverrideTable:
    """Thread-safe table of overrides; the engine applies them after the offsets."""

    def __init__(self, body: Body, on_fault: Callable[[str, str], None]) -> None:
        self._body = body
        self._on_fault = on_fault
        self._lock = threading.Lock()
        self._pending: dict[str, _Override | None] = {}
        self._dirty = False
        self._active: dict[str, _Override] = {}

    def set_values(self, name: str, values: Mapping[str | int, float]) -> None:
        check_finite(values.values(), f"override {name!r}")
        channels = self._body.indices(values.keys())
        self._put(name, _Override(channels, np.array(list(values.values()), float), None))

    def set_source(self, name: str, channels: Sequence[str | int], fn: OverrideFn) -> None:
        if not callable(fn):
            raise TypeError(f"override {name!r}: source must be callable")
        self._put(name, _Override(self._body.indices(channels), None, fn))

    def release(self, name: str) -> None:
        self._put(name, None)

    def reset(self) -> None:
        with self._lock:
            self._pending.clear()
            self._dirty = False
        self._active.clear()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._active)

    def _put(self, name: str, entry: _Override | None) -> None:
        with self._lock:
            self._pending[name] = entry
            self._dirty = True

    def apply(self, t: float, frame: FloatArray) -> None:
        """Replace overridden channels in ``frame`` (engine thread)."""
        if self._dirty:
            with self._lock:
                pending, self._pending, self._dirty = self._pending, {}, False
            for name, entry in pending.items():
                if entry is None:
                    self._active.pop(name, None)
                else:
                    self._active[name] = entry
        if not self._active:
            return
        dropped: list[str] = []
        for name, entry in self._active.items():
            values = entry.values
            if entry.fn is not None:
                try:
                    got = entry.fn(t)
                except Exception as exc:  # a faulty source must never stop the loop
                    dropped.append(name)
                    self._on_fault(name, f"override source raised {exc!r}")
                    continue
                if got is None:
                    dropped.append(name)
                    continue
                if _plain_floats(got, len(entry.channels)):
                    # a tuple or list of floats (a viseme table's row): written as it is, no
                    # array made — after a sleep each numpy call costs the tick microseconds
                    for i, value in zip(entry.indices, got, strict=True):
                        frame[i] = value
                    continue
                try:
                    values = np.asarray(got, dtype=np.float64)
                except (TypeError, ValueError) as exc:  # not numbers: dropped, not every tick
                    dropped.append(name)
                    self._on_fault(name, f"override source returned no numbers: {exc}")
                    continue
                if values.shape != entry.channels.shape or not all_finite(values):
                    dropped.append(name)
                    self._on_fault(
                        name,
                        f"override source returned {values.shape} values "
                        f"(expected {entry.channels.shape}) or non-finite values",
                    )
                    continue
            frame[entry.channels] = values
        for name in dropped:
            self._active.pop(name, None)


def _plain_floats(got: object, n: int) -> bool:
    """``got`` is a tuple or list of ``n`` finite Python floats."""
    if not isinstance(got, tuple) and not isinstance(got, list):
        return False
    if len(got) != n:
        return False
    for value in got:
        if type(value) is not float:
            return False
    return math.isfinite(math.fsum(got)) or all(math.isfinite(v) for v in got)
