"""The servo board's wire format: one packet per frame, and a streaming decoder. No I/O here.

Packet layout (``docs/serial-protocol.md`` has the full table)::

    offset  size  field
    0       2     start marker  0xFF 0xFF
    2       1     N             channel count, 1..255
    3       N     values        one byte per channel, 0..255 (rounded, clamped)
    3+N     1     CRC-8         over N and the values (polynomial 0x07, init 0, no reflection)

Why these choices:

- **0xFF 0xFF marker**: no channel of the shipped Nadine body goes above 225, so the marker never
  appears inside a packet there; on bodies that do send 255, the count and CRC still reject a
  false start and the decoder resyncs one byte further on.
- **CRC-8 (CRC-8/SMBUS), not a byte sum**: a sum cannot see two values swapped (neck yaw and
  pitch trading places sums the same) nor errors that cancel; CRC-8 catches every single-bit
  error, every odd number of flipped bits, every burst up to 8 bits, and nearly all swaps. On the
  board it is a 256-byte table or eight shifts per byte.
- **The count is covered by the CRC**, so a corrupted count cannot make a wrong-length packet
  pass.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from anima.body import FloatArray
from anima.errors import NonFiniteValueError

START = b"\xff\xff"
HEADER_LEN = len(START) + 1  # marker + count
MAX_CHANNELS = 255  # the count is one byte
CRC8_POLY = 0x07  # x^8 + x^2 + x + 1 (CRC-8/SMBUS)


def _crc8_table() -> bytes:
    table = bytearray(256)
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = ((crc << 1) ^ CRC8_POLY) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
        table[byte] = crc
    return bytes(table)


_CRC8 = _crc8_table()


def crc8(data: bytes | bytearray | memoryview) -> int:
    """CRC-8/SMBUS of ``data`` (check value: ``crc8(b"123456789") == 0xF4``)."""
    crc = 0
    table = _CRC8
    for byte in data:
        crc = table[crc ^ byte]
    return crc


def packet_len(channels: int) -> int:
    """Bytes on the wire for a frame of ``channels`` values."""
    return HEADER_LEN + channels + 1


def to_bytes(values: Sequence[float] | FloatArray) -> FloatArray:
    """Values as the board will see them: rounded to nearest (ties to even), clamped to 0..255.

    Raises :class:`NonFiniteValueError` for NaN or ±inf: there is no honest byte for those.
    """
    arr = np.asarray(values, dtype=np.float64)
    if not np.isfinite(arr).all():
        bad = next(v for v in arr.tolist() if not math.isfinite(v))
        raise NonFiniteValueError(f"serial packet: value {bad!r} is not finite")
    return np.clip(np.rint(arr), 0.0, 255.0)


def pack(payload: bytes) -> bytes:
    """One packet around ``payload``, the channel values already as bytes (1..255 of them)."""
    n = len(payload)
    if not 1 <= n <= MAX_CHANNELS:
        raise ValueError(f"serial packet: {n} channels; a packet carries 1..{MAX_CHANNELS}")
    body = bytes((n,)) + payload
    return START + body + bytes((crc8(body),))


def encode(values: Sequence[float] | FloatArray) -> bytes:
    """One packet carrying ``values`` (1..255 channels), rounded and clamped as :func:`to_bytes`."""
    return pack(to_bytes(values).astype(np.uint8).tobytes())


class PacketDecoder:
    """Finds packets in a byte stream that may start mid-packet or carry garbage.

    :meth:`feed` takes whatever bytes arrived and returns the payloads (one byte per channel) of
    every complete, valid packet, in order. A candidate whose CRC fails (or whose count is not
    ``channels``, when given) is counted and skipped by one byte only, so a real packet that
    began inside it is still found.
    """

    def __init__(self, *, channels: int | None = None) -> None:
        if channels is not None and not 1 <= channels <= MAX_CHANNELS:
            raise ValueError(f"channels must be in 1..{MAX_CHANNELS}, got {channels}")
        self.channels = channels
        self._buf = bytearray()
        self.packets = 0  # valid packets decoded
        self.bad_checksum = 0  # candidates whose CRC did not match
        self.bad_count = 0  # candidates whose channel count was not the expected one
        self.discarded = 0  # bytes skipped while looking for a start marker

    @property
    def bad(self) -> int:
        """Rejected packets of any kind."""
        return self.bad_checksum + self.bad_count

    @property
    def pending(self) -> int:
        """Bytes held back waiting for the rest of a packet."""
        return len(self._buf)

    def feed(self, data: bytes | bytearray | memoryview) -> list[bytes]:
        buf = self._buf
        buf += data
        out: list[bytes] = []
        pos = 0
        while True:
            start = buf.find(START, pos)
            if start < 0:
                # keep a trailing 0xFF: it may be the first half of the next marker
                keep = 1 if len(buf) > pos and buf[-1] == START[0] else 0
                self.discarded += len(buf) - pos - keep
                pos = len(buf) - keep
                break
            self.discarded += start - pos
            pos = start
            if len(buf) - pos < HEADER_LEN:
                break
            n = buf[pos + 2]
            if n == 0 or (self.channels is not None and n != self.channels):
                self.bad_count += 1
                pos += 1
                continue
            end = pos + packet_len(n)
            if len(buf) < end:
                break
            body = memoryview(buf)[pos + 2 : end - 1]
            ok = crc8(body) == buf[end - 1]
            payload = bytes(body[1:]) if ok else b""
            body.release()
            if ok:
                out.append(payload)
                self.packets += 1
                pos = end
            else:
                self.bad_checksum += 1
                pos += 1
        del buf[:pos]
        return out
