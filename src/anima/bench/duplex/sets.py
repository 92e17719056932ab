"""The sets of ``anima bench duplex``: rooms, the robot's reply, the people's voices and what
they say over it, each set built before the rule it was first to judge (docs/listening.md,
*Measured*), and the trials made of them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from anima.audio import SAMPLE_RATE
from anima.bench.conversation.audio import Speaker
from anima.testing.room import EchoPath, to_int16

REPLY = (
    "Hello! I am anima, a robot that can wave, nod and look around. Today I would like to tell "
    "you about the sea, the mountains and the little town where I was built, a long time ago."
)
ROOMS = {
    "dev": (EchoPath(0.03, -6.0, 0.3, seed=1), EchoPath(0.06, 0.0, 0.5, seed=2)),
    "heldout": (EchoPath(0.045, -3.0, 0.4, seed=5), EchoPath(0.1, -10.0, 0.7, -3.0, seed=7)),
    "fresh": (EchoPath(0.02, -8.0, 0.25, seed=11), EchoPath(0.075, -4.0, 0.6, -2.0, seed=13)),
    "unseen": (EchoPath(0.035, -5.0, 0.35, seed=17), EchoPath(0.09, -2.0, 0.55, -4.0, seed=19)),
    "later": (EchoPath(0.05, -7.0, 0.45, seed=23), EchoPath(0.12, -3.0, 0.8, -5.0, seed=29)),
    "blind": (EchoPath(0.025, -4.0, 0.3, seed=31), EchoPath(0.08, -6.0, 0.65, -3.0, seed=37)),
}
INTERRUPTIONS = {
    "dev": ("wait, look at me", "stop", "no, the other way", "can you wave instead?"),
    "heldout": ("hold on a second", "no no no", "stop talking please", "what is your name?"),
    "fresh": ("wait wait", "hang on", "no, stop", "tell me something about the mountains"),
    "unseen": ("stop stop", "wait a moment", "no, that's wrong", "could you look at me please"),
    "later": ("stop please", "wait, i have a question", "no, look at me", "what time is it"),
    "blind": ("stop it", "wait, not now", "no thanks", "can you tell me a joke"),
}
BACKCHANNELS = {
    "dev": ("uh-huh", "yeah", "okay", "cough"),
    "heldout": ("mm-hmm", "right", "ok"),
    "fresh": ("mhm", "yeah yeah", "i see", "sure", "laugh"),
    "unseen": ("uh huh yeah", "oh okay", "mm", "got it", "alright", "cough"),
    "later": ("yes yes", "oh right", "cool", "exactly", "uh huh", "cough"),
    "blind": ("okay yeah", "yep", "nice", "wow", "mm hmm", "cough"),
}
# short requests with no stop word: whether one stops the robot is the rules' trade-off (a
# backchannel is short too), so they are counted apart, not as interruptions or backchannels
REQUESTS: dict[str, tuple[str, ...]] = {
    "dev": (), "heldout": (), "fresh": ("wave", "nod please"), "unseen": ("nod", "look up"),
    "later": ("turn around", "smile"),
    "blind": ("dance", "look down"),
}  # fmt: skip
# "fresh" was built before this session's first rules were chosen (its trials were then looked
# at); "unseen" after them, run once with them (its failures then read); "later" after that
# (read after one run, of a rule then taken back); "blind" before the second reading was
# tried, never read trial by trial (docs/listening.md, *Measured*)
USERS = {
    "dev": ("espeak-us", "espeak-gb-fast"),
    "heldout": ("espeak-us", "espeak-gb-fast"),
    "fresh": ("espeak-us-slow", "espeak-gb-fast", "espeak-us"),
    "unseen": ("espeak-gb-fast", "espeak-us", "espeak-us-slow"),
    "later": ("espeak-us", "espeak-us-slow", "espeak-gb-fast"),
    "blind": ("espeak-us-slow", "espeak-us", "espeak-gb-fast"),
}
ROBOTS = ("piper-joe", "espeak-us-slow")
SPLITS = tuple(ROOMS)


@dataclass
class Trial:
    robot: NDArray[np.int16]
    path: EchoPath
    user: NDArray[np.int16] | None
    at: int  # sample where the user's audio starts
    kind: str  # alone | interruption | backchannel | request
    label: str


def _cough(seed: int) -> NDArray[np.int16]:
    """Two bursts of shaped noise (~0.35 s): a cough has no words."""
    rng = np.random.default_rng(seed)
    n = int(0.15 * SAMPLE_RATE)
    env = np.sin(np.linspace(0, np.pi, n)) ** 2
    burst = np.convolve(rng.standard_normal(n), np.ones(6) / 6, mode="same") * env * 6000
    return to_int16(np.concatenate([burst, np.zeros(int(0.05 * SAMPLE_RATE)), burst * 0.7]))


def _sound(text: str, seed: int) -> NDArray[np.int16] | None:
    """The sounds with no words: a cough; a laugh (voiced bursts of falling pitch)."""
    if text == "cough":
        return _cough(seed)
    if text != "laugh":
        return None
    t = np.arange(int(0.12 * SAMPLE_RATE)) / SAMPLE_RATE
    bursts = []
    for k in range(4):  # "ha ha ha ha": ~0.2 s apart, each a little lower
        f0 = 260.0 - 20 * k
        tone = sum(np.sin(2 * np.pi * f0 * h * t) / h for h in range(1, 8))
        env = np.sin(np.linspace(0, np.pi, len(t))) ** 2 * (0.9**k)
        bursts += [tone * env * 5000, np.zeros(int(0.08 * SAMPLE_RATE))]
    return to_int16(np.concatenate(bursts))


def trials(split: str, speaker: Speaker) -> list[Trial]:
    out: list[Trial] = []
    users = USERS[split]
    kinds = (
        [(t, "interruption") for t in INTERRUPTIONS[split]]
        + [(t, "backchannel") for t in BACKCHANNELS[split]]
        + [(t, "request") for t in REQUESTS[split]]
    )
    for r, robot_voice in enumerate(ROBOTS):
        robot = speaker.say(robot_voice, REPLY)
        for p, path in enumerate(ROOMS[split]):
            room = f"{robot_voice} room{p}"
            out.append(Trial(robot, path, None, 0, "alone", f"{room} alone"))
            for k, (text, kind) in enumerate(kinds):
                voice = users[(k + r + p) % len(users)]
                sound = _sound(text, k)
                said = sound if sound is not None else speaker.say(voice, text)
                at = int((1.5 + 0.7 * ((k + p) % 4)) * SAMPLE_RATE)
                who = "sound" if sound is not None else voice
                out.append(Trial(robot, path, said, at, kind, f"{room} {who} {text!r}"))
    return out
