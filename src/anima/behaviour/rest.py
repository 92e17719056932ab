"""Easing the whole body to its rest posture, as the runtime does when it stops."""

from __future__ import annotations

import logging

from anima.body import Body
from anima.motion.engine import MotionEngine
from anima.motion.moves import Goto

log = logging.getLogger(__name__)


def ease_to_rest(engine: MotionEngine, body: Body, posture: str, timeout: float) -> bool:
    """Blend the whole body to ``posture`` and end idle life; True when it got there within
    ``timeout``. Channels the posture does not name go to their defaults; a posture the body
    does not have is ``default`` (logged). Nothing moves under an emergency stop (False)."""
    if posture not in body.postures:
        log.warning("no posture %r in the body; easing to 'default'", posture)
        posture = "default"
    if engine.estopped:
        return False
    # Breathing and blinking would take their channels back when the move ends, and a gaze
    # offset would still turn the head: end them under the move, which owns every channel.
    for layer in engine.idle_layer_names:
        engine.stop_idle_layer(layer)
    for source in engine.state().offsets:
        engine.clear_offset(source)
    engine.play_now(Goto.posture(body, posture, duration=min(1.0, 0.7 * timeout)))
    return engine.wait_until_idle(timeout)
