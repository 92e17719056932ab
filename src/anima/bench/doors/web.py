"""The dashboard's cost: WebSocket updates per second per client, the loop's health and the
process's CPU with N clients connected, against the same runtime with none."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass

from anima.config import AnimaConfig, SpeechConfig, WebConfig


@dataclass(frozen=True, kw_only=True)
class WebBench:
    clients: int
    seconds: float
    updates_per_s_min: float  # the slowest client's state messages per second
    updates_per_s_max: float
    loop_rate_hz: float  # over the window with clients connected
    period_error_p99_ms: float
    missed: int
    cpu_idle_pct: float  # the whole process, no client connected (one core = 100)
    cpu_clients_pct: float  # the whole process, with the clients connected
    cpu_per_client_pct: float  # the difference, per client


def run_web_bench(clients: int = 3, seconds: float = 5.0) -> WebBench:
    import websockets

    from anima.frontdoors.web import WebFrontDoor
    from anima.runtime import Runtime

    cfg = AnimaConfig(web=WebConfig(port=0), speech=SpeechConfig(enabled=False))
    runtime = Runtime(cfg)
    door = WebFrontDoor(runtime, cfg.web)
    runtime.attach(door)

    async def client() -> int:
        n = 0
        async with websockets.connect(door.url.replace("http://", "ws://") + "ws") as ws:
            end = time.monotonic() + seconds
            while (left := end - time.monotonic()) > 0:
                try:
                    msg = json.loads(await asyncio.wait_for(ws.recv(), left))
                except TimeoutError:
                    break
                n += msg["type"] == "state"
        return n

    async def all_clients() -> list[int]:
        return list(await asyncio.gather(*(client() for _ in range(clients))))

    with runtime:
        runtime.wait_first_tick()
        time.sleep(0.5)
        c0, w0 = time.process_time(), time.monotonic()
        time.sleep(seconds)
        idle = (time.process_time() - c0) / (time.monotonic() - w0) * 100
        ticks0 = runtime.engine.stats()
        c0, w0 = time.process_time(), time.monotonic()
        counts = asyncio.run(all_clients())
        wall = time.monotonic() - w0
        busy = (time.process_time() - c0) / wall * 100
        stats = runtime.engine.stats()
    return WebBench(
        clients=clients,
        seconds=seconds,
        updates_per_s_min=min(counts) / seconds,
        updates_per_s_max=max(counts) / seconds,
        loop_rate_hz=(stats.ticks - ticks0.ticks) / wall,
        period_error_p99_ms=stats.period_error_p99_ms,
        missed=stats.missed - ticks0.missed,
        cpu_idle_pct=idle,
        cpu_clients_pct=busy,
        cpu_per_client_pct=(busy - idle) / clients,
    )
