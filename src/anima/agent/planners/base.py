"""The planner protocol, its reply, and the reply format shared by the LLM planners.

A planner turns what a person said into something to say and a list of action strings; after
the executor has run them it gets the feedback summary and may answer again (more actions, or
just words). It never runs anything itself: the caller validates ``actions`` with
:func:`~anima.agent.plan.parse_plan` and runs them with the executor.

The JSON reply format is the seed's (``"action"`` is accepted for ``"actions"``)::

    {"response": "Sure, watch this.", "actions": ["play_animation('nod')"], "plan": "…"}

Streaming (:class:`ReplySink`): a planner that streams hands its reply on as it arrives — the
whole plan once it is complete (:meth:`ReplySink.actions`, at most once), the words a sentence at
a time (:meth:`ReplySink.words`) — and returns the whole reply with
``streamed=True``. The caller decides what may be said when (nothing that promises an action
before the plan has validated); :mod:`anima.agent.planners.streaming` reads streamed replies.

Replies come from servers we do not control: :func:`json_value` turns every way decoding can
fail (invalid JSON, bytes that are not text, nesting deep enough to exhaust the recursion
limit, integers over Python's 4300 digits) into a :class:`PlannerError` with a reason, and
:func:`speakable` bounds what of a reply the robot says (:data:`MAX_SPOKEN_CHARS`).
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from anima.errors import PlannerError

if TYPE_CHECKING:
    from anima.agent.understanding import Understanding

APOLOGY = "Sorry, I can't think right now. Please try again."  # spoken when a planner fails
MAX_SPOKEN_CHARS = 500  # a few sentences: what of a reply is spoken; the rest is dropped


@dataclass(frozen=True, kw_only=True)
class PlannerReply:
    """What to say, what to do, and (optionally) the planner's own plan in words."""

    response: str  # to be spoken ("" when there is nothing to say)
    actions: list[str] = field(default_factory=list)  # action strings, not yet validated
    plan: str | None = None  # the decision-level plan, when the planner gives one
    error: str | None = None  # why the planner failed (the response is then an apology)
    interrupted: bool = False  # interrupt() released the request: say and do nothing
    streamed: bool = False  # its actions and words already went to the request's ReplySink


class ReplySink(Protocol):
    """Where a streaming planner puts its reply as it arrives (called on the planner's thread)."""

    def actions(self, actions: list[str]) -> None:
        """The reply's whole plan (``[]``: it has none), once, before or among the words."""
        ...

    def words(self, text: str) -> None:
        """The next sentence of the reply's response."""
        ...


class Planner(Protocol):
    """One conversation with whatever decides what the robot does."""

    name: str

    def plan(self, request: str) -> PlannerReply:
        """Answer a person's request. Never raises for a server failure: apologizes instead."""
        ...

    def feedback(self, summary: str) -> PlannerReply | None:
        """Tell the planner what the robot did (``Robot feedback: …``); its answer, if any."""
        ...

    def reset(self) -> None:
        """Forget the conversation (``finish()`` ended the task)."""
        ...

    def interrupt(self) -> None:
        """Release a request in flight at once (a wake): it returns ``interrupted=True``."""
        ...

    def close(self) -> None:
        """Release connections and join helper threads."""
        ...


# what some planners can do besides (each checked with isinstance, so mypy checks its use)
@runtime_checkable
class Understands(Protocol):
    """A planner that reads requests itself (the rule planner): the conversation asks its
    understanding (which knows the last plan) and reads a request again only for it."""

    def understanding(self, request: str) -> Understanding: ...


@runtime_checkable
class Retracts(Protocol):
    """A planner that can forget its last request and answer: a reply begun early, at a pause,
    and taken back because the person went on (the request was only part of theirs)."""

    def retract(self) -> None: ...


@runtime_checkable
class Acknowledges(Protocol):
    """A planner told that the feedback of a plan was given without asking it for an answer
    (the OpenAI planner keeps it in its history)."""

    def acknowledge(self, summary: str) -> None: ...


@runtime_checkable
class Streams(Protocol):
    """A planner that may stream its replies (``plan(request, sink)``: :class:`ReplySink`)."""

    streaming: bool  # whether it streams now (its config's choice)


def interrupted_reply() -> PlannerReply:
    return PlannerReply(response="", interrupted=True)


def apology(error: str) -> PlannerReply:
    return PlannerReply(response=APOLOGY, error=error)


_FENCE = re.compile(r"^\s*```(?:json|JSON)?\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)


def parse_reply_text(text: str, *, plain_text_ok: bool = False) -> PlannerReply:
    """The seed's JSON reply → PlannerReply; PlannerError when it is not one.

    ``plain_text_ok``: an answer with no JSON object at all is taken as words to say with no
    actions (a Dify app may chat); a JSON object of the wrong shape is still an error.
    """
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end < start:
        if plain_text_ok and body:
            return PlannerReply(response=speakable(body))
        raise PlannerError(f"malformed reply: no JSON object in {_excerpt(text)}")
    data = json_value(body[start : end + 1], f"the reply text {_excerpt(text)}", "invalid JSON")
    return reply_from_json(data)


def json_value(text: str | bytes, what: str, invalid: str = "not JSON") -> Any:
    """``json.loads(text)``; every failure is a PlannerError naming ``what`` and why."""
    try:
        return json.loads(text)
    except RecursionError:
        raise PlannerError(f"malformed reply: {what} is nested too deeply to read") from None
    except UnicodeDecodeError as exc:
        raise PlannerError(
            f"malformed reply: {what} is not UTF-8 text (bad byte at {exc.start})"
        ) from None
    except json.JSONDecodeError as exc:
        raise PlannerError(
            f"malformed reply: {what} is {invalid} ({exc.msg} at {exc.pos})"
        ) from None
    except ValueError as exc:  # an integer over sys.get_int_max_str_digits() digits
        reason = str(exc).partition(";")[0][:100]
        raise PlannerError(f"malformed reply: {what} holds a value too big ({reason})") from None


def speakable(text: str, limit: int = MAX_SPOKEN_CHARS) -> str:
    """What of ``text`` the robot may say: control characters and lone surrogates dropped,
    white space collapsed, and at most ``limit`` characters, cut at the last sentence end
    (else word) before it. A 50 MB reply must never reach the speech service whole."""
    head = text[: limit * 4]  # enough for `limit` characters after the clean-up below
    kept = "".join(" " if c.isspace() else c for c in head if _sayable(c))
    words = without_cut_marker(" ".join(kept.split()))
    if len(words) <= limit:
        return words
    cut = words[: limit + 1]
    ends = [cut.rfind(mark, 0, limit) for mark in (". ", "! ", "? ")]
    sentence = max(ends)
    if sentence >= limit // 3:
        return cut[: sentence + 1]
    space = cut.rfind(" ", 0, limit)
    head = without_cut_marker(cut[:space] if space > 0 else cut[: limit - 1])
    return head + "…" if head else ""


# A speech marker cut off at the end of a reply (the model's tokens ran out, or the cut above):
# "^", "^sta", "^start(", "^start(LOOKUP_Wa", with or without an ellipsis after. Not a marker
# to the speech markup ("^sta" has no "("), so it would be said: "caret s t a".
_MARKER_WORDS = ("start", "stop", "wait", "run", "mode")  # anima.language.markup.MARKERS
_CUT_MARKER = re.compile(r"\s*\^(?P<word>[A-Za-z_]\w*)?(?P<open>\([^)]*)?\s*(?:…|\.\.\.)?\s*$")


def without_cut_marker(text: str) -> str:
    """``text`` without a speech marker cut off at its end ("Sure! ^sta" → "Sure!"): the start
    of a marker's name (``^sta``), or a marker opened and never closed (``^start(LOOKUP_Wa``).
    A ``^`` followed by another word ("x^y") is left as it is."""
    found = _CUT_MARKER.search(text)
    if found is None:
        return text
    word = (found.group("word") or "").lower()
    opened = found.group("open") is not None
    if opened or any(m.startswith(word) for m in _MARKER_WORDS):
        return text[: found.start()].rstrip()
    return text


def _sayable(c: str) -> bool:
    return c.isspace() or unicodedata.category(c) not in ("Cc", "Cs", "Cf", "Co", "Cn")


def reply_from_json(data: Any) -> PlannerReply:
    """Check the shape of a decoded JSON reply."""
    if not isinstance(data, dict):
        raise PlannerError(f"malformed reply: a JSON object is needed, got {type(data).__name__}")
    response = data.get("response", "")
    if not isinstance(response, str):
        raise PlannerError("malformed reply: 'response' must be a string")
    actions = data.get("actions", data.get("action", []))
    if actions is None:
        actions = []
    if not isinstance(actions, list) or not all(isinstance(a, str) for a in actions):
        raise PlannerError("malformed reply: 'actions' must be a list of action strings")
    plan = data.get("plan")
    if plan is not None and not isinstance(plan, str):
        raise PlannerError("malformed reply: 'plan' must be a string or null")
    return PlannerReply(response=speakable(response), actions=list(actions), plan=plan or None)


def _excerpt(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")
