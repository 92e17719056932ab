"""Humanoid commands from MQTT (``<prefix>/agent/control/humanoid/<command>``).

Each is parsed on paho's thread (quick, :mod:`anima.wire.humanoid`) into a typed command,
which one worker thread of the door hands to the runtime's ``execute``, because the call is a
gRPC round trip to the robot. At most
:data:`MAX_PENDING` wait; more are refused. The robot's answer goes to
``<prefix>/agent/feedback/humanoid``, a refusal to the error topic.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from anima import commands as cmd
from anima.errors import AnimaError
from anima.wire.humanoid import parse_humanoid
from anima.wire.payloads import excerpt

if TYPE_CHECKING:
    from anima.runtime import Runtime

log = logging.getLogger(__name__)

MAX_PENDING = 32  # humanoid commands waiting for the robot; more are refused

Answer = Callable[[str, str, str], None]  # (command, request excerpt, the robot's answer)
Refuse = Callable[[str, bytes | str, str], None]  # (topic, payload, reason)


class HumanoidWorker:
    """Runs the door's humanoid commands, one at a time; ``start()``/``stop()`` own the thread."""

    def __init__(self, runtime: Runtime, answer: Answer, refuse: Refuse) -> None:
        self.runtime = runtime
        self._answer = answer
        self._refuse = refuse
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._pending = 0

    def start(self) -> None:
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="anima-mqtt-humanoid")

    def stop(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)

    def handle(self, topic: str, command: str, payload: bytes) -> None:
        """On paho's thread: parse, then queue the call (or refuse at once)."""
        try:
            request = parse_humanoid(command, payload)
        except AnimaError as exc:
            self._refuse(topic, payload, str(exc))
            return
        pool = self._pool
        if pool is None:
            self._refuse(topic, payload, "the MQTT door is not running")
            return
        with self._lock:
            if self._pending >= MAX_PENDING:
                full = f"too many pending humanoid commands ({MAX_PENDING}); try again"
                self._refuse(topic, payload, full)
                return
            self._pending += 1
        pool.submit(self._run, topic, payload, request)

    def _run(self, topic: str, payload: bytes, request: cmd.HumanoidCommand) -> None:
        try:
            answer = self.runtime.execute(request).answer
        except AnimaError as exc:
            self._refuse(topic, payload, str(exc))
        except Exception as exc:  # a bug must cost one command, not the worker
            log.exception("humanoid command on %s failed", topic)
            self._refuse(topic, payload, f"internal error: {exc!r}")
        else:
            self._answer(request.verb, excerpt(payload), answer)
        finally:
            with self._lock:
                self._pending -= 1
