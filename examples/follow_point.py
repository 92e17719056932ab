"""Follow a moving point: the head and eyes track a target circling in front of the robot.

python examples/follow_point.py [mqtt://HOST:PORT [PREFIX]]
"""

from __future__ import annotations

import math
import sys
import time

from anima import Robot


def main(robot: Robot, seconds: float = 2.0, rate_hz: float = 20.0) -> int:
    """Send look-at points for ``seconds``; returns how many were sent."""
    sent = 0
    start = time.monotonic()
    while (t := time.monotonic() - start) < seconds:
        angle = 2 * math.pi * t / seconds  # one circle, 1.5 m ahead
        robot.look_at(1.5, 0.4 * math.sin(angle), 0.2 * math.cos(angle))
        sent += 1
        time.sleep(1.0 / rate_hz)
    return sent  # the gaze holds the last point; robot.end_look_at() would let it go


if __name__ == "__main__":
    args = sys.argv[1:]
    robot = (
        Robot.connect(args[0], prefix=args[1] if len(args) > 1 else "nadine")
        if args
        else Robot.local()
    )
    with robot:
        print(f"{main(robot)} points sent")
