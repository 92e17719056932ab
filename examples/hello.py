"""Hello: say something, nod, look somewhere, wait until done.

python examples/hello.py                              # the simulated robot, in-process
python examples/hello.py mqtt://localhost:1883 nadine # a running `anima serve`, over MQTT
python examples/hello.py http://localhost:8080        # the same, over its REST API
"""

from __future__ import annotations

import sys

from anima import Robot


def main(robot: Robot) -> None:
    robot.say("Hello! I am Nadine.", wait=True)
    robot.play("nod", wait=True)
    robot.look_at(1.0, 0.3, 0.1)  # a metre ahead, a little to my left
    print(robot.state())


if __name__ == "__main__":
    args = sys.argv[1:]
    robot = (
        Robot.connect(args[0], prefix=args[1] if len(args) > 1 else "nadine")
        if args
        else Robot.local()
    )
    with robot:
        main(robot)
