"""The Adam humanoid over gRPC: the adam_control proto, a simulated humanoid that serves it, and
a client that queries the robot before it commands it.

- :class:`SimulatedAdam` (``fsm``): the robot control program's FSM, pure logic on a clock;
- :class:`AdamServer` / :func:`serve` (``server``): it, served as ``adam_control.RobotControl``;
- :class:`AdamClient` (``client``): drives a real or simulated Adam.

The gRPC parts need the ``grpc`` extra (``pip install 'anima[grpc]'``) and are imported on first
use; the FSM does not need it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from anima.errors import MissingDependencyError
from anima.humanoid.fsm import SimulatedAdam
from anima.humanoid.spec import Reply, RobotState, StandLists

if TYPE_CHECKING:
    from anima.humanoid.client import AdamClient
    from anima.humanoid.server import AdamServer, serve

_LAZY = {
    "AdamClient": "anima.humanoid.client",
    "AdamServer": "anima.humanoid.server",
    "serve": "anima.humanoid.server",
}

__all__ = [
    "AdamClient",
    "AdamServer",
    "Reply",
    "RobotState",
    "SimulatedAdam",
    "StandLists",
    "serve",
]


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'anima.humanoid' has no attribute {name!r}")
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError as exc:
        if exc.name and exc.name.split(".")[0] in {"grpc", "google", "grpc_health"}:
            raise MissingDependencyError(exc.name, "grpc") from exc
        raise
