"""Words, not actions: questions about the robot, greetings, and saying what it can't do.

Questions about itself ("what's your name", "what can you do") are answered from the config
(:class:`~.result.About`) and the registry; a request it has no action for ("make me a
coffee") is refused by name, with a few things it *can* do, taken from the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rapidfuzz import fuzz, process

from anima.agent.actions import Action, ActionRegistry
from anima.agent.understanding.lexicon import LABELS, NEGATIONS, POINT_OF_VIEW
from anima.agent.understanding.result import About
from anima.agent.understanding.senses import name_words
from anima.agent.understanding.words import wordset

# (topic, what people say): matched whole, or nearly (a word misheard in a long sentence)
QUESTIONS: dict[str, tuple[str, ...]] = {
    "name": (
        "what is your name",
        "what is your name again",
        "what are you called",
        "what should i call you",
        "what do i call you",
        "what do they call you",
        "what do people call you",
        "how should i call you",
        "do you have a name",
        "tell me your name",
        "may i ask your name",
        "your name",
    ),
    "who": (
        "who are you",
        "who is this",
        "who am i talking to",
        "what are you",
        "are you a robot",
        "are you a person",
        "are you human",
        "are you real",
        "are you a real robot",
        "are you a machine",
        "introduce yourself",
        "tell me about yourself",
    ),
    "abilities": (
        "what can you do",
        "what else can you do",
        "what are you able to do",
        "what do you do",
        "what can i ask you",
        "what can i ask you to do",
        "what can i say",
        "what are your skills",
        "what are your abilities",
        "what do you know how to do",
        "what commands do you know",
        "what tricks do you know",
        "what tricks can you do",
        "what gestures do you know",
        "what kind of things can you do",
        "what sort of things can you do",
        "what things can you do",
        "what gestures can you do",
        "which gestures do you know",
        "what gestures can you make",
        "what moves do you know",
        "what can you do for me",
        "what do you know",
        "what are you good at",
        "show me what you can do",
        "tell me what you can do",
        "tell me what you do",
        "help",
        "help me",
    ),
    "how": (
        "how are you",
        "how are you doing",
        "how are you today",
        "how are you doing today",
        "how is your day",
        "how is your day going",
        "how have you been",
        "how is it going",
        "how do you do",
        "how do you feel",
        "how are you feeling",
        "how are you feeling today",
        "are you ok",
        "are you okay",
        "how are things",
    ),
    "hello": (
        "hello",
        "hi",
        "hey",
        "hi there",
        "hello there",
        "hey there",
        "good morning",
        "good afternoon",
        "good evening",
        "howdy",
        "greetings",
        "nice to meet you",
    ),
    "thanks": (
        "thank you",
        "thanks",
        "thanks a lot",
        "thank you very much",
        "thank you so much",
        "great job",
        "good job",
        "well done",
        "nice",
        "cool",
        "awesome",
    ),
    "listening": (
        "are you listening",
        "are you there",
        "are you awake",
        "are you on",
        "can you hear me",
        "do you hear me",
    ),
    "maker": (
        "who made you",
        "who built you",
        "who created you",
        "who programmed you",
        "where do you come from",
        "where are you from",
    ),
    "bye": (
        "goodbye",
        "bye",
        "bye bye",
        "see you",
        "see you later",
        "see you soon",
        "good night",
        "take care",
        "have a nice day",
        "have a good day",
        "have a good one",
        "talk to you later",
        "catch you later",
        "farewell",
        "so long",
    ),
}
_SENTENCES = {s: topic for topic, ss in QUESTIONS.items() for s in ss}
# greetings a question may follow, the longest first ("hi there, what's your name")
_GREETINGS = sorted(QUESTIONS["hello"], key=len, reverse=True)
QUESTION_SCORE = 90  # rapidfuzz ratio on the whole sentence: one word misheard, not another

# A request for something the robot has no action for starts like one of these
REQUEST_FRAMES = (
    "can you",
    "could you",
    "would you",
    "will you",
    "please",
    "i want you to",
    "i would like you to",
    "i need you to",
    "are you able to",
    "go and",
    "i want",
    "i would like",
    "i need",
    "let us",
)
# …or with one of these verbs (the imperative of everyday requests to a robot)
VERBS = wordset(
    """
    bring fetch get make cook brew pour open close turn switch pick carry lift throw catch
    kick jump fly run dance sing play read write draw paint call phone text email buy
    order find search clean wash sweep vacuum tidy drive climb swim sit lie kneel crawl
    eat drink sleep cry laugh whistle shout scream tell explain count show give hand take
    grab push pull move raise lower lift spin juggle hug kiss high five clap snap stomp
    hop skip do fold put set check play book send charge unlock lock water feed walk
    follow come go
    """
)
# Gestures a robot is asked for: a request too when this robot has no such gesture ("could you
# wave at me" to Reachy Mini is refused with what it can do, not "not understood")
GESTURES = wordset("wave bow smile nod shake point think blink grin wink salute frown shrug")
_WANTS = ("i want", "i would like", "i need")
WH_WORDS = wordset(
    """
    what where when why how who which whose is are do does did will
    """
)


# "can you walk?" asks whether it can, not for a walk (while "can you wave" asks for a wave)
ABILITY_FRAMES = (("can", "you"), ("are", "you", "able", "to"), ("do", "you", "know", "how", "to"))
ABILITY_VERBS = wordset(
    """
    walk talk speak move hear listen understand see sing dance run fly swim jump cook read
    write count think feel learn drive climb
    """
)
_CONVERSING = frozenset({"talk", "speak", "hear", "listen", "understand"})  # it is doing it


def ability(words: list[str], known: Callable[[str], bool]) -> tuple[bool, str] | None:
    """ "can you walk" → (True, "walk"): a question about an ability, whether the robot has it
    (``known``: a word of one of its actions) and the ability in its words ("hear you")."""
    for frame in ABILITY_FRAMES:
        n = len(frame)
        rest = words[n:]
        if tuple(words[:n]) == frame and rest and rest[0] in ABILITY_VERBS:
            if rest[1:] not in ([], ["me"], ["english"], ["well"]):
                return None
            verb = rest[0]
            return (verb in _CONVERSING or known(verb)), point_of_view(rest)
    return None


def ability_answer(has: bool, verb: str, registry: ActionRegistry) -> str:
    """ "Yes, I can walk. Just ask." — ``verb`` as :func:`ability` gives it ("hear you")."""
    if verb.split(maxsplit=1)[0] in _CONVERSING:
        return f"Yes, I can {verb}. Ask me to wave, nod, or say something."
    if has:
        return f"Yes, I can {verb}. Just ask."
    return f"No, I can't {verb}. I can {abilities(registry, 5)}."


def topic(words: list[str], about: About) -> str | None:
    """Which question or courtesy ``words`` are, if any."""
    whole = " ".join(words)
    if whole in _SENTENCES:  # "are you a robot": before the robot's own words are dropped
        return _SENTENCES[whole]
    own = set(about.name.lower().split()) | set(about.wake_phrase.lower().split()) | {"robot"}
    kept = [w for w in words if w not in own and w not in ("please", "so", "ok", "okay")]
    while kept and kept[0] in ("and", "oh", "well", "hey") and len(kept) > 1:
        kept = kept[1:]
    text = " ".join(kept)
    if not text:  # just the robot's name (a greeting), or just "please"
        return "hello" if words and set(words) <= own else None
    if text in _SENTENCES:
        return _SENTENCES[text]
    for said in (whole, text):  # "hello, how are you": the question is what wants an answer
        for greeting in _GREETINGS:
            rest = said[len(greeting) + 1 :]
            if said.startswith(greeting + " ") and rest in _SENTENCES:
                return _SENTENCES[rest]
    if len(text) < 10:  # too short to tell a misheard word from a different one
        return None
    found = process.extractOne(text, _SENTENCES, scorer=fuzz.ratio, score_cutoff=QUESTION_SCORE)
    return None if found is None else _SENTENCES[found[0]]


def answer(kind: str, about: About, registry: ActionRegistry) -> str:
    name = about.name
    can = abilities(registry, 6, about.offers)
    if kind == "name":
        return f"My name is {name}."
    if kind == "who":
        return f"I'm {name}, a robot. I can {can}."
    if kind == "abilities":
        return f"I can {abilities(registry, 10, about.offers)}. Just ask."
    if kind == "how":
        return "I'm doing well, thank you! What can I do for you?"
    if kind == "hello":
        return about.greeting or f"Hello! I'm {name}. I can {can}."
    if kind == "listening":
        return "Yes, I'm listening. What can I do for you?"
    if kind == "maker":
        if about.made_by:
            return f"I'm {name}, made by {about.made_by}."
        return f"I'm {name}, a robot running on anima, made by people who like robots."
    if kind == "thanks":
        return "You're welcome!"
    return "Goodbye!"


def abilities(registry: ActionRegistry, most: int, offers: Sequence[str] = ()) -> str:
    """ "wave, nod, shake my head and say things": a few of the registry's actions, named
    (only ``offers``' when given: the persona's)."""
    labels = labels_of(registry, offers)
    if not labels:
        return "not do much yet"
    shown = labels[:most]
    if len(shown) == 1:
        return shown[0]
    return ", ".join(shown[:-1]) + " and " + shown[-1]


def labels_of(registry: ActionRegistry, offers: Sequence[str] = ()) -> list[str]:
    """One short name per thing it can do, gestures first, in the registry's phrase order
    (only the actions ``offers`` names, when given)."""
    out: list[str] = []
    later: list[str] = []
    for act in registry:
        if offers and act.name not in offers:
            continue
        if act.name in LABELS:
            label = LABELS[act.name]
            if label is not None:
                later.append(label)
            continue
        out.extend(_labels(act))
    # a few gestures, then the other kinds of thing (look, talk, walk), then the rest
    order = list(LABELS.values())
    later.sort(key=order.index)
    return list(dict.fromkeys([*out[:3], *later, *out[3:]]))  # in order, each once


def _labels(act: Action) -> list[str]:
    """The first phrase for each different call the action's phrases make."""
    if not act.phrases:
        return [" ".join(name_words(act.name))]
    seen: set[tuple[tuple[str, object], ...]] = set()
    out = []
    for ph in act.phrases:
        key = tuple(sorted(ph.args.items(), key=lambda kv: kv[0]))
        if key in seen or ph.slots:
            continue
        seen.add(key)
        out.append(point_of_view(ph.text.split()))  # "shake your head" → "shake my head"
    return out


# "you" as the subject of a verb is "I" from the robot's side, and the verb agrees
_SUBJECT = {("you", "are"): "I am", ("you", "were"): "I was", ("are", "you"): "am I"}


def point_of_view(words: list[str]) -> str:
    """The person's words from the robot's side: "shake your head" → "shake my head", "when
    you are surprised" → "when I am surprised"."""
    out: list[str] = []
    i = 0
    while i < len(words):
        pair = (words[i], words[i + 1]) if i + 1 < len(words) else None
        if pair in _SUBJECT:
            out.append(_SUBJECT[pair])
            i += 2
            continue
        out.append(POINT_OF_VIEW.get(words[i], words[i]))
        i += 1
    return " ".join(out)


def is_request(words: list[str], lacks: Callable[[str], bool] | None = None) -> bool:
    """Whether ``words`` ask for something (a refusal fits) rather than being noise; with
    ``lacks`` (whether the robot has no action for a word), a gesture it lacks asks too."""
    if not words or NEGATIONS & set(words):
        return False
    text = " ".join(words)
    if any(text == f or text.startswith(f + " ") for f in REQUEST_FRAMES):
        return len(words) >= 2
    if words[0] in VERBS:
        return True
    if words[0] in GESTURES and lacks is not None and lacks(words[0]):
        return True
    return words[0] in WH_WORDS and len(words) >= 3


def refusal(words: list[str], registry: ActionRegistry) -> str:
    """ "I can't make you a coffee. I can wave, nod, …" for the words of the request."""
    what = list(words)
    for frame in sorted(REQUEST_FRAMES, key=len, reverse=True):
        f = frame.split()
        if what[: len(f)] == f:
            what = what[len(f) :]
            if frame in _WANTS:  # "i want a coffee": a thing, not a deed
                what = ["get", "me", *what]  # → "get you a coffee"
            break
    while what and what[-1] in ("please", "now", "for", "robot"):
        what.pop()
    can = abilities(registry, 5)
    if words and words[0] in WH_WORDS and words[0] not in ("do", "will"):
        return f"Sorry, I can't answer that. I can {can}."
    if not what or len(what) > 8:
        return f"Sorry, I can't do that. I can {can}."
    return f"Sorry, I can't {point_of_view(what)}. I can {can}."
