"""``anima bench serial``: the real 100 Hz engine into the serial driver and a fake board on a pty.

Every layer runs (breathing, blink, a 30 Hz gaze offset, speech sway, a lips override, an
animation re-queued as it ends). The board decodes every byte on its own thread, so the rate it
reports is what reached the far end of a real ``serial.Serial`` port, not what the engine meant
to send. The driver's write cost (encode + ``write()``) is measured inside ``send()``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from anima.bench.scene import set_gaze, set_lips, set_sway, wave
from anima.body import load_body
from anima.config import MotionConfig
from anima.drivers.serial_servo import SerialServoDriver
from anima.motion.engine import MotionEngine
from anima.testing.servo_board import FakeServoBoard


@dataclass(frozen=True, kw_only=True)
class SerialBenchResult:
    target_hz: float  # the engine's configured rate
    span_s: float  # first to last packet received by the board
    packets: int  # valid packets the board decoded
    packets_per_s: float  # (packets − 1) / span_s: the rate at the far end of the port
    bad_packets: int  # packets the board rejected (CRC or channel count)
    dropped: int  # frames the driver did not write (write timeouts, lost port)
    write_p50_us: float  # inside send(): encode + write, per packet
    write_p99_us: float
    loop_rate_hz: float  # the engine's own figure, for comparison
    period_error_p99_ms: float
    missed: int  # deadlines the engine skipped
    faults: int  # engine faults (driver, safety, moves)


def run_serial_bench(seconds: float = 10.0, rate_hz: float = 100.0) -> SerialBenchResult:
    """Run the engine at ``rate_hz`` for ``seconds`` into :class:`FakeServoBoard`; report."""
    body = load_body()
    stop = threading.Event()
    history = int(seconds * rate_hz * 2) + 1000  # every packet, for the first one's time
    with FakeServoBoard(channels=len(body), history=history) as board:
        driver = SerialServoDriver(board.port, baud=body.board.baud)
        driver.connect()
        engine = MotionEngine(body, driver, config=MotionConfig(rate_hz=rate_hz))

        def offsets() -> None:  # a 30 Hz face tracker, and a sway hop every other update
            k = 0
            while not stop.wait(1 / 30):
                k += 1
                set_gaze(engine, k)
                if k % 2 == 0:
                    set_sway(engine, k)

        def animate() -> None:
            while not stop.is_set():
                engine.queue_move(wave(body))
                while not engine.wait_until_idle(0.1):
                    if stop.is_set():
                        return

        set_lips(engine)
        threads = [threading.Thread(target=f, daemon=True) for f in (offsets, animate)]
        try:
            engine.start()
            for th in threads:
                th.start()
            time.sleep(seconds)
        finally:
            stop.set()
            for th in threads:
                th.join(1.0)
            engine.stop()
            written = driver.stats().sent
            board.wait_for(written, timeout=1.0)  # let the board read the last packets
            driver.disconnect()
        frames = board.frames()
        span = frames[-1].t - frames[0].t if len(frames) > 1 else 0.0
        stats, loop = driver.stats(), engine.stats()
        return SerialBenchResult(
            target_hz=rate_hz,
            span_s=span,
            packets=board.received,
            packets_per_s=(board.received - 1) / span if span > 0 else 0.0,
            bad_packets=board.bad,
            dropped=stats.dropped,
            write_p50_us=stats.write_p50_us,
            write_p99_us=stats.write_p99_us,
            loop_rate_hz=loop.rate_hz,
            period_error_p99_ms=loop.period_error_p99_ms,
            missed=loop.missed,
            faults=engine.faults,
        )
