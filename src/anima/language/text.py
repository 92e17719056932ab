"""The one rule for speech text, whichever door it came through: how long it may be and which
characters it may not hold (:func:`speech_problem`, :func:`text_problem`).
:class:`~anima.commands.Speak` and :class:`~anima.commands.Ask` apply it as they are made, the
doors' parsers before them."""

from __future__ import annotations

import re

# The longest text one utterance may carry (characters), whichever way it came: front doors
# refuse longer payloads and the speech service refuses longer text, so no path can hand a TTS
# engine a megabyte (a 1 MB reply once held Piper's phonemizer, and the loop, for 15 s).
MAX_SPEECH_TEXT = 2000
# C0 and C1 controls but tab, LF and CR, DEL, and UTF-16 surrogates (only a lone one can reach
# a str: JSON's "\ud800" decodes to one; UTF-8 bytes never do)
_NOT_TEXT = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def speech_problem(text: str, key: str = "text", limit: int = MAX_SPEECH_TEXT) -> str | None:
    """Why ``text`` cannot be said or asked (longer than ``limit`` characters, or
    :func:`text_problem`), or None: the one rule every door and
    :class:`~anima.commands.Speak` apply."""
    if len(text) > limit:
        return f"{key} of {len(text)} characters exceeds the {limit} limit"
    return text_problem(text, key)


def text_problem(text: str, key: str = "text") -> str | None:
    """Why ``text`` cannot be said (a control character but tab, LF and CR, or a lone
    surrogate, and where), or None. The one rule for speech text: :class:`Speak` and
    :class:`Ask` check it as they are made (so MCP's and the agent's ``say``, which build
    :class:`Speak` directly, refuse a NUL or an ESC as the doors' parsers do)."""
    bad = _NOT_TEXT.search(text)
    if bad is None:
        return None
    code, at = ord(bad.group()), bad.start()
    if 0xD800 <= code <= 0xDFFF:
        why = "half of a UTF-16 pair is not text"
        return f"{key} contains a lone surrogate (U+{code:04X}) at character {at}: {why}"
    what = "a NUL character (U+0000)" if code == 0 else f"the control character U+{code:04X}"
    return f"{key} contains {what} at character {at}"
