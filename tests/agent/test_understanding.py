"""Understanding requests without an LLM: the development set (requests as people say them to a
social robot — lower case, no punctuation, "um", a misheard word — written for issue 13
independently of benchmarks/conversation, whose held-out split is never read here), requests for
the user's own actions, questions answered from the config and the registry, refusals, and the
aliases for small LLMs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Literal

import pytest

from anima.agent.actions import ActionRegistry
from anima.agent.plan import parse_plan
from anima.agent.understanding import (
    NOT_UNDERSTOOD,
    About,
    Understander,
    Understanding,
    aliases,
    asr_phrases,
    choice_aliases,
    understand,
)
from anima.agent.vocabulary import builtin_registry, robot_registry
from anima.runtime import Runtime

pytestmark = pytest.mark.fast

# the gestures and postures of the animation library that ships with anima, as
# robot_registry offers them (test_understanding checks this against a real runtime)
SHIPPED_GESTURES = (
    "LOOKUPPostureDefaultBlink",
    "LOOKUP_Waving",
    "blink",
    "bow",
    "nod",
    "point_right",
    "shake",
    "shakehand_TwoArgGesture",
    "smile",
    "surprise",
    "think",
)
SHIPPED_POSTURES = ("LOOKUPPostureDefault", "Posture_LookAtInterviewer", "Posture_LookAtZoom")


class FakeHumanoid:
    """Accepts every humanoid command (the understanding layer only needs the actions)."""

    def speed(self, x: float, y: float, yaw: float, *, continuous: bool = False) -> str:
        return "ok"

    def stand_motion(self, motion: str) -> str:
        return "ok"

    def posture(self, pitch: float, roll: float, yaw: float, height: float) -> str:
        return "ok"

    def set_mode(self, mode: str) -> str:
        return "ok"


def shipped_registry(*, humanoid: bool = True) -> ActionRegistry:
    """The registry of `anima serve --agent` with the shipped library (and a humanoid)."""
    return builtin_registry(
        animations=SHIPPED_GESTURES,
        postures=SHIPPED_POSTURES,
        humanoid=FakeHumanoid() if humanoid else None,
    )


WAVE = "play_animation(name='LOOKUP_Waving')"
NOD = "play_animation(name='nod')"
SHAKE = "play_animation(name='shake')"
SMILE = "play_animation(name='smile')"
BOW = "play_animation(name='bow')"
LEFT = "look_at(x=1.0, y=0.6, z=0.0)"
RIGHT = "look_at(x=1.0, y=-0.6, z=0.0)"
UP = "look_at(x=1.0, y=0.0, z=0.5)"
DOWN = "look_at(x=1.0, y=0.0, z=-0.4)"
AT_ME = "look_at_target(name='Posture_LookAtInterviewer')"
AHEAD = "look_at_target(name='LOOKUPPostureDefault')"
STOP = "stop()"

Expected = list[str] | str  # the plan, or the kind: answer | refuse | not_understood

DEV: list[tuple[str, str, Expected]] = [
    # --- gestures, as people ask for them
    ("gesture", "give me a nod", [NOD]),
    ("gesture", "could you nod please", [NOD]),
    ("gesture", "can you wave at me", [WAVE]),
    ("gesture", "wave hello", [WAVE]),
    ("gesture", "um can you like wave", [WAVE]),
    ("gesture", "Hey robot, give us a wave!", [WAVE]),
    ("gesture", "would you mind waving", [WAVE]),
    ("gesture", "wave goodbye to them", [WAVE]),
    ("gesture", "nod your head for me", [NOD]),
    ("gesture", "nod yes", [NOD]),
    ("gesture", "shake your head no", [SHAKE]),
    ("gesture", "give me a big smile", [SMILE]),
    ("gesture", "smile at me", [SMILE]),
    ("gesture", "can you grin", [SMILE]),
    ("gesture", "look happy", [SMILE]),
    ("gesture", "please take a bow", [BOW]),
    ("gesture", "bow down", [BOW]),
    ("gesture", "act surprised", ["play_animation(name='surprise')"]),
    ("gesture", "look shocked", ["play_animation(name='surprise')"]),
    ("gesture", "show me you're thinking", ["play_animation(name='think')"]),
    ("gesture", "point to your right", ["play_animation(name='point_right')"]),
    ("gesture", "lets shake hands", ["play_animation(name='shakehand_TwoArgGesture')"]),
    ("gesture", "i want you to shake my hand", ["play_animation(name='shakehand_TwoArgGesture')"]),
    ("gesture", "blink", ["play_animation(name='blink')"]),
    ("gesture", "smiling", [SMILE]),
    ("gesture", "ok nod", [NOD]),
    # --- gaze
    ("gaze", "look to your left", [LEFT]),
    ("gaze", "look left", [LEFT]),
    ("gaze", "look up", [UP]),
    ("gaze", "can you look up please", [UP]),
    ("gaze", "look down at the floor", [DOWN]),
    ("gaze", "turn your head to the right", [RIGHT]),
    ("gaze", "look at me", [AT_ME]),
    ("gaze", "look over here", [AT_ME]),
    ("gaze", "look straight ahead", [AHEAD]),
    ("gaze", "look left and right", [LEFT, RIGHT]),
    ("gaze", "um look to the right", [RIGHT]),
    # --- speech
    ("speech", "say hello", ["say(text='Hello!')"]),
    ("speech", "tell them good morning", ["say(text='good morning')"]),
    ("speech", "say good morning everyone", ["say(text='good morning everyone')"]),
    ("speech", "can you say thank you", ["say(text='thank you')"]),
    ("speech", "please say goodbye", ["say(text='Goodbye!')"]),
    ("speech", "repeat after me i love robots", ["say(text='i love robots')"]),
    ("speech", "tell everyone dinner is ready", ["say(text='dinner is ready')"]),
    ("speech", "introduce yourself", ["say(text='Hello! I am a robot. Nice to meet you.')"]),
    # --- several steps, counts
    ("multi_step", "nod twice then smile", [NOD, NOD, SMILE]),
    ("multi_step", "wave and say hello", [WAVE, "say(text='Hello!')"]),
    ("multi_step", "shake your head three times", [SHAKE, SHAKE, SHAKE]),
    ("multi_step", "wave then nod", [WAVE, NOD]),
    ("multi_step", "smile and then bow", [SMILE, BOW]),
    ("multi_step", "nod 2 times", [NOD, NOD]),
    ("multi_step", "wave twice and then say goodbye", [WAVE, WAVE, "say(text='Goodbye!')"]),
    ("multi_step", "look left then look right", [LEFT, RIGHT]),
    ("multi_step", "say hi and wave", ["say(text='Hi!')", WAVE]),
    ("multi_step", "nod once", [NOD]),
    ("multi_step", "wait two seconds and then nod", ["wait(seconds=2.0)", NOD]),
    ("multi_step", "bow, smile, and wave", [BOW, SMILE, WAVE]),
    # --- the humanoid: directions and amounts
    ("humanoid", "walk forward for two seconds", ["walk_forward(seconds=2.0)"]),
    ("humanoid", "walk forward a bit", ["walk_forward(seconds=1.0)"]),
    ("humanoid", "turn right a little", ["turn(direction='right', seconds=1.0)"]),
    ("humanoid", "walk back", ["walk_backward()"]),
    ("humanoid", "walk forward", ["walk_forward()"]),
    ("humanoid", "go forward for 3 seconds", ["walk_forward(seconds=3.0)"]),
    ("humanoid", "take three steps forward", ["walk_forward(seconds=3.0)"]),
    ("humanoid", "move back a little", ["walk_backward(seconds=1.0)"]),
    ("humanoid", "walk backwards for one second", ["walk_backward(seconds=1.0)"]),
    ("humanoid", "turn left", ["turn(direction='left')"]),
    ("humanoid", "turn to the left", ["turn(direction='left')"]),
    ("humanoid", "turn around", ["turn(direction='left', seconds=6.3)"]),
    ("humanoid", "turn right 90 degrees", ["turn(direction='right', seconds=3.14)"]),
    ("humanoid", "could you walk forward for like five seconds", ["walk_forward(seconds=5.0)"]),
    ("humanoid", "walk forward for to seconds", ["walk_forward(seconds=2.0)"]),
    ("humanoid", "stop walking", ["stop_walking()"]),
    ("humanoid", "walk forward then turn left", ["walk_forward()", "turn(direction='left')"]),
    # --- questions about itself, courtesies
    ("question", "what's your name", "answer"),
    ("question", "whats your name", "answer"),
    ("question", "what can you do", "answer"),
    ("question", "who are you", "answer"),
    ("question", "how are you", "answer"),
    ("question", "how are you doing today", "answer"),
    ("question", "what are you able to do", "answer"),
    ("question", "hey robot what is your name", "answer"),
    ("question", "are you a robot", "answer"),
    ("chitchat", "hello", "answer"),
    ("chitchat", "good morning", "answer"),
    ("chitchat", "thank you", "answer"),
    ("chitchat", "thanks a lot", "answer"),
    ("chitchat", "goodbye", "answer"),
    # --- stop and cancel
    ("stop", "stop", [STOP]),
    ("stop", "never mind", [STOP]),
    ("stop", "cancel that", [STOP]),
    ("stop", "stop stop", [STOP]),
    ("stop", "ok stop", [STOP]),
    ("stop", "wait, stop!", [STOP]),
    ("stop", "forget it", [STOP]),
    ("stop", "be quiet", [STOP]),
    ("stop", "that's enough", [STOP]),
    # --- what it can't do: a refusal by name
    ("oov", "make me a coffee", "refuse"),
    ("oov", "can you fly", "refuse"),
    ("oov", "do a backflip", "refuse"),
    ("oov", "please open the door", "refuse"),
    ("oov", "bring me a glass of water", "refuse"),
    ("oov", "sing a song", "refuse"),
    ("oov", "dance for me", "refuse"),
    ("oov", "could you turn on the lights", "refuse"),
    ("oov", "i want a pizza", "refuse"),
    ("oov", "what's the weather like tomorrow", "refuse"),
    ("oov", "wave and fly", "refuse"),
    ("oov", "nod fifty times", "refuse"),
    ("oov", "walk forward for an hour", "refuse"),
    # --- noise, fragments and what must not become a guess
    ("garbage", "", "not_understood"),
    ("garbage", "um uh", "not_understood"),
    ("garbage", "blorp zzk", "not_understood"),
    ("garbage", "the of and", "not_understood"),
    ("garbage", "don't wave", "not_understood"),
    ("garbage", "look", "not_understood"),
    ("garbage", "turn", "not_understood"),
    ("garbage", "nod for two seconds", "not_understood"),
    ("garbage", "wave at the car", "not_understood"),
    ("garbage", "i think that is a bowl", "not_understood"),
    ("garbage", "banana", "not_understood"),
    ("garbage", "nod twice three times", "not_understood"),
    # --- a second batch, written after the first was understood, and measured before any
    # change for it: 42 of 54 at first (the misses were all "not understood", but one)
    ("gesture", "hey could you give me a little wave", [WAVE]),
    ("gesture", "do a nod", [NOD]),
    ("gesture", "nod at me", [NOD]),
    ("gesture", "please smile for the camera", [SMILE]),
    ("gesture", "shake your head", [SHAKE]),
    ("gesture", "you can bow now", [BOW]),
    ("gesture", "wave to the audience", [WAVE]),
    ("gesture", "can you please wave goodbye to my friend", [WAVE]),
    ("gesture", "give a little bow", [BOW]),
    ("gesture", "show me your smile", [SMILE]),
    ("gesture", "nod if you understand", [NOD]),
    ("gesture", "point right", ["play_animation(name='point_right')"]),
    ("gaze", "look towards the left", [LEFT]),
    ("gaze", "can you look at the camera", ["look_at_target(name='Posture_LookAtZoom')"]),
    ("gaze", "look down", [DOWN]),
    ("gaze", "eyes on me", [AT_ME]),
    ("gaze", "look right please", [RIGHT]),
    ("gaze", "glance to the left", [LEFT]),
    ("speech", "say nice to meet you", ["say(text='nice to meet you')"]),
    ("speech", "tell him happy birthday", ["say(text='happy birthday')"]),
    ("speech", "could you say hi", ["say(text='Hi!')"]),
    ("multi_step", "nod and smile", [NOD, SMILE]),
    ("multi_step", "wave three times", [WAVE, WAVE, WAVE]),
    ("multi_step", "first wave then bow", [WAVE, BOW]),
    ("multi_step", "smile then say hello", [SMILE, "say(text='Hello!')"]),
    ("multi_step", "look up and then look down", [UP, DOWN]),
    ("multi_step", "nod two times and wave", [NOD, NOD, WAVE]),
    ("humanoid", "walk forward three seconds", ["walk_forward(seconds=3.0)"]),
    ("humanoid", "go back a bit", ["walk_backward(seconds=1.0)"]),
    ("humanoid", "turn left a bit", ["turn(direction='left', seconds=1.0)"]),
    ("humanoid", "step back", ["walk_backward()"]),
    ("humanoid", "walk forward for ten seconds", ["walk_forward(seconds=10.0)"]),
    ("humanoid", "turn right", ["turn(direction='right')"]),
    ("humanoid", "move forward a little bit", ["walk_forward(seconds=1.0)"]),
    ("question", "what do people call you", "answer"),
    ("question", "tell me what you can do", "answer"),
    ("question", "how's it going", "answer"),
    ("question", "who made you", "answer"),
    ("chitchat", "hi there", "answer"),
    ("chitchat", "thanks robot", "answer"),
    ("stop", "stop that", [STOP]),
    ("stop", "no stop it", [STOP]),
    ("stop", "cancel", [STOP]),
    ("stop", "hold on stop", [STOP]),
    ("oov", "can you clean the table", "refuse"),
    ("oov", "play some music", "refuse"),
    ("oov", "tell me a joke", "refuse"),
    ("oov", "jump up and down", "refuse"),
    ("oov", "what time is it", "refuse"),
    ("oov", "call my mom", "refuse"),
    ("garbage", "hmm", "not_understood"),
    ("garbage", "the", "not_understood"),
    ("gesture", "wave the", [WAVE]),  # a cut-off request, still clear
    ("garbage", "purple monkey dishwasher", "not_understood"),
    # --- a third batch, measured before any change for it: 53 of 66 (misses: 11 "not
    # understood" or refused, and 2 acted with another duration or speed than expected here)
    ("gesture", "could you give everyone a wave", [WAVE]),
    ("gesture", "nod your head twice", [NOD, NOD]),
    ("gesture", "do the wave", [WAVE]),
    ("gesture", "wave your arm", [WAVE]),
    ("gesture", "give me a quick nod", [NOD]),
    ("gesture", "can I get a smile", [SMILE]),
    ("gesture", "put on a smile", [SMILE]),
    ("gesture", "bow to the audience", [BOW]),
    ("gesture", "please shake your head", [SHAKE]),
    ("gesture", "Wave!", [WAVE]),
    ("gesture", "NOD.", [NOD]),
    ("gesture", "make a surprised face", ["play_animation(name='surprise')"]),
    ("gesture", "look surprised please", ["play_animation(name='surprise')"]),
    ("gaze", "look at me please", [AT_ME]),
    ("gaze", "look this way", [AT_ME]),
    ("gaze", "look up at the ceiling", [UP]),
    ("gaze", "look over to the left", [LEFT]),
    ("gaze", "look to the right side", [RIGHT]),
    ("gaze", "look away", [AHEAD]),
    ("speech", "say cheese", ["say(text='cheese')"]),
    ("speech", "say hello to everyone", ["say(text='hello to everyone')"]),
    ("speech", "say welcome to the lab", ["say(text='welcome to the lab')"]),
    ("speech", "tell her good night", ["say(text='good night')"]),
    ("multi_step", "wave and then smile", [WAVE, SMILE]),
    ("multi_step", "nod, then shake your head", [NOD, SHAKE]),
    ("multi_step", "say goodbye and wave", ["say(text='Goodbye!')", WAVE]),
    ("multi_step", "smile twice", [SMILE, SMILE]),
    ("multi_step", "look left, then right", [LEFT, RIGHT]),
    ("multi_step", "bow and say thank you", [BOW, "say(text='thank you')"]),
    ("humanoid", "walk towards me", ["walk_forward()"]),
    ("humanoid", "back up a little", ["walk_backward(seconds=1.0)"]),
    ("humanoid", "turn left for three seconds", ["turn(direction='left', seconds=3.0)"]),
    ("humanoid", "walk forward one meter", ["walk_forward(seconds=3.33)"]),
    ("humanoid", "do a salute", ['stand_motion(name="Gentleman\'s Salute")']),
    ("humanoid", "spin around", ["turn(direction='left', seconds=6.3)"]),
    ("humanoid", "take a step back", ["walk_backward()"]),
    ("humanoid", "walk forward slowly", ["walk_forward(speed=0.15)"]),
    ("humanoid", "stand up", ["set_gait(mode='Stand')"]),
    ("question", "what should i call you", "answer"),
    ("question", "who am i talking to", "answer"),
    ("question", "are you listening", "answer"),
    ("question", "can you understand me", "answer"),
    ("question", "what's your name robot", "answer"),
    ("chitchat", "good afternoon", "answer"),
    ("chitchat", "nice to meet you", "answer"),
    ("chitchat", "bye bye", "answer"),
    ("stop", "shut up", [STOP]),
    ("stop", "please stop", [STOP]),
    ("stop", "stop everything", [STOP]),
    ("stop", "stop it now", [STOP]),
    ("stop", "enough", [STOP]),
    ("oov", "sit down", "refuse"),
    ("oov", "go to the kitchen", "refuse"),
    ("oov", "give me a hug", "refuse"),
    ("oov", "what's two plus two", "refuse"),
    ("oov", "set an alarm for seven", "refuse"),
    ("oov", "turn off the tv", "refuse"),
    ("oov", "follow me", "refuse"),
    ("oov", "can you cook dinner", "refuse"),
    ("garbage", "and then", "not_understood"),
    ("garbage", "please", "not_understood"),
    ("garbage", "can you", "not_understood"),
    ("garbage", "so yeah", "not_understood"),
    ("garbage", "yes", "not_understood"),
    ("garbage", "i don't know", "not_understood"),
    ("garbage", "look at the", "not_understood"),
    # --- a fourth batch, chattier ("i was wondering if you could wave"), measured before any
    # change for it: 25 of 41, no action taken on any miss
    ("gesture", "hey robot i was wondering if you could wave at me", [WAVE]),
    ("gesture", "would it be possible for you to nod", [NOD]),
    ("gesture", "i'd love to see you smile", [SMILE]),
    ("gesture", "can you do a little wave for the camera", [WAVE]),
    ("gesture", "let me see you nod", [NOD]),
    ("gesture", "how about a smile", [SMILE]),
    ("gesture", "what about a wave", [WAVE]),
    ("gesture", "go ahead and wave", [WAVE]),
    ("gesture", "show everyone how you bow", [BOW]),
    ("gesture", "nod along", [NOD]),
    ("gesture", "could you maybe shake your head", [SHAKE]),
    ("gesture", "try to look surprised", ["play_animation(name='surprise')"]),
    ("gaze", "look up for a second", [UP]),
    ("gaze", "could you look to the left please", [LEFT]),
    ("gaze", "look back at me", [AT_ME]),
    ("speech", "say thanks for coming", ["say(text='thanks for coming')"]),
    ("speech", "please tell everyone welcome", ["say(text='welcome')"]),
    ("multi_step", "wave at me and then smile", [WAVE, SMILE]),
    ("multi_step", "first nod and then say yes", [NOD, "say(text='yes')"]),
    ("multi_step", "look left look right", [LEFT, RIGHT]),
    ("multi_step", "smile, wave, and say goodbye", [SMILE, WAVE, "say(text='Goodbye!')"]),
    ("humanoid", "can you walk forward a little", ["walk_forward(seconds=1.0)"]),
    ("humanoid", "walk forward for about two seconds", ["walk_forward(seconds=2.0)"]),
    ("humanoid", "turn to your right", ["turn(direction='right')"]),
    ("humanoid", "turn left a lot", ["turn(direction='left', seconds=4.0)"]),
    ("humanoid", "walk two steps back", ["walk_backward(seconds=2.0)"]),
    ("question", "what is your name please", "answer"),
    ("question", "so what can you do", "answer"),
    ("question", "what kind of things can you do", "answer"),
    ("question", "how are you feeling", "answer"),
    ("stop", "okay that's enough", [STOP]),
    ("stop", "please stop moving", [STOP]),
    ("stop", "stop what you're doing", [STOP]),
    ("oov", "can you make me a sandwich", "refuse"),
    ("oov", "would you fetch my keys", "refuse"),
    ("oov", "please water the plants", "refuse"),
    ("oov", "drive me home", "refuse"),
    ("garbage", "i like turtles", "not_understood"),
    ("garbage", "it is raining outside", "not_understood"),
    ("garbage", "my name is john", "not_understood"),
    # --- a fifth batch, measured before any change for it: 36 of 43, two acted wrongly (the
    # robot's name cut from what to say, a "then stop" that dropped the walk: both fixed)
    ("gesture", "give them a wave", [WAVE]),
    ("gesture", "wave goodbye please", [WAVE]),
    ("gesture", "can you give a nod to my friend", [NOD]),
    ("gesture", "nod slowly", [NOD]),
    ("gesture", "do a bow for the audience", [BOW]),
    ("gesture", "shake hands with me", ["play_animation(name='shakehand_TwoArgGesture')"]),
    ("gesture", "think about that", ["play_animation(name='think')"]),
    ("gesture", "smile big", [SMILE]),
    ("gesture", "nod your head if you can hear me", [NOD]),
    ("gesture", "could you do the thinking pose", ["play_animation(name='think')"]),
    ("gaze", "look at the ceiling", [UP]),
    ("gaze", "look down please", [DOWN]),
    ("gaze", "look to the right for a moment", [RIGHT]),
    ("gaze", "now look at the camera", ["look_at_target(name='Posture_LookAtZoom')"]),
    ("gaze", "stop looking at me", [AHEAD]),
    ("speech", "say my name is anima", ["say(text='my name is anima')"]),
    ("speech", "say good job", ["say(text='good job')"]),
    ("speech", "tell them we are closed", ["say(text='we are closed')"]),
    ("multi_step", "nod three times then wave twice", [NOD, NOD, NOD, WAVE, WAVE]),
    ("multi_step", "bow then say thank you everyone", [BOW, "say(text='thank you everyone')"]),
    ("multi_step", "wave, smile and nod", [WAVE, SMILE, NOD]),
    ("multi_step", "look up then down", [UP, DOWN]),
    ("humanoid", "walk forward for five seconds then stop", ["walk_forward(seconds=5.0)", STOP]),
    ("humanoid", "move forward two steps", ["walk_forward(seconds=2.0)"]),
    ("humanoid", "turn right for two seconds", ["turn(direction='right', seconds=2.0)"]),
    ("humanoid", "go backwards", ["walk_backward()"]),
    ("humanoid", "start walking", ["set_gait(mode='Walk')"]),
    ("question", "what's your name?", "answer"),
    ("question", "what are your skills", "answer"),
    ("question", "what are you", "answer"),
    ("question", "how do you do", "answer"),
    ("chitchat", "thank you very much", "answer"),
    ("chitchat", "see you later", "answer"),
    ("stop", "stop right now", [STOP]),
    ("stop", "freeze", [STOP]),
    ("stop", "halt", ["stop_walking()"]),
    ("oov", "open the window", "refuse"),
    ("oov", "can you swim", "refuse"),
    ("oov", "make me laugh", "refuse"),
    ("oov", "bring me the remote", "refuse"),
    # --- 2026-12-05: ways of asking the set had not covered (written for this, not taken from
    # the held-out or fresh sets)
    ("oov", "could you iron my shirt", "refuse"),  # asked, whatever the verb
    ("oov", "would you knit me a scarf", "refuse"),
    ("gesture", "let me see a nod", [NOD]),
    ("gesture", "could we see a wave", [WAVE]),
    ("gesture", "come on, wave at me", [WAVE]),
    ("gesture", "go on then, smile", [SMILE]),
    ("gesture", "wave to the kids over there", [WAVE]),
    ("gesture", "smile at everyone listening", [SMILE]),
    ("stop", "cut it out", [STOP]),
    ("stop", "knock it off please", [STOP]),
    ("stop", "hold it", [STOP]),
    ("question", "are you real", "answer"),
    ("question", "are you a machine", "answer"),
    ("question", "hello, how are you doing", "answer"),
    ("question", "hey there, what's your name", "answer"),
    ("chitchat", "have a good one", "answer"),
    ("chitchat", "take care", "answer"),
    ("chitchat", "see you soon", "answer"),
    ("gaze", "move your eyes to the left", [LEFT]),
    ("gaze", "eyes down please", [DOWN]),
    ("gaze", "turn your head up", [UP]),
    ("garbage", "blah blah blah", "not_understood"),
    ("garbage", "uh what", "not_understood"),
    ("garbage", "never", "not_understood"),
]


def outcome(u: Understanding) -> Expected:
    """What the robot did, in the table's terms."""
    return u.actions if u.kind == "act" else u.kind


def accuracy(run: Callable[[str], Understanding]) -> dict[str, tuple[int, int]]:
    """(right, total) per category, and "all"."""
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for category, text, expected in DEV:
        total[category] += 1
        total["all"] += 1
        if outcome(run(text)) == expected:
            right[category] += 1
            right["all"] += 1
    return {c: (right[c], total[c]) for c in total}


REGISTRY = shipped_registry()
UNDERSTANDER = Understander(REGISTRY)


@pytest.mark.parametrize(
    ("category", "text", "expected"), DEV, ids=[f"{c}:{t[:40]}" for c, t, _ in DEV]
)
def test_dev_set(category: str, text: str, expected: list[str] | str) -> None:
    understood = UNDERSTANDER.understand(text)
    assert outcome(understood) == expected, understood.why
    if understood.kind == "act":
        assert parse_plan(REGISTRY, understood.actions).texts == tuple(expected)  # canonical
        assert understood.response == ""
    else:
        assert understood.actions == []
        assert understood.response  # something is always said when nothing is done


def test_the_dev_set_is_varied_and_fully_understood() -> None:
    figures = accuracy(UNDERSTANDER.understand)
    assert figures["all"][1] >= 80
    wanted = {"gesture", "gaze", "speech", "multi_step", "humanoid", "question", "chitchat"}
    assert wanted | {"stop", "oov", "garbage"} <= set(figures)
    assert all(total >= 5 for _, total in figures.values())
    assert figures["all"][0] == figures["all"][1]


def test_the_shipped_names_are_what_a_runtime_offers(runtime: Runtime) -> None:
    registry = robot_registry(runtime)
    assert registry["play_animation"].param("name").choices == SHIPPED_GESTURES
    assert registry["look_at_target"].param("name").choices == SHIPPED_POSTURES
    assert understand("give me a nod", registry).actions == ["play_animation(name='nod')"]
    assert understand("could you wave at me", registry).actions == [
        "play_animation(name='LOOKUP_Waving')"
    ]


def _user_registry() -> ActionRegistry:
    reg = builtin_registry(animations=["nod", "happy_dance", "Posture_Salute"])

    @reg.action()
    def dance(ctx: object, seconds: float = 4.0) -> bool:
        """Dance on the spot.

        Args:
            seconds: how long
        """
        return True

    @reg.action(bounds={"seconds": (0.5, 10.0)})
    def raise_arm(ctx: object, side: Literal["left", "right"], seconds: float = 2.0) -> bool:
        """Raise one arm and hold it up.

        Args:
            side: which arm
            seconds: how long to hold it
        """
        return True

    return reg


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # from the action's name alone, with its duration parameter
        ("dance", ["dance()"]),
        ("could you dance for three seconds", ["dance(seconds=3.0)"]),
        ("dance a bit", ["dance(seconds=2.0)"]),  # half its default
        ("dance a lot", ["dance(seconds=8.0)"]),
        ("dance twice", ["dance()", "dance()"]),
        # from a choice of a parameter, the name's words
        ("raise your left arm", ["raise_arm(side='left')"]),
        ("raise the right arm for 5 seconds", ["raise_arm(side='right', seconds=5.0)"]),
        # from an animation of the library that no phrase names
        ("do the happy dance", ["play_animation(name='happy_dance')"]),
        (
            "nod then do the happy dance",
            ["play_animation(name='nod')", "play_animation(name='happy_dance')"],
        ),
    ],
)
def test_users_own_actions_are_understood_from_the_registry(text: str, expected: list[str]) -> None:
    reg = _user_registry()
    understood = understand(text, reg)
    assert understood.actions == expected, understood.why
    parse_plan(reg, understood.actions)


def test_a_short_docstring_names_an_action_without_parameters() -> None:
    reg = builtin_registry(animations=["nod"])

    @reg.action()
    def greet_visitor(ctx: object) -> bool:
        """Welcome a visitor with a bow and a hello."""
        return True

    @reg.action()
    def tidy(ctx: object, seconds: float = 5.0) -> bool:
        """Lean over and tidy up the desk for a while."""
        return True

    assert understand("please welcome the visitor", reg).actions == ["greet_visitor()"]
    assert understand("greet the visitor", reg).actions == ["greet_visitor()"]  # its name
    # with parameters, a docstring is not used: "lean" is no request to tidy
    assert understand("lean over", reg).actions == []


def test_do_it_again_repeats_the_last_plan() -> None:
    assert understand("do it again", REGISTRY).kind == "not_understood"  # nothing before
    again = understand("do it again", REGISTRY, previous=["play_animation(name='nod')"])
    assert again.actions == ["play_animation(name='nod')"]
    assert again.why == "again"


def test_a_count_before_the_gesture_or_after_free_text() -> None:
    assert understand("give me two nods", REGISTRY).actions == ["play_animation(name='nod')"] * 2
    assert understand("say hello twice", REGISTRY).actions == ["say(text='hello')"] * 2
    assert understand("say two words", REGISTRY).actions == ["say(text='two words')"]
    assert understand("say hello 9 times", REGISTRY).kind == "refuse"


@pytest.mark.parametrize(
    ("heard", "expected"),
    [
        # what Whisper tiny.en wrote for eSpeak NG's and Piper's "can you nod please" and
        # "nod twice then smile", and for "cancel that"
        ("Can you not please?", [NOD]),
        ("Not twice than smile.", [NOD, NOD, SMILE]),
        ("Cancel, note.", [STOP]),
        ("Turn left 90°.", ["turn(direction='left', seconds=3.14)"]),
        ("Walk forward 3 ft.", ["walk_forward(seconds=3.05)"]),
        ("Hey, Robot, wave!", [WAVE]),
        ("tie a knot", []),  # a sound-alike only stands for a command word in a command
        ("not now", []),  # a "not" that is no "nod" stays a "not"
        ("not yet", []),
        ("do not nod", []),
        # a lone spoken "nod", as Whisper writes it: a whole request of one "not" means
        # nothing else to a robot (a "not" that negates something stays one)
        ("Not.", [NOD]),
        ("Not", [NOD]),
        ("Nod.", [NOD]),
        ("Knot.", [NOD]),
        ("Not, please.", [NOD]),
        ("Please not.", [NOD]),
        ("Can you not?", [NOD]),
        ("Not that.", []),
        ("I'm not.", []),
        # "three" heard as "free" before a unit or "times" (nowhere else: "say free hugs")
        ("Wait for free seconds.", ["wait(seconds=3.0)"]),
        ("Nod free times.", [NOD, NOD, NOD]),
        ("say free hugs", ["say(text='free hugs')"]),
        ("wave for free", []),
        # eSpeak NG's "shake your head if you disagree" and "look like you're thinking"
        ("Shake your hand if you disagree.", ["play_animation(name='shake')"]),
        ("Shake your hands if you disagree.", ["play_animation(name='shake')"]),
        ("Nod your hand if you agree.", [NOD]),
        ("shake my hand if you agree", ["play_animation(name='shakehand_TwoArgGesture')"]),
        ("shake my hand if you like", ["play_animation(name='shakehand_TwoArgGesture')"]),
        ("Look like you're sinking.", ["play_animation(name='think')"]),
        ("say I am sinking", ["say(text='i am sinking')"]),
    ],
)
def test_what_asr_writes_for_a_command(heard: str, expected: list[str]) -> None:
    assert understand(heard, REGISTRY).actions == expected


def test_a_bound_of_the_users_action_is_said_not_broken() -> None:
    understood = understand("raise your left arm for 30 seconds", _user_registry())
    assert understood.kind == "refuse"
    assert understood.response == "Sorry, I can't raise my left arm for more than 10 seconds."
    assert understood.actions == []


def test_ambiguous_words_are_not_acted_on() -> None:
    reg = _user_registry()
    # "raise your arm": which one? Both choices fit the words: nothing is guessed
    understood = understand("raise your arm", reg)
    assert understood.kind == "not_understood"
    assert understood.response == (
        f"{NOT_UNDERSTOOD} “raise your arm”. I can dance, nod, raise arm, look around and say "
        "things."
    )


def test_questions_are_answered_from_the_config_and_the_registry() -> None:
    reg = _user_registry()
    about = About(name="Nadine", wake_phrase="hello nadine")
    assert understand("what's your name", reg, about=about).response == "My name is Nadine."
    assert understand("Hello Nadine, who are you?", reg, about=about).response.startswith(
        "I'm Nadine, a robot. I can dance, nod, raise arm, look around, say things"
    )
    can = understand("what can you do", reg, about=about).response
    assert "dance" in can
    assert "raise arm" in can
    assert "say things" in can
    assert "walk" not in can  # no humanoid here
    assert understand("Hello Nadine, nod", reg, about=about).actions == [
        "play_animation(name='nod')"
    ]


def test_ability_questions_are_answered_not_acted() -> None:
    assert understand("can you walk?", REGISTRY).response == "Yes, I can walk. Just ask."
    assert understand("can you walk", shipped_registry(humanoid=False)).kind == "refuse"
    assert understand("do you know how to fly", REGISTRY).response.startswith("No, I can't fly.")
    # "can you wave" is a request, not a question about waving
    assert understand("can you wave", REGISTRY).actions == ["play_animation(name='LOOKUP_Waving')"]


def test_a_refusal_names_the_request_and_what_the_robot_can_do() -> None:
    understood = understand("make me a coffee", REGISTRY)
    assert understood.kind == "refuse"
    assert understood.response == (
        "Sorry, I can't make you a coffee. I can wave, nod, shake my head, look around and say "
        "things."
    )
    # a robot with other actions names those
    only = ActionRegistry([REGISTRY["say"]])
    assert understand("make me a coffee", only).response.endswith("I can say things.")


def test_a_request_whose_words_are_all_known_is_not_refused() -> None:
    # it can turn, just not without a direction: "I can't turn" would be false
    understood = understand("turn", REGISTRY)
    assert understood.kind == "not_understood"


def test_everything_before_a_stop_is_dropped() -> None:
    assert understand("wave, no wait, stop!", REGISTRY).actions == ["stop()"]
    assert understand("stop and then nod", REGISTRY).actions == [
        "stop()",
        "play_animation(name='nod')",
    ]


def test_the_explanation_names_what_matched() -> None:
    understood = understand("nod twice then walk forward for two seconds", REGISTRY)
    assert understood.why == "phrase 'nod' ×2; phrase 'walk forward', seconds=2"


def test_understand_follows_a_registry_that_changes() -> None:
    reg = builtin_registry(animations=["nod"])
    assert understand("wave", reg).kind != "act"
    reg.constrain("play_animation", choices={"name": ("nod", "LOOKUP_Waving")})
    assert understand("wave", reg).actions == ["play_animation(name='LOOKUP_Waving')"]


def test_aliases_give_every_phrase_as_its_call() -> None:
    by_text = {a.text: a for a in aliases(REGISTRY)}
    assert by_text["wave"].call == "play_animation(name='LOOKUP_Waving')"
    assert by_text["wave"].action == "play_animation"
    assert by_text["look to the left"].call == "look_at(x=1.0, y=0.6, z=0.0)"
    assert by_text["move forward"].call == "walk_forward()"  # the humanoid's extra phrases
    assert not any("{" in a.text for a in aliases(REGISTRY))  # no free slots
    calls = [a.call for a in aliases(REGISTRY)]
    for i in range(0, len(calls), 50):  # all valid (a plan holds at most 50 steps)
        parse_plan(REGISTRY, calls[i : i + 50])


def test_choice_aliases_are_one_friendly_name_per_choice() -> None:
    names = choice_aliases(REGISTRY)
    animations = names["play_animation"]["name"]
    assert animations["wave"] == "LOOKUP_Waving"
    assert animations["nod"] == "nod"
    assert animations["shake your head"] == "shake"
    assert animations["shake hands"] == "shakehand_TwoArgGesture"
    assert sorted(animations.values()) == sorted(SHIPPED_GESTURES)  # each choice once
    assert names["look_at_target"]["name"]["look at me"] == "Posture_LookAtInterviewer"
    assert names["turn"]["direction"] == {"turn left": "left", "turn right": "right"}


def test_asr_phrases_put_the_most_asked_for_first() -> None:
    phrases = asr_phrases(REGISTRY)
    assert phrases[:5] == ["wave", "nod", "shake your head", "bow", "smile"]
    assert phrases.index("look up") < phrases.index("say hello") < phrases.index("walk forward")
    assert "say" in phrases  # "say {text}" keeps its fixed word
    assert not any("{" in p for p in phrases)
    assert len(phrases) == len(set(phrases))
    # the rarer single words are understood but not offered to the ASR
    assert "abort" not in phrases
    assert understand("abort", REGISTRY).actions == [STOP]


def test_choice_aliases_fall_back_to_the_choice_words() -> None:
    names = choice_aliases(_user_registry())
    assert names["play_animation"]["name"]["happy dance"] == "happy_dance"
    assert names["play_animation"]["name"]["salute"] == "Posture_Salute"
    assert names["raise_arm"]["side"] == {"left": "left", "right": "right"}


def test_prompt_phrases_give_each_kind_of_action_in_turn() -> None:
    from anima.agent.understanding import prompt_phrases

    phrases = prompt_phrases(REGISTRY)
    assert sorted(phrases) == sorted(asr_phrases(REGISTRY))  # the same phrases, reordered
    first = phrases[:4]  # a gesture, a gaze direction, a gaze target, a thing to say
    assert first[0] == "wave"
    assert first[1].startswith("look ")
    assert first[2].startswith("look ")
    assert first[3].startswith("say")
    assert phrases.index("stop") < phrases.index("nod")  # before any kind's second phrase


def test_a_refusal_turns_the_words_to_the_robots_side_with_the_verb_agreeing() -> None:
    refused = UNDERSTANDER.understand("could you tell me if you are tired")
    assert refused.kind == "refuse"
    assert refused.response.startswith("Sorry, I can't tell you if I am tired.")
    asked = UNDERSTANDER.understand("would you knit me a scarf")
    assert asked.response.startswith("Sorry, I can't knit you a scarf.")
