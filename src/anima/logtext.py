"""Text from outside (what a person said, what a planner answered) made safe for one log line.

A transcript or a plan comes from a microphone, a file or a language model: a newline in it
would forge a second log line, an ESC sequence would drive the terminal of whoever reads the
log. :func:`quoted` shows it as Python's ``repr`` does — quoted, every control, format and
separator character escaped (``\\n``, ``\\x1b``, ``\\u202e``), printable letters of any script
kept — and cut to a length. For a whole line, unquoted (a payload from the broker, a table
cell), :func:`anima.wire.printable.printable` escapes the same characters.
"""

from __future__ import annotations

LOGGED_CHARS = 120  # characters of a text shown in a log line


def quoted(text: str, limit: int = LOGGED_CHARS) -> str:
    """``text`` quoted and escaped for a log line, at most ``limit`` characters of it (then
    ``…``)."""
    if len(text) <= limit:
        return repr(text)
    return repr(text[:limit]) + "…"
