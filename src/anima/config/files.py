"""Reading the files anima is configured with (YAML, ``checker.ini``, XML animations) safely.

A path in a folder or a config key may name anything: a FIFO (``open`` would block until a
writer comes, and the runtime would hang before its first tick, deaf to SIGTERM), a directory,
a link to ``/dev/zero`` (never ends), a huge file, or text that is not UTF-8. Only regular
files are read, never more than a bound, and decoding errors name the line.
"""

from __future__ import annotations

import codecs
import os
import reprlib
import stat
from collections.abc import Iterator
from pathlib import Path

CHUNK = 16 * 1024  # decode and parse in pieces this big: no single call holds the GIL long
_BOMS: tuple[tuple[bytes, str], ...] = (  # UTF-32 first: its LE mark begins with UTF-16's
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


class FileRefusedError(Exception):
    """Internal: why a file is not read; callers wrap ``reason`` in their own AnimaError."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason if line is None else f"line {line}: {reason}")
        self.reason = str(self)  # with the line, for callers that keep no line of their own
        self.bare = reason  # without it, for callers that put the line in their own format
        self.line = line


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _size(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MiB" if n >= 1024 * 1024 else f"{n} bytes"


def read_regular_file(path: str | Path, limit: int) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most ``limit`` bytes.

    Raises :class:`FileRefusedError` (not a regular file, too big) or ``OSError`` (missing,
    no permission). Links are followed: a link to a regular file is fine, to a device is not.
    """
    mode = os.stat(path).st_mode
    if not stat.S_ISREG(mode):
        raise FileRefusedError(f"{_kind(mode)}, not a regular file: not read")
    # O_NONBLOCK: should the path become a FIFO between stat and open, open returns at once
    # and the fstat below refuses it instead of blocking until a writer comes
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefusedError(f"{_kind(info.st_mode)}, not a regular file: not read")
        if info.st_size > limit:
            raise FileRefusedError(f"{_size(info.st_size)} is over the limit of {_size(limit)}")
        parts: list[bytes] = []
        total = 0
        while total <= limit:  # the file may grow while we read: never past the limit
            part = os.read(fd, min(1024 * 1024, limit + 1 - total))
            if not part:
                break
            parts.append(part)
            total += len(part)
        if total > limit:
            raise FileRefusedError(f"grew past the limit of {_size(limit)} while being read")
        return b"".join(parts)
    finally:
        os.close(fd)


def utf8_chunks(data: bytes, chunk: int = CHUNK) -> Iterator[str]:
    """Decode UTF-8 ``data`` (an optional BOM is dropped) in pieces of about ``chunk`` bytes.

    Raises :class:`FileRefusedError` naming the line of the first byte that is not UTF-8, or
    the encoding a BOM says the file is in.
    """
    for bom, name in _BOMS:
        if data.startswith(bom):
            raise FileRefusedError(f"the file is {name} text: save it as UTF-8")
    start = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    for offset in range(start, max(len(data), start + 1), chunk):
        piece = data[offset : offset + chunk]
        try:
            yield decoder.decode(piece, final=offset + chunk >= len(data))
        except UnicodeDecodeError as exc:
            at = offset + exc.start - len(decoder.getstate()[0])
            line = data.count(b"\n", 0, max(at, 0)) + 1
            bad = data[max(at, 0) : max(at, 0) + 1].hex()
            raise FileRefusedError(
                f"not UTF-8 text (byte 0x{bad} at offset {at}): save it as UTF-8", line
            ) from None


def read_text(path: str | Path, limit: int) -> str:
    """A regular UTF-8 text file of at most ``limit`` bytes (see :func:`read_regular_file`)."""
    return "".join(utf8_chunks(read_regular_file(path, limit)))


class _Short(reprlib.Repr):
    """``repr`` cut short at every level, never building the whole text of a huge value."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.maxlevel = 2
        self.maxstring = self.maxother = self.maxlong = limit
        self.maxlist = self.maxtuple = self.maxdict = self.maxset = 4

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 4 * self.maxlong:  # str() of a huge int is slow, then refused
            return f"<an integer of {x.bit_length()} bits>"
        return super().repr_int(x, level)


def excerpt(value: object, limit: int = 40) -> str:
    """``repr(value)`` cut to about ``limit`` characters: error messages stay one short line."""
    text = _Short(limit).repr(value)
    return text if len(text) <= 2 * limit else text[: 2 * limit - 1] + "…"
