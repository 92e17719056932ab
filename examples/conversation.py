"""A small scripted conversation: each line spoken with a gesture, gaze on the visitor.

python examples/conversation.py [mqtt://HOST:PORT [PREFIX]]
"""

from __future__ import annotations

import sys

from anima import Robot
from anima.events import Event, SpeechEnded

SCRIPT = [  # (what to say, the gesture that goes with it)
    ("Hello, welcome!", "nod"),
    ("Goodbye for now.", "smile"),
]


def main(robot: Robot) -> None:
    def heard(event: Event) -> None:
        if isinstance(event, SpeechEnded):
            print(f"utterance {event.utterance} ended: {event.reason}")

    unsubscribe = robot.on("end_speak", heard)
    robot.look_at_target("Posture_LookAtInterviewer")  # face the visitor
    for line, gesture in SCRIPT:
        move = robot.play(gesture)  # gesture and speech run together
        robot.say(line, wait=True)
        move.wait()
    robot.end_look_at()
    unsubscribe()


if __name__ == "__main__":
    args = sys.argv[1:]
    robot = (
        Robot.connect(args[0], prefix=args[1] if len(args) > 1 else "nadine")
        if args
        else Robot.local()
    )
    with robot:
        main(robot)
