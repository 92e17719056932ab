"""Whisper's English tokenizer (GPT-2's byte-level BPE) in plain Python, read from the model's
``vocabulary.txt``.

The ``tokenizers`` package read ``tokenizer.json`` (2.1 MB) in one call that held the
interpreter 130-150 ms on this machine, so every start of the voice agent made the motion loop
miss 10-13 ticks; with its import, 170 ms and 15 MB. What anima asks of a tokenizer is small:
the special tokens' ids, the ids of a prompt or a wake phrase (short English text), and the text
of decoded ids. CTranslate2's model directory lists the vocabulary in id order, one token a line,
and GPT-2's merges are ranked in the same order as the ids they make (the first 256 ids are the
bytes; merge ``i`` makes id ``256 + i``), so the byte-pair encoding needs no merges file: the
adjacent pair whose joined bytes have the lowest id merges first, as ``tiktoken`` does it. Reading
the 51,864 lines is a few milliseconds of C calls and a loop the interpreter switches out of.

Text is split before the merges with GPT-2's pattern (contractions, letters, digits, other
symbols, spaces), written for Python's ``re``: "letters" are word characters that are not
digits or ``_``, so a rare numeric character that is not a digit (``²``, ``Ⅻ``) counts as a letter
here where GPT-2 calls it a number. The tokens agree with ``tokenizers`` on the test's texts
(tests/listening/test_whisper_tokens.py).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import Path

# GPT-2's pre-tokenizer: \p{L} as [^\W\d_], \p{N} as \d
_PIECES = re.compile(
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+"""
)
_SPECIAL = re.compile(r"<\|[^|]*\|>")


@functools.cache
def _byte_chars() -> tuple[str, ...]:
    """GPT-2's printable stand-in for each byte (``bytes_to_unicode``): printable Latin-1 stands
    for itself, the others are shifted past 255."""
    kept = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    kept += range(ord("®"), ord("ÿ") + 1)
    chars: list[str] = []
    shift = 0
    for b in range(256):
        if b in kept:
            chars.append(chr(b))
        else:
            chars.append(chr(256 + shift))
            shift += 1
    return tuple(chars)


class WhisperTokens:
    """Token ids ↔ text for one vocabulary (ids in order). Read-only after construction, so any
    thread may use it."""

    def __init__(self, vocabulary: Iterable[str]) -> None:
        self._tokens = list(vocabulary)
        self._ids = {t: i for i, t in enumerate(self._tokens)}
        chars = _byte_chars()
        self._eot = self._ids.get("<|endoftext|>", len(self._tokens))
        # every ordinary token by its bytes: its id is its merge's rank
        self._to_latin1 = str.maketrans({c: chr(b) for b, c in enumerate(chars)})
        self._ranks: dict[bytes, int] = {}
        for ident, token in enumerate(self._tokens[: self._eot]):
            try:
                self._ranks[token.translate(self._to_latin1).encode("latin-1")] = ident
            except UnicodeEncodeError:  # not byte-level text: never made by a merge
                continue

    @classmethod
    def from_model(cls, path: Path) -> WhisperTokens:
        """The tokenizer of the CTranslate2 model directory ``path`` (its ``vocabulary.txt``;
        OSError when it cannot be read, ValueError when it is not Whisper's)."""
        text = (path / "vocabulary.txt").read_text(encoding="utf-8")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        tokens = cls(lines)
        if tokens.token_to_id("<|endoftext|>") is None or len(lines) < 257:
            raise ValueError(f"{path / 'vocabulary.txt'} is not a Whisper vocabulary")
        return tokens

    def __len__(self) -> int:
        return len(self._tokens)

    def token_to_id(self, token: str) -> int | None:
        return self._ids.get(token)

    def id_to_token(self, ident: int) -> str | None:
        return self._tokens[ident] if 0 <= ident < len(self._tokens) else None

    def encode(self, text: str) -> list[int]:
        """``text``'s token ids (no special tokens are added, none are read in the text)."""
        ids: list[int] = []
        for piece in _PIECES.findall(text):
            ids += self._merged(piece.encode("utf-8"))
        return ids

    def decode(self, ids: Iterable[int]) -> str:
        """The text of ``ids``; special tokens (``<|…|>`` from ``<|endoftext|>`` on) are left
        out, and bytes that are not UTF-8 become U+FFFD."""
        kept = []
        for ident in ids:
            token = self.id_to_token(ident)
            if token is None or (ident >= self._eot and _SPECIAL.fullmatch(token)):
                continue
            kept.append(token)
        data = "".join(kept).translate(self._to_latin1).encode("latin-1", errors="replace")
        return data.decode("utf-8", errors="replace")

    def _merged(self, data: bytes) -> list[int]:
        """Byte-pair encoding of one piece: the lowest-ranked adjacent pair merges first."""
        if data in self._ranks:
            return [self._ranks[data]]
        parts = [data[i : i + 1] for i in range(len(data))]
        while len(parts) > 1:
            ranked = [
                (rank, i)
                for i in range(len(parts) - 1)
                if (rank := self._ranks.get(parts[i] + parts[i + 1])) is not None
            ]
            if not ranked:
                break
            _, i = min(ranked)
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        return [self._ranks[p] for p in parts]
