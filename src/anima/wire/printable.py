"""Text from the wire made safe to print: in a log line, in a terminal table.

Anyone on a broker may publish a robot's identity or health; printed raw, a newline in a name
forges a line in the log, and an escape sequence (ANSI colours, OSC 52 — a clipboard write)
acts on the terminal of whoever reads it. :func:`printable` escapes every control, format or
unassigned character as Python's ``repr`` would (``\\n``, ``\\x1b``, ``\\u202e``) and bounds the
length.
"""

from __future__ import annotations

import unicodedata

_UNSAFE = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))  # controls, bidi, separators


def printable(value: object, limit: int = 120) -> str:
    """``value`` as text with nothing a terminal acts on, cut to ``limit`` characters."""
    text = value if isinstance(value, str) else str(value)
    out: list[str] = []
    size = 0
    for c in text:
        piece = c if unicodedata.category(c) not in _UNSAFE else repr(c)[1:-1]
        size += len(piece)
        if size > limit:
            out.append("…")
            break
        out.append(piece)
    return "".join(out)
