"""``anima bench mcp``: what an AI agent's tool call costs, through the official MCP client
over streamable HTTP at ``/mcp`` (a real uvicorn on loopback), as a desktop client drives it.

- **call → frame**: ``look_at`` calls alternating left and right; each call's latency is its
  start → the first frame the driver got that reflects the new target (the third difference
  of ``eyes_yaw`` standing out, as in ``anima bench mqtt``), and its round trip (start → the
  tool's result back at the client).
- **cancel → held**: a ``play_animation('LOOKUP_Waving')`` call cancelled by the client (its
  anyio scope) once the wave has started: cancel → the tick that replaced the wave with a
  deceleration to a hold (the engine-clock time of its ``MoveFinished(reason="cleared")``).
- **tools**: how many tools, and the characters of their JSON (what every request to the
  model carries).
"""

from __future__ import annotations

import math
import random
import threading
import time
from dataclasses import dataclass

import anyio
import anyio.to_thread

from anima.bench.doors.mqtt import LEFT, RIGHT, reflecting_frame
from anima.bench.measure import percentile
from anima.bench.timed_driver import TimedDriver
from anima.build import build
from anima.config import (
    AnimaConfig,
    BehaviourConfig,
    McpConfig,
    MqttConfig,
    SpeechConfig,
    WebConfig,
)
from anima.errors import EngineStateError
from anima.events import Event, MoveFinished, MoveStarted
from anima.frontdoors.mcp.tools import tools_size
from anima.frontdoors.web import WebFrontDoor
from anima.runtime import Runtime

WAVE = "LOOKUP_Waving"


@dataclass(frozen=True, kw_only=True)
class McpFigures:
    calls: int
    measured: int  # calls whose reflecting frame was found
    frame_p50_ms: float  # call start → first driver frame that reflects it
    frame_p99_ms: float
    frame_max_ms: float
    round_trip_p50_ms: float  # call start → the result back at the client
    round_trip_p99_ms: float
    cancels: int
    held_p50_ms: float  # the client's cancel → the tick that holds the motion
    held_p99_ms: float
    held_max_ms: float
    tools: int
    tools_chars: int


def run_mcp_bench(calls: int = 100, cancels: int = 15, seed: int = 1) -> McpFigures:
    cfg = AnimaConfig(
        mqtt=MqttConfig(enabled=False),
        web=WebConfig(port=0),
        behaviour=BehaviourConfig(full_blink_every_s=600.0),
        speech=SpeechConfig(audio_out="null"),
        mcp=McpConfig(rate_per_s=1000, burst=1000),  # the bench is the only client
    )
    driver = TimedDriver(capacity=20_000)
    runtime = build(cfg, driver=driver)
    door = next(d for d in runtime.frontdoors if isinstance(d, WebFrontDoor))
    with runtime:
        if door.mcp is None:
            raise EngineStateError("MCP is not served at /mcp (the mcp extra is missing)")
        tools = door.mcp.robot.tools
        url = door.url + "mcp"
        frames, trips, measured = anyio.run(_calls, runtime, driver, url, calls, seed)
        held = anyio.run(_cancels, runtime, url, cancels, seed)
    return McpFigures(
        calls=calls,
        measured=measured,
        frame_p50_ms=percentile(frames, 50),
        frame_p99_ms=percentile(frames, 99),
        frame_max_ms=max(frames) if frames else math.nan,
        round_trip_p50_ms=percentile(trips, 50),
        round_trip_p99_ms=percentile(trips, 99),
        cancels=len(held),
        held_p50_ms=percentile(held, 50),
        held_p99_ms=percentile(held, 99),
        held_max_ms=max(held) if held else math.nan,
        tools=len(tools),
        tools_chars=tools_size(tools),
    )


async def _calls(
    runtime: Runtime, driver: TimedDriver, url: str, calls: int, seed: int
) -> tuple[list[float], list[float], int]:
    from mcp import Client

    eyes = runtime.body.index("eyes_yaw")
    rng = random.Random(seed)
    frames: list[float] = []
    trips: list[float] = []
    side = 1
    async with Client(url, mode="legacy") as client:
        for n in range(calls + 10):
            side = -side
            x, y, z = LEFT if side > 0 else RIGHT
            t0 = time.monotonic()
            result = await client.call_tool("look_at", {"x": x, "y": y, "z": z})
            t_back = time.monotonic()
            if result.is_error:
                raise EngineStateError(f"look_at refused: {result.content}")
            await anyio.sleep(rng.uniform(0.025, 0.045))  # each call has its frames to itself
            if n < 10:
                continue  # warming up
            trips.append((t_back - t0) * 1e3)
            times, values = driver.since(t0 - 0.035, eyes)
            t_frame = reflecting_frame(times, values, side, t0)
            if t_frame is not None:
                frames.append((t_frame - t0) * 1e3)
    return frames, trips, len(frames)


async def _cancels(runtime: Runtime, url: str, trials: int, seed: int) -> list[float]:
    from mcp import Client

    rng = random.Random(seed)
    started = threading.Event()
    held: list[float] = []
    held_event = threading.Event()

    def on_event(event: Event) -> None:
        if isinstance(event, MoveStarted) and event.name == WAVE:
            started.set()
        elif isinstance(event, MoveFinished) and event.name == WAVE and event.reason == "cleared":
            held.append(event.t)
            held_event.set()

    clock = runtime.engine.clock
    out: list[float] = []
    unsubscribe = runtime.events.subscribe(on_event, MoveStarted.kind, MoveFinished.kind)
    try:
        async with Client(url, mode="legacy") as client:
            for _ in range(trials):
                started.clear()
                held_event.clear()
                held.clear()
                t_cancel = math.nan
                async with anyio.create_task_group() as tg:
                    scope = anyio.CancelScope()

                    async def call(scope: anyio.CancelScope = scope) -> None:
                        with scope:
                            await client.call_tool("play_animation", {"name": WAVE})

                    tg.start_soon(call)
                    with anyio.fail_after(10):
                        while not started.is_set():
                            await anyio.sleep(0.005)
                    await anyio.sleep(0.2 + rng.uniform(0.0, runtime.engine.period))
                    t_cancel = clock.now()
                    scope.cancel()
                with anyio.fail_after(10):
                    while not held_event.is_set():
                        await anyio.sleep(0.002)
                out.append(max(0.0, held[0] - t_cancel) * 1e3)
                await anyio.to_thread.run_sync(runtime.engine.wait_until_idle, 5.0)
    finally:
        unsubscribe()
    return out


def figures_lines(f: McpFigures) -> list[str]:
    return [
        f"tools                 : {f.tools}, {f.tools_chars} characters of JSON "
        f"(~{f.tools_chars // 4} tokens)",
        f"call → frame          : p50 {f.frame_p50_ms:.1f} ms, p99 {f.frame_p99_ms:.1f} ms, "
        f"max {f.frame_max_ms:.1f} ms ({f.measured} of {f.calls} calls measured)",
        f"call round trip       : p50 {f.round_trip_p50_ms:.1f} ms, "
        f"p99 {f.round_trip_p99_ms:.1f} ms",
        f"cancel → motion held  : p50 {f.held_p50_ms:.1f} ms, p99 {f.held_p99_ms:.1f} ms, "
        f"max {f.held_max_ms:.1f} ms ({f.cancels} cancels)",
    ]
