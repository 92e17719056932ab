"""The memory bench's facts: what two people tell the robot over three conversations, and what
they ask in a fourth.

Each :class:`Fact` is told in one session (1–3) by Ana or Bob, who say their name first, and
asked back in session 4 (after they say their name again: the robot recognises nobody). The
answer must contain ``expect``. ``DEV`` is the set the rules were written against; ``HELDOUT``
(other facts, other phrasings, written before it was first run) is only measured.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fact:
    who: str
    session: int  # 1-3: the conversation it is told in
    tell: str
    ask: str
    expect: str  # a word the answer must contain (any case); "|" between equal answers

    def word(self) -> str:
        """The fact's word as the person says it ("Lyon", "two"): as written in ``tell``."""
        first = self.expect.split("|")[0]
        at = self.tell.lower().find(first.lower())
        return self.tell[at : at + len(first)] if at >= 0 else first

    def answered(self, answer: str) -> bool:
        """Whether ``answer`` holds the expected word, or one of its equal forms ("twelve|12",
        "grey|gray": the digits Whisper writes, US spelling)."""
        said = answer.lower()
        return any(form.lower() in said for form in self.expect.split("|"))


DEV = (
    Fact("Ana", 1, "Remember that I like jazz.", "What music do I like?", "jazz"),
    Fact("Ana", 1, "My favourite colour is blue.", "What is my favourite colour?", "blue"),
    Fact("Ana", 1, "Remember that I live in Lyon.", "Where do I live?", "Lyon"),
    Fact("Ana", 2, "My sister is called Eva.", "What is my sister called?", "Eva"),
    Fact("Ana", 2, "Remember that I was born in May.", "When was I born?", "May"),
    Fact("Ana", 2, "My dog's name is Rex.", "What is my dog's name?", "Rex"),
    Fact("Ana", 3, "Remember that I work as a nurse.", "What do I work as?", "nurse"),
    Fact("Ana", 3, "Please remember I'm allergic to peanuts.", "What am I allergic to?", "peanuts"),
    Fact("Ana", 3, "My favourite food is pizza.", "What's my favourite food?", "pizza"),
    Fact("Ana", 3, "Remember that I play the cello.", "What instrument do I play?", "cello"),
    Fact("Bob", 1, "Remember that I like tea.", "What do I like to drink?", "tea"),
    Fact("Bob", 1, "My favourite colour is red.", "What's my favourite colour?", "red"),
    Fact("Bob", 1, "Remember that I have two cats.", "How many cats do I have?", "two|2"),
    Fact("Bob", 2, "My birthday is on the fourth of July.", "When is my birthday?", "July"),
    Fact("Bob", 2, "Remember that I speak French.", "What language do I speak?", "French"),
    Fact("Bob", 2, "My car is a red Fiat.", "What car do I have?", "Fiat"),
    Fact("Bob", 3, "Remember that I studied physics.", "What did I study?", "physics"),
    Fact("Bob", 3, "My son is called Leo.", "What is my son's name?", "Leo"),
    Fact(
        "Bob",
        3,
        "Remember that my office is on the third floor.",
        "Where is my office?",
        "third|3rd",
    ),
    Fact("Bob", 3, "Remember that I'm learning Spanish.", "What am I learning?", "Spanish"),
)

HELDOUT = (
    Fact(
        "Chloe",
        1,
        "Don't forget that I take the bus at eight.",
        "When do I take the bus?",
        "eight|8",
    ),
    Fact("Chloe", 1, "My brother is called Tom.", "Who is my brother?", "Tom"),
    Fact("Chloe", 1, "Remember that I collect stamps.", "What do I collect?", "stamps"),
    Fact("Chloe", 2, "My favourite film is Alien.", "Which film is my favourite?", "Alien"),
    Fact("Chloe", 2, "Remember that I hate mushrooms.", "What do I hate?", "mushrooms"),
    Fact("Chloe", 2, "Remember that my cat is grey.", "What colour is my cat?", "grey|gray"),
    Fact(
        "Chloe",
        3,
        "Keep in mind that I drink my coffee black.",
        "How do I drink my coffee?",
        "black",
    ),
    Fact("Chloe", 3, "My password hint is sunflower.", "What is my password hint?", "sunflower"),
    Fact("Chloe", 3, "Remember that I run on Sundays.", "When do I run?", "Sundays"),
    Fact(
        "Chloe", 3, "Remember that my mother lives in Porto.", "Where does my mother live?", "Porto"
    ),
    Fact("Dev", 1, "Remember that I am a chess player.", "What game do I play?", "chess"),
    Fact("Dev", 1, "My favourite number is seven.", "What is my favourite number?", "seven|7"),
    Fact("Dev", 1, "Remember that I grew up in Delhi.", "Where did I grow up?", "Delhi"),
    Fact("Dev", 2, "My wife is called Priya.", "What's my wife's name?", "Priya"),
    Fact("Dev", 2, "Remember that I fly to Oslo on Friday.", "Where am I flying to?", "Oslo"),
    Fact("Dev", 2, "Remember that I prefer the window seat.", "Which seat do I prefer?", "window"),
    Fact("Dev", 3, "My phone is a Nokia.", "What phone do I have?", "Nokia"),
    Fact("Dev", 3, "Remember that I broke my arm last year.", "What did I break?", "arm"),
    Fact("Dev", 3, "Remember that my daughter is five.", "How old is my daughter?", "five|5"),
    Fact("Dev", 3, "Remember that I'm a night owl.", "Am I a morning person?", "night"),
)

# written after HELDOUT had been run once and the rules widened (yes/no questions, irregular
# verbs): a set no rule has seen
FRESH = (
    Fact("Ewa", 1, "Remember that I parked on level two.", "Where did I park?", "two"),
    Fact("Ewa", 1, "My niece is called Zoe.", "What's my niece's name?", "Zoe"),
    Fact("Ewa", 1, "Remember that I teach maths.", "What do I teach?", "maths|math"),
    Fact("Ewa", 2, "Remember that my train leaves at noon.", "When does my train leave?", "noon"),
    Fact("Ewa", 2, "My favourite season is autumn.", "What is my favourite season?", "autumn"),
    Fact("Ewa", 2, "Remember that I left my umbrella in the car.", "Where is my umbrella?", "car"),
    Fact("Ewa", 3, "Remember that I can't eat gluten.", "What can't I eat?", "gluten"),
    Fact("Ewa", 3, "My hometown is Gdansk.", "What is my hometown?", "Gdansk"),
    Fact("Ewa", 3, "Remember that I swim every morning.", "When do I swim?", "morning"),
    Fact("Ewa", 3, "Remember that my boss is Mr Lee.", "Who is my boss?", "Lee"),
    Fact("Femi", 1, "Remember that I support Arsenal.", "Which team do I support?", "Arsenal"),
    Fact("Femi", 1, "My middle name is Ade.", "What is my middle name?", "Ade"),
    Fact("Femi", 1, "Remember that I bought a new bike.", "What did I buy?", "bike"),
    Fact("Femi", 2, "Remember that my exam is on Tuesday.", "When is my exam?", "Tuesday"),
    Fact("Femi", 2, "My favourite singer is Adele.", "Who is my favourite singer?", "Adele"),
    Fact("Femi", 2, "Remember that I keep bees.", "What do I keep?", "bees"),
    Fact(
        "Femi", 3, "Remember that I wrote a book about rivers.", "What did I write about?", "rivers"
    ),
    Fact("Femi", 3, "My flat is number twelve.", "What number is my flat?", "twelve|12"),
    Fact("Femi", 3, "Remember that I met my wife in Lagos.", "Where did I meet my wife?", "Lagos"),
    Fact("Femi", 3, "Remember that I sleep badly.", "How do I sleep?", "badly"),
)

SPLITS = {"dev": DEV, "heldout": HELDOUT, "fresh": FRESH}
