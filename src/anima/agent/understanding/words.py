"""Words as the understanding layer compares them: tokens, contractions, disfluencies, stems
and spoken numbers.

Everything here is plain data and small functions: a request is lower-cased, split into
tokens, contractions are spelled out ("what's" → "what is"), the sounds people make while
thinking ("um", "uh") and stutters ("can you can you") are dropped, and each word is reduced to
a crude stem so "waving", "waves" and "wave" compare equal. The same :func:`stem` is applied to
the registry's phrases, so it only has to be consistent, not linguistically right.
"""

from __future__ import annotations

import re


def wordset(text: str) -> frozenset[str]:
    """The words of a multi-line string: word lists read best as text."""
    return frozenset(text.split())


_TOKEN = re.compile(r"\d+(?:\.\d+)?|[a-z]+(?:'[a-z]+)*|[,;.!?]")

CONTRACTIONS = {
    "what's": "what is",
    "who's": "who is",
    "how's": "how is",
    "where's": "where is",
    "that's": "that is",
    "it's": "it is",
    "let's": "let us",
    "you're": "you are",
    "i'm": "i am",
    "i'd": "i would",
    "i'll": "i will",
    "you'll": "you will",
    "can't": "can not",
    "cannot": "can not",
    "don't": "do not",
    "dont": "do not",
    "doesn't": "does not",
    "won't": "will not",
    "we're": "we are",
    "they're": "they are",
    "there's": "there is",
    "what're": "what are",
    # the same without the apostrophe, as ASR often writes them
    "whats": "what is",
    "thats": "that is",
    "hows": "how is",
    "whos": "who is",
    "wheres": "where is",
    "youre": "you are",
    "cant": "can not",
    "doesnt": "does not",
    "im": "i am",
}

# sounds of hesitation (ASR transcribes them) and the wake words a listener may leave in
DISFLUENCIES = wordset(
    """
    um umm uh uhh uhm er erm ah ahh hmm hm mm mhm eh
    """
)

PUNCTUATION = frozenset(",;.!?")


def tokens(text: str, *, stutters: bool = False) -> list[str]:
    """Lower-case tokens with contractions spelled out, hesitations and (unless ``stutters``)
    stutters dropped. Free text keeps its stutters: "say bye bye" says "bye bye"."""
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'").replace("°", " degrees ")
    out: list[str] = []
    for raw in _TOKEN.findall(text):
        for tok in CONTRACTIONS.get(raw, raw).split():
            if tok in DISFLUENCIES:
                continue
            out.append(tok)
    return out if stutters else unstutter(out)


def unstutter(toks: list[str]) -> list[str]:
    """ "can you can you wave" → "can you wave": an immediate repeat of one or two words."""
    out: list[str] = []
    for tok in toks:
        if out and tok == out[-1] and tok not in PUNCTUATION:
            continue
        out.append(tok)
        if len(out) >= 4 and out[-2:] == out[-4:-2]:
            del out[-2:]
    return out


def stem(word: str) -> str:
    """A crude, consistent stem: "waving", "waves", "waved", "wave" → "wav"."""
    w = word.replace("'", "")
    if len(w) > 5 and w.endswith("ing"):
        w = _undouble(w[:-3])
    elif len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 4 and w.endswith(("ches", "shes", "sses", "xes")):
        w = w[:-2]
    elif len(w) > 4 and w.endswith("ed"):
        w = _undouble(w[:-2])
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


def _undouble(w: str) -> str:
    if len(w) >= 3 and w[-1] == w[-2] and w[-1] not in "lsz":
        return w[:-1]
    return w


# --------------------------------------------------------------------------- numbers
_ONES_WORDS = """
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen
"""
_UNITS = {w: i for i, w in enumerate(_ONES_WORDS.split())}
_TENS_WORDS = "twenty thirty forty fifty sixty seventy eighty ninety"
_TENS = {w: 10 * i for i, w in enumerate(_TENS_WORDS.split(), 2)}
_FRACTIONS = {"half": 0.5, "quarter": 0.25}
MAX_DIGITS = 9  # longer digit strings are no spoken number (and would not be finite as int)


def number_at(toks: list[str], i: int) -> tuple[float, int] | None:
    """The spoken or written number starting at ``toks[i]``: (value, tokens used), or None.

    "2", "2.5", "two", "twenty five", "one and a half", "half a", "a half", "a" (one, before
    a unit: "a second"), "to"/"too" are *not* read here (the caller knows when they mean two).
    """
    if i >= len(toks):
        return None
    tok = toks[i]
    if tok[0].isdigit():
        if len(tok) > MAX_DIGITS:
            return None  # "99999…9 seconds" is not a spoken number
        return _with_half(float(tok), toks, i + 1, 1)
    if tok == "half":
        used = 2 if i + 1 < len(toks) and toks[i + 1] in ("a", "an") else 1
        return (0.5, used)
    if tok in ("a", "an") and i + 1 < len(toks) and toks[i + 1] in _FRACTIONS:
        return (_FRACTIONS[toks[i + 1]], 2)
    value: float
    if tok in _TENS:
        value, used = float(_TENS[tok]), 1
        if i + 1 < len(toks) and toks[i + 1] in _UNITS and 0 < _UNITS[toks[i + 1]] < 10:
            value, used = value + _UNITS[toks[i + 1]], 2
    elif tok in _UNITS:
        value, used = float(_UNITS[tok]), 1
    else:
        return None
    return _with_half(value, toks, i + used, used)


def _with_half(value: float, toks: list[str], j: int, used: int) -> tuple[float, int]:
    """ "one and a half": the fraction after a whole number."""
    if toks[j : j + 3] == ["and", "a", "half"]:
        return (value + 0.5, used + 3)
    return (value, used)


_ONES = "|".join(w for w, i in sorted(_UNITS.items(), key=lambda kv: -len(kv[0])) if 0 < i < 10)
_WHOLE = (
    r"\d+(?:\.\d+)?"
    rf"|(?:{'|'.join(_TENS)})(?: (?:{_ONES}))?"
    rf"|{'|'.join(sorted(_UNITS, key=len, reverse=True))}"
)
NUMBER_PATTERN = rf"(?:{_WHOLE})(?: and a half)?|half an?|an? half"
"""A regular expression for what :func:`number_at` reads (words joined by single spaces)."""
