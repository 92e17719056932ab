"""Text from outside (what a person said, what a planner answered) made safe for one log line.

A transcript or a plan comes from a microphone, a file or a language model: a newline in it
would forge a second log line, an ESC sequence would drive the terminal of whoever reads the
log. :func:`quoted` shows it as Python's ``repr`` does — quoted, every control, format and
separator character escaped (``\\n``, ``\\x1b``, ``\\u202e``), printable letters of any script
kept — and cut to a length; :func:`escaped` escapes the same characters in a whole line
without quoting it.
"""

from __future__ import annotations

LOGGED_CHARS = 120  # characters of a text shown in a log line


def quoted(text: str, limit: int = LOGGED_CHARS) -> str:
    """``text`` quoted and escaped for a log line, at most ``limit`` characters of it (then
    ``…``)."""
    if len(text) <= limit:
        return repr(text)
    return repr(text[:limit]) + "…"


def escaped(text: str) -> str:
    """``text`` with every character that is not printable (controls, format characters such as
    the bidirectional overrides, line and paragraph separators) escaped as ``repr`` would."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
