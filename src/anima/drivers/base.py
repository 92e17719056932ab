"""The one small protocol every robot driver implements, and the frame it is sent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from anima.body import FloatArray


@dataclass(frozen=True, slots=True)
class Frame:
    """One tick's command: a value per channel (the body's units) at time ``t`` (engine clock)."""

    t: float
    values: FloatArray


@runtime_checkable
class Driver(Protocol):
    """A robot (simulated, serial servo board, humanoid over gRPC).

    Constructors touch nothing; ``connect()`` opens ports or sockets. Only the motion engine
    calls ``send``, once per tick, from its own thread.
    """

    @property
    def is_connected(self) -> bool: ...

    def connect(self) -> None: ...

    def disconnect(self) -> None: ...

    def send(self, frame: Frame) -> Frame:
        """Send one frame; return the frame actually sent (after any device-side limiting)."""
        ...


@dataclass(frozen=True, kw_only=True)
class LinkCounters:
    """What a driver's link did since it was made (the counters a driver keeps)."""

    sent: int = 0
    dropped: int = 0  # frames not delivered: link lost, or a write timed out
    timeouts: int = 0  # writes that timed out (a serial board)
    losses: int = 0  # times the link was lost
    reconnects: int = 0
    error: str = ""  # the last one


@runtime_checkable
class Counting(Protocol):
    """A driver that counts what its link did."""

    def link_counters(self) -> LinkCounters: ...
