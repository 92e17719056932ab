"""Whisper's text around the decoder: the prompt that biases it, the restarted clause it may
add, and which of its hypotheses are other readings (:mod:`anima.listening.whisper.asr`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from anima.listening.asr import normalize

MAX_PROMPT_CHARS = 160  # of vocabulary in the prompt (~40 tokens; see prompt_text)


def prompt_text(vocabulary: Sequence[str], wake_phrase: str = "") -> str:
    """The previous-text prompt that biases the decoder: the wake phrase as a sentence, then the
    phrases in the order given, each once, those that still fit in :data:`MAX_PROMPT_CHARS`:
    ``"Hey robot. Nod, wave, look at me."`` (the agent gives each kind of action in turn:
    :func:`~anima.agent.understanding.aliases.prompt_phrases`). Kept short and punctuated like
    Whisper's own output: with all ~70 phrases of the registry the decoder answered in lists
    ("look at me, look at the floor, look") and word error rose (26 % against 10 % with a
    short prompt on eSpeak NG)."""
    parts: list[str] = []
    size = 0
    for phrase in vocabulary:
        text = " ".join(normalize(phrase).split())
        if not text or text in parts or size + len(text) + 2 > MAX_PROMPT_CHARS:
            continue
        parts.append(text)
        size += len(text) + 2
    text = ", ".join(parts)
    if text:
        text = text[0].upper() + text[1:] + "."
    wake = " ".join(normalize(wake_phrase).split())
    if wake:
        text = f"{wake[0].upper()}{wake[1:]}. {text}".strip()
    return text


_CLAUSE = re.compile(r"[^,.;:!?]+[,.;:!?]*")


def drop_echo(text: str) -> str:
    """``text`` without trailing clauses that repeat the start of an earlier one: a window cut
    short makes the decoder begin the utterance again ("turn right a little, turn right",
    "stop, stop.", "walk forward for two seconds. Walk forward")."""
    clauses = _CLAUSE.findall(text)
    while len(clauses) > 1:
        last = normalize(clauses[-1]).split()
        if not last or not any(normalize(c).split()[: len(last)] == last for c in clauses[:-1]):
            break
        clauses.pop()
    kept = "".join(clauses).strip()
    return kept[:-1] if kept.endswith(",") else kept


def other_readings(best: str, hypotheses: Sequence[str]) -> tuple[str, ...]:
    """``hypotheses`` that read differently from ``best`` and from each other (words compared
    without case or punctuation), in order: "Turn left!" after "Turn left." is no other
    reading."""
    seen = {normalize(best)}
    out: list[str] = []
    for text in hypotheses:
        key = normalize(text)
        if key and key not in seen:
            seen.add(key)
            out.append(text)
    return tuple(out)
