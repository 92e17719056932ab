"""A humanoid greeting: the simulated Adam stands up, then greets while the head speaks.

python examples/humanoid_greeting.py    # runs the simulated Adam in-process (humanoid.type sim)
"""

from __future__ import annotations

from anima import Robot
from anima.config import AnimaConfig, HumanoidConfig


def main(robot: Robot) -> None:
    body = robot.humanoid
    body.stand_up()  # Start → Zero → Stand, waiting for each (a few seconds)
    body.stand_motion("Greeting")
    robot.play("LOOKUP_Waving")
    robot.say("Hello! Nice to meet you.", wait=True)
    print(robot.state().humanoid)


if __name__ == "__main__":
    with Robot.local(AnimaConfig(humanoid=HumanoidConfig(type="sim", sim_port=0))) as robot:
        main(robot)
