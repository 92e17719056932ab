"""The understanding layer's own words: what may surround a command, which words of an action's
name say nothing, extra phrases for the humanoid actions, and how to name an action when
listing what the robot can do.

Everything that names a particular action belongs on the action (``phrases=`` of ``@action``);
this module only holds what is true of English requests in general, plus phrases for actions
defined where the understanding layer does not own the phrases (:data:`EXTRA_PHRASES`).
"""

from __future__ import annotations

from anima.agent.phrases import Phrase
from anima.agent.understanding.words import wordset

# Words that may surround the words of a command without changing it ("could you WAVE at me
# please", "give me a NOD", "i want you to LOOK to your LEFT"). A word outside this set and
# outside the command's own words makes the command not understood: precision first.
EXTRAS = wordset(
    """
    please pls kindly can could would will you just now ok okay so alright robot hey hi
    for me us them everyone everybody him her i want like to a an the your my at give do
    make show let go and then really real try also too there here some get mind
    yes no yeah sure little bit again once more big nice good towards toward face over side
    everything all along pose
    """
)

# A word that turns a request around: "don't wave", "never nod". Not understood, never acted on.
NEGATIONS = frozenset({"not", "never", "without"})

# Words of an action's name that do not say which action it is (play_animation, set_gait).
GENERIC_NAME_WORDS = wordset(
    """
    play animation do perform run set target name motion gesture action the a
    """
)

# Words in an animation's or posture's name that are naming conventions, not meaning:
# LOOKUP_Waving, Posture_LookAtInterviewer, shakehand_TwoArgGesture.
NAME_NOISE = wordset(
    """
    lookup posture two arg gesture anim animation default
    """
)

# Leading and trailing words dropped before a phrase is matched literally (the old rule
# planner's behaviour: "please say hello", "say hello please").
LEADING = (
    "please",
    "can you please",
    "could you please",
    "would you please",
    "can you",
    "could you",
    "would you",
    "will you",
    "would you mind",
    "i want you to",
    "i would like you to",
    "i need you to",
    "go ahead and",
    "robot",
    "now",
    "ok",
    "okay",
    "so",
    "alright",
    "hey",
    "and",
    "just",
    "first",
    "next",
    "finally",
    "lastly",
    "hold on",
    "hang on",
    # the long ways of asking ("i was wondering if you could wave")
    "i was wondering if you could",
    "i wonder if you could",
    "would it be possible for you to",
    "is it possible for you to",
    "would you be able to",
    "do you think you could",
    "why do not you",
    "i would love to see you",
    "i would like to see you",
    "i want to see you",
    "let me see you",
    "can i see you",
    "show me how you",
    "show everyone how you",
    "show us how you",
    "how about",
    "what about",
    "maybe",
    "perhaps",
    "try to",
    "try and",
    # urging ("come on, wave", "go on then, smile")
    "come on",
    "go on",
    "go on then",
    # asking to be shown ("let me see a nod", "could we see a wave")
    "let me see",
    "let us see",
    "can i see",
    "could i see",
    "can we see",
    "could we see",
    "i want to see",
    "i would like to see",
)
TRAILING = ("please", "for me", "now", "robot", "right now")
# Dropped at the end only when the rest is understood without them ("say thank you" says it)
COURTESIES = (["thanks"], ["thank", "you"], ["thanks", "a", "lot"], ["thank", "you", "robot"])
# conditions only a nod or a head shake answers ("shake my hand if you like" is a handshake)
ANSWERS = frozenset(
    tuple(c.split())
    for c in (
        "you agree",
        "you disagree",
        "you do not agree",
        "you understand",
        "you understood",
        "you do not understand",
    )
)
# "nod if you agree": a condition on the robot's own view, which a gesture answers
CONDITIONS = ANSWERS | frozenset(
    tuple(c.split())
    for c in (
        "you like",
        "you like it",
        "you can",
        "you want",
        "you want to",
        "you would like",
        "you hear me",
        "you can hear me",
        "you see me",
        "you can see me",
        "you are happy",
        "you are ready",
        "you are listening",
        "you do",
        "you think so",
    )
)

# Asking for the last request again (the rule planner remembers its last plan)
AGAIN = frozenset(
    tuple(p.split())
    for p in (
        "again",
        "do it again",
        "do that again",
        "one more time",
        "once more",
        "repeat that",
        "repeat",
        "same again",
        "do the same",
        "do the same again",
        "do it once more",
        "encore",
    )
)

# Who a gesture is for, said after it ("wave to the audience", "smile for the camera"): left
# out when the command is not understood with them
AUDIENCE = wordset(
    """
    audience camera everyone everybody them him her us me people crowd kids children guests
    visitors friend friends class room family folks guys mom dad
    watching listening here there over around present
    """
)
AUDIENCE_LEAD = wordset("to for at towards toward with")
AUDIENCE_DETERMINERS = wordset("the my our your all these those this that")

# One word for another, in requests as in phrases ("glance to the left")
# and words that sound like a command word (what ASR writes for it)
SYNONYMS = {
    "glance": "look",
    "gaze": "look",
    "peek": "look",
    "stare": "look",
    "knot": "nod",
    "sinking": "thinking",  # eSpeak NG's "th" as Whisper hears it ("look like you're sinking")
    "waive": "wave",
    "bough": "bow",
}

# a direction and the point look_at takes for it (y left, z up, 1 m ahead)
_WAYS = (
    ("left", 0.6, 0.0),
    ("to the left", 0.6, 0.0),
    ("right", -0.6, 0.0),
    ("to the right", -0.6, 0.0),
    ("up", 0.0, 0.5),
    ("down", 0.0, -0.4),
)

# Phrases understood but kept out of the actions' own phrases, which are also the ASR's
# vocabulary: single words there crowd the few that fit Whisper's prompt ("wave", "walk"), so
# rarer ones live here; and phrases for the humanoid's actions, whose module this layer does
# not own. Used when an action of that name is in the registry and the phrase fits it.
EXTRA_PHRASES: dict[str, tuple[Phrase, ...]] = {
    "play_animation": (
        Phrase("grin", name="smile"),
        Phrase("point", name="point_right"),
        Phrase("handshake", name="shakehand_TwoArgGesture"),
    ),
    "stop": (
        Phrase("nevermind"),
        Phrase("abort"),
        Phrase("enough"),
        Phrase("quiet"),
        # what people say to end what the robot is doing (Whisper hears "that's enough" so)
        Phrase("that's it"),
        Phrase("that will do"),
        Phrase("okay that's enough"),
        Phrase("enough now"),
        Phrase("you can stop"),
        Phrase("you can stop now"),
        Phrase("please stop"),
        Phrase("stop now"),
        Phrase("stop it"),
        Phrase("cut it out"),
        Phrase("knock it off"),
        Phrase("hold it"),
    ),
    # the eyes or the head moved one way ("eyes left", "move your eyes to the right", "turn
    # your head up"): what "look …" says, without the verb
    "look_at": tuple(
        Phrase(f"{verb}{part} {way}", x=1.0, y=y, z=z)
        for verb in ("", "move your ", "turn your ")
        for part in ("eyes", "head")
        if verb or part == "eyes"
        for way, y, z in _WAYS
    ),
    "walk_forward": (
        Phrase("move forward"),
        Phrase("step forward"),
        Phrase("walk ahead"),
        Phrase("come forward"),
        Phrase("take a step forward"),
        Phrase("walk straight"),
    ),
    "walk_backward": (
        Phrase("go backward"),
        Phrase("go backwards"),
        Phrase("move back"),
        Phrase("move backward"),
        Phrase("back up"),
        Phrase("take a step back"),
    ),
    "turn": (
        Phrase("turn to the left", direction="left"),
        Phrase("turn to the right", direction="right"),
        Phrase("rotate left", direction="left"),
        Phrase("rotate right", direction="right"),
        Phrase("spin around", direction="left", seconds=6.3),
    ),
    "stop_walking": (Phrase("stop turning"), Phrase("stand still")),
}

# How an action is named in "I can wave, nod, look around…"; None: not worth naming.
# Actions not listed are named by their first phrase, or by their name's words.
# In the order they are named, after the first three gestures.
LABELS: dict[str, str | None] = {
    "look_at": "look around",
    "say": "say things",
    "walk_forward": "walk",
    "turn": "turn around",
    "look_at_target": "look at you",
    "wait": None,
    "stop": None,
    "finish": None,
    "stop_walking": None,
    "set_gait": None,
    "walk_backward": None,
    "posture": "lean or crouch",
    "remember": "remember what you tell me",
    "forget": None,
}

# "I can't make coffee": the person's words turned to the robot's point of view.
POINT_OF_VIEW = {
    "me": "you",
    "my": "your",
    "mine": "yours",
    "myself": "yourself",
    "i": "you",
    "us": "you",
    "our": "your",
    "you": "me",
    "your": "my",
    "yourself": "myself",
}
