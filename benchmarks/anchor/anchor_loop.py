"""The anchor's movement loop, timed in its own loop; prints one JSON object on stdout.

Runs in the anchor's interpreter (``.venv-anchor``), beside a reachy-mini 1.2.11 daemon whose
Zenoh link is on ``--zenoh-port``. The conversation app's own ``MovementManager`` (vendored,
unchanged: vendor/NOTICE.md) drives the daemon through the SDK's ``ReachyMini``, as in normal
use while the robot talks:

- primary: the app's ``DanceQueueMove`` over the dances library's 20 dances, queued back to back
  (what its ``dance`` tool queues; idle breathing never starts while speech offsets arrive);
- speech sway: the app's ``HeadWobbler`` fed synthetic speech (synthetic.py);
- face tracking: the app's ``CameraWorker`` holding a synthetic face's offsets (synthetic.py).

Each tick is timed from its wake-up (the ``loop_start`` the loop hands to ``_poll_signals``, its
first step) to the end of its last step before ``time.sleep`` (``_maybe_log_frequency``), by a
subclass that adds a clock read and an append around the loop's own calls and changes nothing
they do. ``set_target`` (``_issue_control_command``) is also timed alone.

``--priority N`` runs the loop's thread at ``SCHED_FIFO`` N, as anima runs its own where the OS
allows (the app does not): a fairness check, not the anchor as shipped.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

VENDOR = Path(__file__).resolve().parent / "vendor"
sys.path.insert(0, str(VENDOR))

from reachy_mini import ReachyMini  # noqa: E402  (after the vendored app is on the path)
from reachy_mini_conversation_app.audio.head_wobbler import HeadWobbler  # noqa: E402
from reachy_mini_conversation_app.camera_worker import CameraWorker  # noqa: E402
from reachy_mini_conversation_app.dance_emotion_moves import DanceQueueMove  # noqa: E402
from reachy_mini_conversation_app.moves import MovementManager  # noqa: E402
from reachy_mini_dances_library.collection.dance import AVAILABLE_MOVES  # noqa: E402
from synthetic import Feeders  # noqa: E402
from zenoh_port import use_port  # noqa: E402

CAPACITY = 100 * 600  # ticks kept: ten minutes at 100 Hz, allocated before the loop starts


class TimedMovementManager(MovementManager):  # type: ignore[misc]  # untyped to mypy
    """The app's ``MovementManager``; its loop's ticks timed, its work untouched."""

    def __init__(self, robot: ReachyMini, camera_worker: CameraWorker, priority: int = 0) -> None:
        super().__init__(current_robot=robot, camera_worker=camera_worker)
        self.priority = priority  # SCHED_FIFO for the loop's thread (0: as the app runs it)
        self.starts = np.zeros(CAPACITY)  # each tick's wake-up (monotonic s)
        self.computes = np.zeros(CAPACITY)  # wake-up → end of the tick's work (s)
        self.sends = np.zeros(CAPACITY)  # set_target and its bookkeeping alone (s)
        self.ticks = 0
        self._begin = 0.0
        self._send = 0.0

    def working_loop(self) -> None:
        if self.priority > 0:  # on the loop's own thread, before its first tick, as anima does
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(self.priority))
        super().working_loop()

    def _poll_signals(self, current_time: float) -> None:
        self._begin = current_time  # the loop's own loop_start: its wake-up
        super()._poll_signals(current_time)

    def _issue_control_command(self, head: Any, antennas: Any, body_yaw: float) -> None:
        begin = self._now()
        super()._issue_control_command(head, antennas, body_yaw)
        self._send = self._now() - begin

    def _maybe_log_frequency(self, loop_count: int, interval: int, stats: Any) -> None:
        super()._maybe_log_frequency(loop_count, interval, stats)
        end = self._now()  # the loop sleeps right after this call
        k = self.ticks
        if k < CAPACITY:
            self.starts[k], self.computes[k], self.sends[k] = (
                self._begin,
                end - self._begin,
                self._send,
            )
            self.ticks = k + 1


def dances(seconds: float) -> list[DanceQueueMove]:
    """The library's dances in its order, again and again, for a little over ``seconds``."""
    moves: list[DanceQueueMove] = []
    for name in itertools.cycle(AVAILABLE_MOVES):
        moves.append(DanceQueueMove(name))
        if sum(m.duration for m in moves) > seconds + 10:
            return moves
    raise AssertionError("unreachable")


def percentiles_us(values: np.ndarray) -> dict[str, float]:
    p50, p99 = np.percentile(values, [50, 99])  # numpy's default, as anima's LoopStats
    return {
        "p50_us": float(p50) * 1e6,
        "p99_us": float(p99) * 1e6,
        "max_us": float(values.max()) * 1e6,
    }


def figures(manager: TimedMovementManager, n: int, inputs: dict[str, int]) -> dict[str, Any]:
    """The first ``n`` ticks' figures, with what the producers did meanwhile."""
    starts, computes, sends = manager.starts[:n], manager.computes[:n], manager.sends[:n]
    elapsed = float(starts[-1] - starts[0])
    periods = np.diff(starts)
    return {
        "ticks": n,
        "elapsed_s": elapsed,
        "rate_hz": (n - 1) / elapsed,
        "period_max_ms": float(periods.max()) * 1e3,
        "tick_compute": percentiles_us(computes),
        "set_target": percentiles_us(sends),
        "tick_without_set_target": percentiles_us(computes - sends),
        **inputs,
    }


def run(seconds: float, zenoh_port: int, priority: int = 0) -> dict[str, Any]:
    use_port(zenoh_port)
    robot = ReachyMini(
        connection_mode="localhost_only",
        media_backend="no_media",
        timeout=10.0,
        log_level="WARNING",
    )
    camera = CameraWorker(robot, head_tracker=None)  # its frame thread is never started
    manager = TimedMovementManager(robot, camera, priority)
    sway = [0, 0]  # offsets the wobbler applied, and how many of them moved the head

    def set_speech_offsets(offsets: tuple[float, float, float, float, float, float]) -> None:
        sway[0] += 1
        sway[1] += any(offsets)
        manager.set_speech_offsets(offsets)

    wobbler = HeadWobbler(set_speech_offsets=set_speech_offsets)
    feeders = Feeders(wobbler.feed, camera)
    for move in dances(seconds):
        manager.queue_move(move)
    try:
        wobbler.start()
        feeders.start()
        manager.start()
        time.sleep(seconds)
        n = manager.ticks  # the window: the ticks stop() lets run while it joins are left out
        inputs = {
            "sway_offsets": sway[0],
            "sway_offsets_nonzero": sway[1],
            "utterances": feeders.utterances,
            "face_updates": feeders.face_updates,
        }
    finally:
        manager.stop()  # the app's own stop: joins the loop, then a 2 s goto to neutral
        feeders.stop()
        wobbler.stop()
        robot.client.disconnect()
    return figures(manager, n, inputs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--zenoh-port", type=int, required=True)
    parser.add_argument("--priority", type=int, default=0, help="SCHED_FIFO priority (0: none)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    print(json.dumps(run(args.seconds, args.zenoh_port, args.priority)))


if __name__ == "__main__":
    main()
