"""The closed loop on the simulated head camera: a face jumps 30° and the robot turns to it,
BlazeFace finding the face in frames rendered for the head pose at their capture; the loop is
the runtime's engine on the simulated driver, stepped on a fake clock.

Looser bounds than the issue's figures (``anima bench attention`` prints those): this checks
the loop turns, settles and does not swing past the face, with a latency and without.
"""

from __future__ import annotations

import pytest

from anima.bench.attention.closed_loop import Condition, jump

pytestmark = pytest.mark.model  # BlazeFace


@pytest.mark.parametrize("compensation", [True, False])
def test_the_gaze_follows_a_face_that_jumps_30_degrees(compensation: bool) -> None:
    result = jump(Condition(compensation=compensation, latency_s=0.08), after_s=2.0)
    assert result.found >= 0.8 * result.frames  # BlazeFace saw the face in the rendered frames
    assert result.settle_s is not None
    assert result.settle_s <= 2.0
    assert result.overshoot_deg <= 8.0
    assert result.steady_error_deg <= 3.0
    assert result.head_deg > 10.0  # the head turned, not the eyes alone
    before = [s for s in result.trace if s.t < 0]
    assert before
    assert all(abs(s.gaze_deg) < 3.0 for s in before)  # it looked at the face straight ahead
