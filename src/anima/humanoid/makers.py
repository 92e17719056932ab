"""What links to each humanoid (named in :data:`anima.humanoid.registry.HUMANOIDS`):
(humanoid config, the runtime's clock) → (the connected client, the server started for it or
None)."""

from __future__ import annotations

from anima.clock import Clock
from anima.config import HumanoidConfig
from anima.humanoid.client import AdamClient
from anima.humanoid.server import AdamServer


def serve_sim(
    config: HumanoidConfig, clock: Clock | None = None
) -> tuple[AdamClient, AdamServer | None]:
    """The simulated Adam served on loopback (``humanoid.sim_port``), and a client to it; it
    lives on the runtime's ``clock`` (a test's fake one too: its modes take fake seconds)."""
    server = AdamServer(bind="127.0.0.1", port=config.sim_port, clock=clock)
    port = server.start()
    client = AdamClient("127.0.0.1", port)
    try:
        client.connect()
    except BaseException:
        client.close()
        server.stop()
        raise
    return client, server


def connect_adam(
    config: HumanoidConfig, clock: Clock | None = None
) -> tuple[AdamClient, AdamServer | None]:
    """A real Adam at ``humanoid.address`` (None: its ip_config.json, else 127.0.0.1:6666); a
    real robot keeps its own time (``clock`` is not used)."""
    ip, port = None, None
    if config.address:
        host, _, p = config.address.rpartition(":")
        ip, port = host, int(p)
    client = AdamClient(ip, port)
    client.connect()
    return client, None
