"""The servo board's wire format: encode, decode from a stream, resync, reject bad packets."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from anima.drivers.serial_protocol import (
    START,
    PacketDecoder,
    crc8,
    encode,
    pack,
    packet_len,
    to_bytes,
)
from anima.errors import NonFiniteValueError

pytestmark = pytest.mark.fast


def test_crc8_is_crc8_smbus() -> None:
    assert crc8(b"123456789") == 0xF4  # the catalogue check value of CRC-8/SMBUS
    assert crc8(b"") == 0


def test_packet_layout() -> None:
    packet = encode([1, 2, 250])
    assert packet[:2] == START == b"\xff\xff"
    assert packet[2] == 3
    assert packet[3:6] == bytes([1, 2, 250])
    assert packet[6] == crc8(bytes([3, 1, 2, 250]))
    assert len(packet) == packet_len(3) == 7


def test_roundtrip() -> None:
    values = [170.0, 128.0, 0.0, 255.0, 30.2]
    decoder = PacketDecoder(channels=5)
    assert decoder.feed(encode(values)) == [bytes([170, 128, 0, 255, 30])]
    assert (decoder.packets, decoder.bad, decoder.discarded, decoder.pending) == (1, 0, 0, 0)


def test_rounds_to_nearest_and_clamps_to_a_byte() -> None:
    got = to_bytes([-5.0, 0.4, 0.6, 127.5, 128.5, 254.6, 300.0])
    assert got.tolist() == [0, 0, 1, 128, 128, 255, 255]  # ties go to even (IEEE rounding)
    assert list(encode([-1.0, 256.0, 99.5])[3:6]) == [0, 255, 100]


def test_non_finite_values_are_refused() -> None:
    with pytest.raises(NonFiniteValueError, match="nan"):
        encode([1.0, math.nan])
    with pytest.raises(NonFiniteValueError):
        to_bytes([math.inf])


@pytest.mark.parametrize("n", [0, 256])
def test_channel_count_must_fit_one_byte(n: int) -> None:
    with pytest.raises(ValueError, match=r"1\.\.255"):
        pack(bytes(n))


def test_packets_split_across_reads() -> None:
    stream = encode([10, 20, 30]) + encode([40, 50, 60])
    decoder = PacketDecoder()
    got = []
    for i in range(len(stream)):  # one byte at a time
        got += decoder.feed(stream[i : i + 1])
    assert got == [bytes([10, 20, 30]), bytes([40, 50, 60])]
    assert decoder.bad == 0


def test_resyncs_after_garbage() -> None:
    decoder = PacketDecoder(channels=3)
    garbage = bytes([0x00, 0x12, 0xFF, 0x34, 0xFF, 0xFF, 0x09, 0x01])
    got = decoder.feed(garbage + encode([1, 2, 3]) + b"\x55\xaa" + encode([4, 5, 6]))
    assert got == [bytes([1, 2, 3]), bytes([4, 5, 6])]
    assert decoder.discarded > 0


def test_resyncs_after_a_packet_cut_short() -> None:
    # a write that timed out mid-packet: the next packet starts inside the cut one
    whole = encode([7, 8, 9, 10])
    decoder = PacketDecoder(channels=4)
    assert decoder.feed(whole[:4] + whole) == [bytes([7, 8, 9, 10])]
    assert decoder.bad_checksum == 1


def test_bad_checksum_is_rejected_and_counted() -> None:
    good = encode([100, 101, 102])
    corrupt = bytearray(good)
    corrupt[4] ^= 0x01  # one flipped bit in a value
    decoder = PacketDecoder()
    assert decoder.feed(bytes(corrupt) + good) == [bytes([100, 101, 102])]
    assert decoder.bad_checksum == 1
    assert decoder.packets == 1


def test_swapped_values_are_caught() -> None:
    # the case a plain byte sum cannot see: neck yaw and pitch trading places
    packet = bytearray(encode([128, 90, 160]))
    packet[4], packet[5] = packet[5], packet[4]
    decoder = PacketDecoder()
    assert decoder.feed(bytes(packet)) == []
    assert decoder.bad_checksum == 1


def test_wrong_channel_count_is_rejected() -> None:
    decoder = PacketDecoder(channels=3)
    assert decoder.feed(encode([1, 2]) + encode([1, 2, 3])) == [bytes([1, 2, 3])]
    assert decoder.bad_count == 1


def test_checksum_of_0xff_before_the_next_marker() -> None:
    # find a packet whose CRC is 0xFF, so the stream reads FF FF FF ... at the boundary
    values = next([v, 7] for v in range(256) if encode([v, 7])[-1] == 0xFF)
    stream = encode(values) * 3
    decoder = PacketDecoder()
    assert decoder.feed(stream) == [bytes(values)] * 3
    assert decoder.bad == 0


@given(
    st.lists(
        st.lists(st.floats(-50, 300, allow_nan=False), min_size=1, max_size=40),
        min_size=1,
        max_size=8,
    ),
    st.binary(max_size=64).map(lambda b: b.replace(b"\xff", b"")),  # garbage without a marker
    st.integers(1, 16),
)
def test_roundtrip_property(frames: list[list[float]], garbage: bytes, chunk: int) -> None:
    """Whatever the split into reads, after leading garbage every packet comes back in order
    as its rounded, clamped values, and only the garbage is discarded."""
    data = garbage + b"".join(encode(f) for f in frames)
    decoder = PacketDecoder()
    got: list[bytes] = []
    for i in range(0, len(data), chunk):
        got += decoder.feed(data[i : i + chunk])
    assert got == [to_bytes(f).astype(np.uint8).tobytes() for f in frames]
    assert (decoder.bad, decoder.discarded, decoder.pending) == (0, len(garbage), 0)
