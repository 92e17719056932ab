"""The emergency stop, as :meth:`anima.runtime.Runtime.execute` carries it out.

Engaged: motion holds at once, then speech stops (``end_speak`` reason ``estop``); from then on
moves and speech are refused until the reset. Each is logged and published as a
:class:`~anima.events.Notice` (source ``estop``), which every front door forwards. A linked
humanoid is not stopped by it: its own ``Stop`` mode turns its drives off (docs/grpc.md).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from anima.events import Notice, Publisher

if TYPE_CHECKING:
    from anima.motion.engine import MotionEngine
    from anima.speech.service import SpeechService

log = logging.getLogger(__name__)


def engage(engine: MotionEngine, speech: SpeechService | None, events: Publisher) -> None:
    """Hold motion, stop speech, and say so."""
    was = engine.estopped
    engine.estop()  # first: from here on moves and speech are refused
    if speech is not None:
        speech.stop_speaking("estop")
    _tell(
        engine,
        events,
        "emergency stop: motion held, speech stopped; moves and speech are refused until reset"
        if not was
        else "emergency stop (already active): motion held, speech stopped",
        logging.WARNING,
    )


def release(engine: MotionEngine, events: Publisher) -> None:
    """Accept moves and speech again, and say so (also when the stop was not active)."""
    was = engine.estopped
    engine.reset()
    _tell(
        engine,
        events,
        "emergency stop released: moves and speech are accepted again"
        if was
        else "reset: the emergency stop was not active",
        logging.INFO,
    )


def _tell(engine: MotionEngine, events: Publisher, message: str, level: int) -> None:
    """Log ``message`` now and publish it as a Notice (front doors forward notices)."""
    log.log(level, message)
    events.publish(Notice(t=engine.clock.now(), source="estop", message=message))
