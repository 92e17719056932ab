"""False wakes over an hour of talk nobody tuned on: sentences from Python's own documentation.

The wake bench's conversation (:data:`anima.bench.wake.wake.HELDOUT_TALK`) is 20 sentences — minutes
of audio, far too little to bound a rate per hour. This run speaks, for as long as asked, ordinary
English prose that is on every machine and that no part of anima was fitted on: the sentences of the
standard library's docstrings (``inspect.getdoc`` of a fixed list of modules and their classes and
functions), kept when they are plain words (5–25 of them, no code, no digits) and do not contain the
wake phrase. Voices and noises rotate as in the wake bench; each sentence is fed
to the spotter alone between short silences, faster than real time.
"""

from __future__ import annotations

import importlib
import inspect
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from anima.audio import SAMPLE_RATE
from anima.bench.wake.wake import NOISES, Voice, count_wakes, padded, speak
from anima.listening.asr import normalize
from anima.listening.wake.spotter import Spotter

# plain-prose modules of the standard library (fixed, so every run speaks the same text)
MODULES = (
    "argparse", "asyncio", "calendar", "collections", "configparser", "csv", "datetime",
    "decimal", "difflib", "email", "fractions", "ftplib", "functools", "gettext", "heapq",
    "http.client", "imaplib", "inspect", "ipaddress", "logging", "mailbox", "pathlib", "pdb",
    "pickle", "poplib", "queue", "random", "shutil", "smtplib", "socket", "statistics",
    "string", "subprocess", "tarfile", "tempfile", "textwrap", "threading", "tkinter",
    "turtle", "unittest", "urllib.request", "uuid", "wave", "xml.dom.minidom", "zipfile",
)  # fmt: skip
_SENTENCE = re.compile(r"(?<=[.?!])\s+")
_PLAIN = re.compile(r"^[A-Z][A-Za-z ,;'\-]+[.?!]$")


def docstring_sentences(
    phrase: str = "hey robot", modules: Sequence[str] = MODULES
) -> Iterator[str]:
    """Plain sentences of the standard library's docstrings, each once, in a fixed order."""
    seen: set[str] = set()
    wake = normalize(phrase)
    for name in modules:
        try:
            module = importlib.import_module(name)
        except Exception:  # a module this Python lacks (tkinter) is skipped
            continue
        objects = [module] + [obj for _, obj in sorted(vars(module).items()) if callable(obj)]
        for obj in objects:
            doc = inspect.getdoc(obj) or ""
            for sentence in _SENTENCE.split(" ".join(doc.split())):
                words = sentence.split()
                if not 5 <= len(words) <= 25 or not _PLAIN.match(sentence):
                    continue
                if sentence in seen or wake in normalize(sentence):
                    continue
                seen.add(sentence)
                yield sentence


@dataclass
class TalkResult:
    spotter: str
    sentences: int = 0
    talk_s: float = 0.0  # seconds of audio listened to
    wall_s: float = 0.0
    false_wakes: int = 0
    heard: list[str] = field(default_factory=list)  # "voice / sentence" of each false wake
    exhausted: bool = False  # the corpus ran out before the minutes asked for

    @property
    def per_hour(self) -> float:
        return self.false_wakes * 3600 / self.talk_s if self.talk_s else 0.0

    def lines(self) -> list[str]:
        out = [
            f"false wakes ({self.spotter}): {self.false_wakes} in {self.talk_s / 60:.1f} min of "
            f"talk ({self.sentences} sentences of the standard library's docstrings), "
            f"{self.per_hour:.2f}/h; {self.wall_s:.0f} s"
            + (" (corpus exhausted)" if self.exhausted else "")
        ]
        return out + [f"  woke on: {h}" for h in self.heard[:20]]


def run_talk(
    spotter: Spotter,
    voices: Sequence[Voice],
    *,
    minutes: float = 60.0,
    max_s: float = 1200.0,
    noises: Sequence[tuple[str, float]] = NOISES,
) -> TalkResult:
    """Speak docstring sentences to ``spotter`` until ``minutes`` of audio or ``max_s`` of wall
    time, rotating ``voices`` and ``noises``; count the wakes (each one is false)."""
    result = TalkResult(spotter=spotter.name)
    spotter.load()
    started = time.monotonic()
    sentences = docstring_sentences()
    while result.talk_s < minutes * 60 and time.monotonic() - started < max_s:
        sentence = next(sentences, None)
        if sentence is None:
            result.exhausted = True
            break
        i = result.sentences
        voice, noise = voices[i % len(voices)], noises[(i // len(voices)) % len(noises)]
        audio = padded(speak(voice, sentence), 0.4, 0.6 + 0.1 * (i % 5), noise)
        result.talk_s += len(audio) / SAMPLE_RATE
        result.sentences += 1
        if count_wakes(spotter, audio):
            result.false_wakes += 1
            result.heard.append(f"{voice.name} / {noise[0]} / {sentence}")
    result.wall_s = time.monotonic() - started
    return result


def main(minutes: float = 60.0, max_s: float = 1200.0, kind: str = "asr") -> None:
    """Print the false wakes of ``kind`` (``asr`` or ``keyphrase``) over ``minutes`` of talk."""
    from anima.bench.wake.wake import espeak_voices, piper_voices
    from anima.listening.wake.asr_spotter import AsrSpotter
    from anima.listening.wake.keyphrase import KeyphraseSpotter

    spotter: Spotter = AsrSpotter() if kind == "asr" else KeyphraseSpotter()
    try:
        voices = espeak_voices() + piper_voices()
        for line in run_talk(spotter, voices, minutes=minutes, max_s=max_s).lines():
            print(line, flush=True)
    finally:
        spotter.close()
