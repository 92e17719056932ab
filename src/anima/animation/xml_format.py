"""Nadine's XML animation format (the wire format only: parse and validate, no playback).

::

    <animation frame_ms="30">                   <!-- frame_ms is optional; default 30 -->
      <animation_name>nod</animation_name>      <!-- the lookup key; the file name is not -->
      <channel9>128 140 152 140 128</channel9>  <!-- 1-based, integers 0–255, one a frame -->
    </animation>

A channel element present in the file is *used* by the animation. Channels may have different
frame counts: a shorter one holds its last value. A file whose channels all have exactly one
frame is a *posture*. The format is documented in ``docs/animations.md``.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from anima.body import FloatArray
from anima.errors import AnimationFileError

DEFAULT_FRAME_MS = 30.0  # Nadine's motion loop ran one frame every 30 ms
_CHANNEL = re.compile(r"^channel(\d+)$")
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
    """Read and validate one XML file; errors name the file and the element."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AnimationFileError(str(p), None, f"cannot read: {exc}") from exc
    return parse_animation(text, channel_count, source=str(p))


def parse_animation(text: str, channel_count: int, source: str = "<string>") -> Animation:
    if not text.strip():
        raise AnimationFileError(source, None, "empty file")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise AnimationFileError(source, None, f"not well-formed XML: {exc}") from None
    if root.tag != "animation":
        raise AnimationFileError(source, root.tag, "the root element must be <animation>")
    period = _frame_period(root, source)
    name: str | None = None
    tracks: dict[int, list[float]] = {}
    for el in root:
        if el.tag == "animation_name":
            if name is not None:
                raise AnimationFileError(source, el.tag, "more than one <animation_name>")
            name = (el.text or "").strip()
            if not name:
                raise AnimationFileError(source, el.tag, "empty animation name")
            continue
        m = _CHANNEL.match(el.tag)
        if m is None:
            raise AnimationFileError(
                source, el.tag, "unknown element (expected <animation_name> or <channelN>)"
            )
        number = int(m.group(1))
        if not 1 <= number <= channel_count:
            raise AnimationFileError(
                source, el.tag, f"channel {number} is beyond the body's {channel_count} channels"
            )
        if number in tracks:
            raise AnimationFileError(source, el.tag, "channel given twice")
        tracks[number] = _values(el, source)
    if name is None:
        raise AnimationFileError(source, "animation", "missing <animation_name>")
    if not tracks:
        raise AnimationFileError(source, "animation", "no <channelN> elements: nothing to play")
    channels = tuple(sorted(tracks))
    lengths = tuple(len(tracks[c]) for c in channels)
    frames = np.empty((max(lengths), len(channels)), dtype=np.float64)
    for j, c in enumerate(channels):
        track = tracks[c]
        frames[: len(track), j] = track
        frames[len(track) :, j] = track[-1]
    return Animation(
        name=name,
        channels=channels,
        frames=frames,
        lengths=lengths,
        frame_period=period,
        source=source,
    )


def _frame_period(root: ET.Element, source: str) -> float:
    unknown = set(root.attrib) - _KNOWN_ATTRS
    if unknown:
        attr = sorted(unknown)[0]
        raise AnimationFileError(source, "animation", f"unknown attribute {attr!r}")
    raw = root.attrib.get("frame_ms")
    if raw is None:
        return DEFAULT_FRAME_MS / 1000.0
    try:
        ms = float(raw)
    except ValueError:
        raise AnimationFileError(source, "animation", f"frame_ms {raw!r} is not a number") from None
    if not (math.isfinite(ms) and 1.0 <= ms <= 10_000.0):
        raise AnimationFileError(source, "animation", f"frame_ms must be in [1, 10000], got {raw}")
    return ms / 1000.0


def _values(el: ET.Element, source: str) -> list[float]:
    words = (el.text or "").split()
    if not words:
        raise AnimationFileError(source, el.tag, "no values")
    values: list[float] = []
    for i, word in enumerate(words, start=1):
        try:
            v = int(word)
        except ValueError:
            raise AnimationFileError(
                source, el.tag, f"frame {i}: {word!r} is not an integer"
            ) from None
        if not 0 <= v <= 255:
            raise AnimationFileError(source, el.tag, f"frame {i}: {v} is outside 0–255")
        values.append(float(v))
    return values
