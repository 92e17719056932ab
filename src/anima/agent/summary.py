"""A finished conversation condensed into memories (``agent.memory.summarise``, docs/memory.md).

Only with an LLM planner (the rule planner never summarises: the config refuses it). When the
conversation goes idle, what was said in it — the person's requests and the robot's replies, at
most :data:`MAX_LINES` lines — is sent to the planner's model once, in a request of its own,
with :data:`SUMMARY_PROMPT`; its answer, a JSON list of ``{"who", "what"}``, becomes at most
:data:`MOST` memories with source ``summary``. What was kept is always said: a ``notice``
event and a log line ("kept from the conversation: …", or "nothing kept").
"""

from __future__ import annotations

import collections
import json
import logging
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from anima.errors import AnimaError
from anima.memory.store import EVERYONE, MAX_WHAT, MAX_WHO

if TYPE_CHECKING:
    from anima.agent.remembering import Remembering

log = logging.getLogger(__name__)

MOST = 5  # memories one conversation may leave
MAX_LINES = 200  # the transcript's last lines sent
MAX_LINE_CHARS = 500

SUMMARY_PROMPT = (
    "You read a conversation between a robot and the people it talked with. List the facts "
    "worth remembering about those people for later conversations: their names, what they "
    "like, their plans, what they asked the robot to remember. Leave out small talk and "
    "anything about the robot itself. Answer with a JSON array only, at most "
    f'{MOST} items, each an object with "who" (the person\'s name, or "everyone" when it is '
    'not known) and "what" (one short sentence in the person\'s own words, first person: '
    '"I like jazz"). Answer [] when there is nothing worth remembering.'
)
_ARRAY = re.compile(r"\[.*\]", re.DOTALL)


def read_summary(content: str) -> list[tuple[str, str]]:
    """The (who, what) pairs of the model's answer: the first JSON array in it (a model may
    wrap it in words or a code fence), items that are not an object with a short text
    ``what`` left out, at most :data:`MOST`."""
    found = _ARRAY.search(content)
    if found is None:
        return []
    try:
        items = json.loads(found.group(0))
    except ValueError:
        return []
    if not isinstance(items, list):
        return []
    out: list[tuple[str, str]] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        what, who = item.get("what"), item.get("who", "")
        if not isinstance(what, str) or not what.strip() or len(what) > MAX_WHAT:
            continue
        if not isinstance(who, str) or len(who) > MAX_WHO:
            who = ""
        out.append((who.strip(), " ".join(what.split())))
        if len(out) == MOST:
            break
    return out


def transcript_line(speaker: str, text: str) -> str:
    """One line of the transcript sent: "person: …" / "robot: …", bounded."""
    flat = " ".join(text.split())
    return f"{speaker}: {flat[:MAX_LINE_CHARS]}"


class Spoken:
    """What was said in the conversation so far (the person's requests, the robot's words),
    for its summary; thread-safe, the last :data:`MAX_LINES` lines."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lines: collections.deque[str] = collections.deque(maxlen=MAX_LINES)
        self._count = 0  # lines ever added (mark, drop_since)

    def heard(self, text: str) -> None:
        self._add(transcript_line("person", text))

    def said(self, text: str) -> None:
        self._add(transcript_line("robot", text))

    def _add(self, line: str) -> None:
        with self._lock:
            self._lines.append(line)
            self._count += 1

    def mark(self) -> int:
        """Where the transcript is now (for :meth:`drop_since`)."""
        with self._lock:
            return self._count

    def drop_since(self, mark: int) -> None:
        """Forget the lines added since ``mark`` (a reply taken back)."""
        with self._lock:
            for _ in range(min(max(0, self._count - mark), len(self._lines))):
                self._lines.pop()
            self._count = min(self._count, mark)

    def take(self) -> list[str]:
        """The lines so far, and a new transcript begins."""
        with self._lock:
            lines = list(self._lines)
            self._lines.clear()
            self._count = 0
        return lines


def summarise_later(
    lines: list[str],
    summarise: Callable[[list[str]], list[tuple[str, str]]],
    memory: Remembering,
    notice: Callable[[str], None],
) -> threading.Thread | None:
    """Summarise ``lines`` on a thread of its own (a model takes seconds) and keep what it
    gives, with source ``summary``; ``notice`` says what was kept, or why nothing was. None
    (nothing sent) when the person said nothing."""
    if not any(line.startswith("person: ") for line in lines):
        return None

    def work() -> None:
        try:
            items = summarise(lines)
        except AnimaError as exc:
            notice(f"memory: the conversation was not summarised: {exc}")
            return
        kept = []
        for who, what in items:
            try:
                memory.store.add(what, who=who or EVERYONE, source="summary")
            except AnimaError as exc:
                log.warning("a summary's memory %r was not kept: %s", what[:60], exc)
                continue
            kept.append(f"{who or EVERYONE}: {what}")
        if kept:
            notice("memory: kept from the conversation: " + "; ".join(kept))
        else:
            notice("memory: nothing kept from the conversation")

    thread = threading.Thread(target=work, name="anima-summary", daemon=True)
    thread.start()
    return thread
