"""The words of memory talk: what carries no meaning in a search, the irregular verbs, and the
person's words said back in the robot's ("I like jazz" → "You like jazz.")."""

from __future__ import annotations

import re

from anima.memory.store import words

# words that carry no meaning for a search ("what is my …", "do you remember …")
FILLER_WORDS = """
    a an the is are am was were be been do does did what what's whats where when who which how
    why my me i i'm im you your yours you're please tell remember know recall again can could
    would will to of in on at for about that this it and or so robot hey ok okay now still
    have has had told said say
"""
FILLER = frozenset(FILLER_WORDS.split())
# the irregular verbs people use of themselves: a question in one form ("what did I break")
# finds a memory in another ("I broke my arm"); stemming covers the regular ones
IRREGULAR = """
    be was were been | begin began begun | break broke broken | bring brought | build built |
    buy bought | catch caught | choose chose chosen | come came | do did done | drink drank drunk |
    drive drove driven | eat ate eaten | fall fell fallen | feel felt | fight fought | find found |
    fly flew flown | forget forgot forgotten | get got gotten | give gave given | go went gone |
    grow grew grown | have had | hear heard | hold held | keep kept | know knew known |
    leave left | lend lent | lose lost | make made | meet met | pay paid | read | ride rode ridden |
    ring rang rung | rise rose risen | run ran | say said | see saw seen | sell sold | send sent |
    sing sang sung | sit sat | sleep slept | speak spoke spoken | spend spent | stand stood |
    steal stole stolen | swim swam swum | take took taken | teach taught | tell told |
    think thought | throw threw thrown | wake woke woken | wear wore worn | win won | write wrote
    written
"""
FORMS = {form: tuple(group.split()) for group in IRREGULAR.split("|") for form in group.split()}
# person → robot: what the person said about themselves, said back to them
SWAP = {
    "i": "you", "i'm": "you're", "im": "you're", "me": "you", "my": "your", "mine": "yours",
    "myself": "yourself", "am": "are", "i've": "you've", "i'll": "you'll", "i'd": "you'd",
    "was": "were",
}  # fmt: skip


def second_person(text: str) -> str:
    """The person's words said back to them: "I like jazz" → "you like jazz"."""
    out = []
    for token in text.split():
        core = token.rstrip(".,!?;:")
        tail = token[len(core) :]
        swapped = SWAP.get(core.lower())
        out.append((swapped if swapped is not None else core) + tail)
    return " ".join(out)


def first_person(text: str) -> str:
    """A fact told by the person as the robot heard it addressed ("that you like jazz" from
    "remember that I like jazz" stays "I like jazz"; "I" is capitalised)."""
    return " ".join("I" if t == "i" else ("I'm" if t == "i'm" else t) for t in text.split())


def sentence(text: str) -> str:
    text = text.strip().rstrip(".!?,;:")
    return text[:1].upper() + text[1:] + "." if text else ""


def subject_key(what: str) -> tuple[str, ...] | None:
    """What a memory says something about, when a later one can replace it: "my favourite
    colour is blue" → ("favourite", "colour"); None for a memory with no such key."""
    m = re.match(r"^my ([a-z' ]{1,40}?) (?:is|are|was)\b", what.lower())
    return tuple(m.group(1).split()) if m else None


def meaning_words(text: str) -> list[str]:
    """The words of ``text`` that carry meaning (no "what", "my", "do" …), lower case."""
    return [w for w in words(text) if w not in FILLER]


def with_forms(terms: list[str]) -> list[str]:
    """``terms`` and the other forms of their irregular verbs ("break" → "broke", "broken")."""
    return terms + [form for w in terms for form in FORMS.get(w, ()) if form not in terms]


# the first sounds a recognizer keeps when it mishears a word ("Lyon" → "light on", "bees" →
# "peace", "Ade" → "a death"): a letter's class, the voiced and unvoiced pairs together
_SOUND_CLASSES = ("aeiou", "bp", "dt", "fv", "gkq", "csz", "l", "r", "mn", "w", "h", "j", "y", "x")
_SPAN_WORDS = 3  # the most words of a memory one misheard word may have become


def _first_sound(word: str) -> frozenset[str]:
    w = word.lower()
    if w.startswith(("ch", "sh")):
        return frozenset({"ch"})
    if w.startswith("ph"):
        w = "f" + w[2:]
    head = w[:1]
    return frozenset(c for c in _SOUND_CLASSES if head and head in c) | (
        frozenset({"gkq"}) if head == "c" else frozenset()  # "c" is a "k" or an "s"
    )


def is_whole_fact(said: str) -> bool:
    """``said`` is a fact of its own ("I live in Lyon", "my sister is Eva"), not a word or
    two of one."""
    said_words = said.split()
    return len(said_words) >= 3 and said_words[0].lower() in ("i", "i'm", "my")


def corrected(what: str, said: str) -> str:
    """``what`` (a memory as heard) put right by the person's ``said`` ("no, I said Lyon").

    ``said`` a whole fact ("I live in Lyon", "my sister is Eva"): that. Else the words of
    ``said`` replace the shortest run of ``what``'s last words (up to three) that begins with
    the same sound ("light on" for "Lyon", "a death" for "Ade", "peace" for "bees"), else its
    last word: a misheard word keeps its first sound more often than not, and the value a fact
    is about comes last ("I live in …", "my sister is …")."""
    said = " ".join(said.split()).strip(" .,!?;:")
    told = what.split()
    if not said or not told:
        return said or what
    if is_whole_fact(said):
        return first_person(said)
    said_words = said.split()
    sound = _first_sound(said_words[0])
    for n in range(1, min(_SPAN_WORDS, len(told)) + 1):
        if sound & _first_sound(told[-n]):
            return " ".join(told[:-n] + said_words)
    return " ".join(told[:-1] + said_words)
