"""The gestures annotated speech plays: a small port the speech service is given.

The speech service knows words and samples, not animations; the runtime hands it a
:class:`Gestures` (``anima.behaviour.speech_gestures.BehaviourGestures``: the animation library
through Nadine's behaviour rules, so a gesture named in speech plays exactly as the
``play_animation`` command would).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Gestures(Protocol):
    def known(self, name: str) -> bool:
        """``name`` is in the animation library."""
        ...

    def choices(self) -> Sequence[str]:
        """Every name (for the closest-name hint of a refusal)."""
        ...

    def start(self, name: str) -> None:
        """Start the gesture now (called on the motion thread: must not block). Raises an
        :class:`~anima.errors.AnimaError` when it is refused (estop, look-at hold)."""
        ...

    def stop(self, name: str) -> None:
        """Stop the gesture if it still plays or waits (not blocking)."""
        ...

    def wait(self, name: str, timeout: float) -> bool:
        """Block until every start of ``name`` has ended; False on timeout."""
        ...

    def duration(self, name: str) -> float:
        """How long the gesture plays, in seconds."""
        ...
