"""The humanoids' names (``humanoid.type``, but ``none``) and what links to each, imported only
when the link starts.

A maker takes the humanoid section and returns the connected :class:`~anima.humanoid.client.
AdamClient` the link drives (one protocol for every humanoid: ``adam_control.RobotControl``
over gRPC) and the server it started, if any: ``sim`` serves the simulated Adam on loopback
first, ``adam`` reaches a real one.
"""

from __future__ import annotations

from anima.registry import Registry

HUMANOIDS = Registry(
    "humanoid.type",
    {
        "sim": "anima.humanoid.makers:serve_sim",
        "adam": "anima.humanoid.makers:connect_adam",
    },
)
