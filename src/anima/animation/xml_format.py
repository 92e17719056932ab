"""Nadine's XML animation format (the wire format only: parse and validate, no playback).

::

    <animation frame_ms="30">                   <!-- frame_ms is optional; default 30 -->
      <animation_name>nod</animation_name>      <!-- the lookup key; the file name is not -->
      <channel9>128 140 152 140 128</channel9>  <!-- 1-based, integers 0–255, one a frame -->
    </animation>

A channel element present in the file is *used* by the animation. Channels may have different
frame counts: a shorter one holds its last value. A file whose channels all have exactly one
frame is a *posture*. The format is documented in ``docs/animations.md``.

Parsing is incremental (the file is fed to expat in 64 KiB pieces and each piece's values are
converted as they come) so that no single call holds the GIL for long: a reload runs on its own
thread while the 100 Hz motion loop keeps its deadlines. A file is bounded in size
(:data:`MAX_FILE_BYTES`), each channel in frames (:data:`MAX_FRAMES`) and the whole animation in
values (:data:`MAX_VALUES`); past a bound the file is refused, naming the bound.
"""

from __future__ import annotations

import errno
import math
import re
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from anima.body import FloatArray
from anima.config.files import CHUNK, FileRefusedError, excerpt, read_regular_file, utf8_chunks
from anima.errors import AnimationFileError

DEFAULT_FRAME_MS = 30.0  # Nadine's motion loop ran one frame every 30 ms
MAX_FILE_BYTES = 8 * 1024 * 1024  # a file over this is refused before it is read
MAX_FRAMES = 100_000  # per channel: 50 minutes at 30 ms a frame
MAX_VALUES = 2_000_000  # frames × channels once padded: 16 MB of float64 at most
MAX_NAME = 200  # characters of <animation_name>
_CHANNEL = re.compile(r"^channel([0-9]+)$")
_KNOWN_ATTRS = {"frame_ms"}


@dataclass(frozen=True, eq=False)
class Animation:
    """One parsed animation: channel numbers (1-based) and a (frames × channels) array."""

    name: str
    channels: tuple[int, ...]  # 1-based channel numbers, ascending
    frames: FloatArray  # shape (frame count, len(channels)); shorter channels padded by holding
    lengths: tuple[int, ...]  # each channel's own frame count, as authored
    frame_period: float  # seconds per frame
    source: str  # the file it came from

    @property
    def is_posture(self) -> bool:
        return all(n == 1 for n in self.lengths)

    @property
    def frame_count(self) -> int:
        return int(self.frames.shape[0])

    @property
    def duration(self) -> float:
        return (self.frame_count - 1) * self.frame_period

    def values(self) -> dict[int, float]:
        """A posture's values: 1-based channel → value (the first frame of any animation)."""
        return {c: float(v) for c, v in zip(self.channels, self.frames[0], strict=True)}


def parse_animation_file(path: str | Path, channel_count: int) -> Animation:
    """Read and validate one XML file; errors name the file and the element.

    Only a regular file of at most :data:`MAX_FILE_BYTES` is read: a FIFO, a directory or a
    link to a device is refused without being opened for a blocking read.
    """
    p = Path(path)
    try:
        data = read_regular_file(p, MAX_FILE_BYTES)
    except FileRefusedError as exc:
        raise AnimationFileError(str(p), None, exc.reason) from None
    except OSError as exc:
        if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOMEM):
            raise  # the process's want, not the file's fault: the whole load fails
        raise AnimationFileError(str(p), None, f"cannot read: {exc.strerror or exc}") from None
    return parse_animation(data, channel_count, source=str(p))


def parse_animation(text: str | bytes, channel_count: int, source: str = "<string>") -> Animation:
    """Parse XML text (``bytes`` must be UTF-8); raises :class:`AnimationFileError`."""
    if len(text) > MAX_FILE_BYTES:
        unit = "bytes" if isinstance(text, bytes) else "characters"
        raise AnimationFileError(
            source, None, f"{len(text)} {unit} is over the limit of {MAX_FILE_BYTES}"
        )
    if not text.strip():  # stops at the first non-blank character at each end
        raise AnimationFileError(source, None, "empty file")
    pieces: Iterable[str]
    if isinstance(text, bytes):
        pieces = utf8_chunks(text)
    else:
        pieces = (text[i : i + CHUNK] for i in range(0, len(text), CHUNK))
    builder = _Builder(channel_count, source)
    parser = ET.XMLParser(target=builder)
    try:
        for piece in pieces:
            parser.feed(piece)
            # let a waiting thread (the motion loop) take the GIL now, rather than after the
            # interpreter's 5 ms switch interval: a tick is 10 ms
            time.sleep(0)
        parser.close()
    except FileRefusedError as exc:
        raise AnimationFileError(source, None, exc.reason) from None
    except ET.ParseError as exc:
        raise AnimationFileError(source, None, f"not well-formed XML: {exc}") from None
    return builder.finish()


class _Builder:
    """An ElementTree parser target: checks elements as they open and converts values as they
    arrive, so memory and time stay proportional to the values (bounded), never to the text."""

    def __init__(self, channel_count: int, source: str) -> None:
        self.channel_count = channel_count
        self.source = source
        self._depth = 0
        self._period = DEFAULT_FRAME_MS / 1000.0
        self._name: str | None = None
        self._name_text: list[str] | None = None  # while inside <animation_name>
        self._channel: int | None = None  # while inside <channelN>
        self._tag = ""
        self._carry = ""  # a number cut in two by the end of a piece of text
        self._parts: list[NDArray[np.int64]] = []
        self._count = 0
        self._tracks: dict[int, NDArray[np.int64]] = {}

    def _error(self, element: str | None, reason: str) -> AnimationFileError:
        return AnimationFileError(self.source, element, reason)

    # --- the target protocol of xml.etree.ElementTree.XMLParser -----------------------------
    def start(self, tag: str, attrib: Mapping[str, str]) -> None:
        self._depth += 1
        shown = _short_tag(tag)
        if self._depth == 1:
            if tag != "animation":
                raise self._error(shown, "the root element must be <animation>")
            self._period = _frame_period(attrib, self.source)
            return
        if self._depth > 2:
            raise self._error(shown, f"unexpected element inside <{self._tag}>")
        self._tag = shown
        if tag == "animation_name":
            if self._name is not None:
                raise self._error(tag, "more than one <animation_name>")
            self._name_text = []
            return
        m = _CHANNEL.match(tag)
        if m is None:
            raise self._error(shown, "unknown element (expected <animation_name> or <channelN>)")
        digits = m.group(1)
        number = int(digits) if len(digits) <= 6 else 10**6
        if not 1 <= number <= self.channel_count:
            raise self._error(
                shown,
                f"channel {excerpt(number, 12)} is beyond the body's {self.channel_count} channels",
            )
        if number in self._tracks:
            raise self._error(shown, "channel given twice")
        self._channel = number
        self._parts = []
        self._count = 0
        self._carry = ""

    def data(self, text: str) -> None:
        if self._name_text is not None:
            self._name_text.append(text)
            if sum(map(len, self._name_text)) > 4 * MAX_NAME:
                raise self._error("animation_name", f"longer than {MAX_NAME} characters")
        elif self._channel is not None:
            text = self._carry + text
            words = text.split()
            self._carry = ""
            if words and not text[-1].isspace():
                self._carry = words.pop()  # may go on in the next piece
                if len(self._carry) > 64:
                    raise self._error(
                        self._tag, f"frame {self._count + len(words) + 1}: a 64+ character word"
                    )
            self._add(words)

    def end(self, tag: str) -> None:
        self._depth -= 1
        if self._depth != 1:
            return
        if self._name_text is not None:
            name = "".join(self._name_text).strip()
            self._name_text = None
            if not name:
                raise self._error(tag, "empty animation name")
            if len(name) > MAX_NAME:
                raise self._error(tag, f"longer than {MAX_NAME} characters")
            self._name = name
        elif self._channel is not None:
            if self._carry:
                self._add([self._carry])
                self._carry = ""
            if not self._count:
                raise self._error(self._tag, "no values")
            track = self._parts[0] if len(self._parts) == 1 else np.concatenate(self._parts)
            self._tracks[self._channel] = track
            self._channel = None
            self._parts = []

    def close(self) -> None:
        return None

    # --- values and the result ---------------------------------------------------------------
    def _add(self, words: list[str]) -> None:
        if not words:
            return
        first = self._count + 1  # frame number of words[0], 1-based as in messages
        if self._count + len(words) > MAX_FRAMES:
            raise self._error(
                self._tag, f"more than {MAX_FRAMES} frames (the limit of one channel)"
            )
        try:
            values = np.fromiter(map(int, words), dtype=np.int64, count=len(words))
        except (ValueError, OverflowError):
            values = self._slow(words, first)  # names the word that is not an integer
        bad = (values < 0) | (values > 255)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise self._error(self._tag, f"frame {first + i}: {values[i]} is outside 0–255")
        self._parts.append(values)
        self._count += len(words)

    def _slow(self, words: list[str], first: int) -> NDArray[np.int64]:
        out = np.empty(len(words), dtype=np.int64)
        for i, word in enumerate(words):
            try:
                value = int(word)
            except ValueError:
                raise self._error(
                    self._tag, f"frame {first + i}: {excerpt(word, 24)} is not an integer"
                ) from None
            if not 0 <= value <= 255:
                raise self._error(
                    self._tag, f"frame {first + i}: {excerpt(value, 24)} is outside 0–255"
                )
            out[i] = value
        return out

    def finish(self) -> Animation:
        source = self.source
        if self._name is None:
            raise AnimationFileError(source, "animation", "missing <animation_name>")
        if not self._tracks:
            raise AnimationFileError(source, "animation", "no <channelN> elements: nothing to play")
        channels = tuple(sorted(self._tracks))
        lengths = tuple(len(self._tracks[c]) for c in channels)
        count = max(lengths)
        if count * len(channels) > MAX_VALUES:
            raise AnimationFileError(
                source,
                "animation",
                f"{count} frames × {len(channels)} channels is over the limit of "
                f"{MAX_VALUES} values",
            )
        frames = np.empty((count, len(channels)), dtype=np.float64)
        for j, c in enumerate(channels):
            track = self._tracks[c]
            frames[: len(track), j] = track
            frames[len(track) :, j] = track[-1]
        frames.setflags(write=False)  # shared by every play of the animation
        return Animation(
            name=self._name,
            channels=channels,
            frames=frames,
            lengths=lengths,
            frame_period=self._period,
            source=source,
        )


def _short_tag(tag: str) -> str:
    return tag if len(tag) <= 40 else tag[:39] + "…"


def _frame_period(attrib: Mapping[str, str], source: str) -> float:
    unknown = set(attrib) - _KNOWN_ATTRS
    if unknown:
        attr = sorted(unknown)[0]
        raise AnimationFileError(source, "animation", f"unknown attribute {excerpt(attr)}")
    raw = attrib.get("frame_ms")
    if raw is None:
        return DEFAULT_FRAME_MS / 1000.0
    try:
        ms = float(raw)
    except ValueError:
        raise AnimationFileError(
            source, "animation", f"frame_ms {excerpt(raw)} is not a number"
        ) from None
    if not (math.isfinite(ms) and 1.0 <= ms <= 10_000.0):
        raise AnimationFileError(
            source, "animation", f"frame_ms must be in [1, 10000], got {excerpt(raw)[1:-1]}"
        )
    return ms / 1000.0
