"""The runtime's link to a humanoid: a client, the simulated Adam when asked, its state.

``humanoid.type: sim`` serves the simulated Adam on loopback inside the runtime (what
``anima serve --humanoid sim`` does); ``adam`` connects to a real robot. Either way every
humanoid command (:data:`~anima.commands.HumanoidCommand`, from a front door or the agent) comes
through :meth:`Runtime.execute <anima.runtime.Runtime.execute>` to :meth:`HumanoidLink.request`,
and its mode, posture and velocity are read a few times a second into :attr:`HumanoidLink.state`
for the runtime's state.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from anima import commands as cmd
from anima.config import HumanoidConfig
from anima.errors import AnimaError, CommandRefusedError, ConfigError, HumanoidNotConnectedError
from anima.humanoid.spec import RobotState
from anima.wire.state import HumanoidState

if TYPE_CHECKING:
    from anima.clock import Clock
    from anima.humanoid.client import AdamClient
    from anima.humanoid.server import AdamServer

log = logging.getLogger(__name__)


class HumanoidLink:
    def __init__(self, config: HumanoidConfig, clock: Clock | None = None) -> None:
        """``clock``: the runtime's, which the simulated Adam lives on (None: the real one)."""
        if config.type == "none":
            raise ConfigError("humanoid.type is none: no humanoid to link to")
        self.config = config
        self._clock = clock
        self.server: AdamServer | None = None
        self.client: AdamClient | None = None
        self._state: RobotState | None = None
        self.error = ""  # why the last read or command failed to reach it; "" once one did
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def state(self) -> RobotState | None:
        """The last state read (None before the first one)."""
        return self._state

    def prepare(self) -> None:
        """Import gRPC and the generated stubs (~0.1 s) at start, not at the first call."""
        import anima.humanoid.makers  # noqa: F401  (the client, the server, the stubs)

    def start(self) -> None:
        from anima.humanoid.registry import HUMANOIDS

        cfg = self.config
        self.client, self.server = HUMANOIDS.load(cfg.type)(cfg, self._clock)
        assert self.client is not None
        log.info("humanoid: %s at %s", cfg.type, self.client.target)
        self._read(self.client)  # the state is there from the start, not a period later
        self._stop.clear()
        self._thread = threading.Thread(target=self._watch, name="anima-humanoid", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(min(2.0, timeout))
            self._thread = None
        if self.client is not None:
            self.client.close()
            self.client = None  # a call now is refused (request), not sent on a closed channel
        if self.server is not None:
            self.server.stop(timeout_s=timeout)
            self.server = None

    def _watch(self) -> None:
        # a remote robot tells its state only when asked: read it at a modest rate
        period = 1.0 / self.config.state_hz
        while not self._stop.wait(period):
            client = self.client
            if client is not None:
                self._read(client)

    def _read(self, client: AdamClient) -> None:
        try:
            self._state = client.state()
            self.error = ""
        except AnimaError as exc:
            self._unreachable(exc)

    def summary(self) -> HumanoidState | None:
        """The humanoid's part of the runtime state (None before the first read)."""
        s = self._state
        if s is None:
            return None
        return HumanoidState(
            fsm=s.fsm_name,
            motion=s.current_motion,
            posture=(s.stand_pitch, s.stand_roll, s.stand_yaw, s.stand_height),
            velocity=(s.x_vel, s.y_vel, s.yaw_vel),
            balance=s.balance_control_state,
            control_mode=s.current_control_mode,
            mode_enable_list=tuple(s.mode_enable_list),
            motion_enable_list=tuple(s.motion_enable_list),
            error=self.error,
        )

    def _client(self) -> AdamClient:
        client = self.client
        if client is None:
            raise CommandRefusedError("the humanoid is not connected (the runtime is not running)")
        return client

    def request(self, command: cmd.HumanoidCommand) -> str:
        """Send ``command`` to the robot (a gRPC round trip); the robot's answer. The client
        refuses what the robot's enable lists do not allow now, with the robot's reason."""
        client = self._client()
        try:
            match command:
                case cmd.HumanoidMode(mode=mode):
                    return client.set_mode(mode)
                case cmd.HumanoidMotion(motion=motion):
                    return client.stand_motion(motion)
                case cmd.HumanoidPosture(pitch=pitch, roll=roll, yaw=yaw, height=height):
                    return client.posture(pitch, roll, yaw, height)
                case cmd.HumanoidSpeed(x=x, y=y, yaw=yaw, continuous=continuous):
                    return client.speed(x, y, yaw, continuous=continuous)
        except HumanoidNotConnectedError as exc:  # no robot answers: the health says so
            self._unreachable(exc)
            raise

    def _unreachable(self, exc: AnimaError) -> None:
        if str(exc) != self.error:
            log.warning("humanoid not answering: %s", exc)
        self.error = str(exc)

    def read(self) -> RobotState:
        """The robot's state now (a round trip; :attr:`state` is the last one read)."""
        return self._client().state()
