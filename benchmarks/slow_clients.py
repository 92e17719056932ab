"""Issue 30's slow-client attack on a real `anima serve`, with Debian's 1,024 open files.

`anima serve` runs as a subprocess started with a soft RLIMIT_NOFILE of 1,024 (the hard one
left as it is: serve raises the soft one to it at start). This process opens ``--connections``
(1,100) connections from ``--source`` (127.0.0.2, another address than the probes') that never
finish their headers; with ``--reconnect`` it replaces each one the server closes, as fast as
it can. For ``--seconds`` it meanwhile asks ``GET /api/state`` every 100 ms, opens a WebSocket
every second and sends SIGHUP (a reload) every 2 s, then prints as JSON: the REST answers (ok,
503, failed) and their latency p50/max, the WebSockets that got their hello, the reloads, the
"Too many open files" in serve's log, the log's growth in bytes a second, the descriptors serve
had open, its last status line and exit code.

    python benchmarks/slow_clients.py [--connections 1100] [--seconds 10] [--reconnect]
        [--source 127.0.0.1]

Before issue 30: REST, WebSocket and MCP answered nothing, a reload skipped every file with
"Too many open files", and the log grew ~3 MB/s.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import selectors
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import websockets

from anima.frontdoors.mqtt.broker import free_port

SOFT_LIMIT = 1024  # Debian's default soft limit on open files
PARTIAL = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "  # headers that never end


def _serve(port: int, log_path: Path, tmp: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONUNBUFFERED="1", ANIMA_MQTT__ENABLED="false")
    env.update(ANIMA_WEB__PORT=str(port), ANIMA_SPEECH__ENABLED="false")
    env.update(XDG_RUNTIME_DIR=str(tmp), ANIMA_SERVE__STATUS_INTERVAL_S="1")
    env.pop("ANIMA_CONFIG", None)
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]

    def debian_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(SOFT_LIMIT, hard), hard))

    out = log_path.open("wb")
    return subprocess.Popen(
        [sys.executable, "-m", "anima", "serve"],
        stdout=out,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=tmp,
        preexec_fn=debian_limit,  # noqa: PLW1509 (started before this process's threads)
    )


class Attack:
    """``count`` connections that never finish their headers, each replaced when closed."""

    def __init__(self, port: int, count: int, reconnect: bool, source: str) -> None:
        self.port = port
        self.source = source
        self.count = count
        self.reconnect = reconnect
        self.socks: set[socket.socket] = set()
        self._sel = selectors.DefaultSelector()  # epoll: select() stops at descriptor 1,024
        self.opened = 0
        self.closed_by_server = 0
        self.connect_failures = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="attack")

    def _open(self) -> None:
        try:
            s = socket.create_connection(
                ("127.0.0.1", self.port), timeout=1.0, source_address=(self.source, 0)
            )
            s.sendall(PARTIAL)
            s.setblocking(False)
        except OSError:
            self.connect_failures += 1
            return
        self.socks.add(s)
        self._sel.register(s, selectors.EVENT_READ)
        self.opened += 1

    def _run(self) -> None:
        while not self._stop.is_set():
            while self.opened < self.count or (self.reconnect and len(self.socks) < self.count):
                if self._stop.is_set():
                    return
                self._open()
            ready = self._sel.select(0.1) if self.socks else []
            for key, _ in ready:  # an answer (503, 408) or a close: replace it
                s = key.fileobj
                assert isinstance(s, socket.socket)
                with contextlib.suppress(OSError):
                    s.recv(65536)
                self._sel.unregister(s)
                s.close()
                self.socks.discard(s)
                self.closed_by_server += 1

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10.0)
        for s in self.socks:
            s.close()
        self._sel.close()


def _ws_hello(url: str) -> bool:
    async def run() -> bool:
        try:
            async with websockets.connect(url, open_timeout=2.0, close_timeout=0.5) as ws:
                return json.loads(await asyncio.wait_for(ws.recv(), 2.0))["type"] == "hello"
        except (OSError, TimeoutError, websockets.exceptions.WebSocketException):
            return False

    return asyncio.run(run())


def _probe(url: str, pid: int, seconds: float) -> dict[str, object]:
    """REST every 100 ms, a WebSocket every second, SIGHUP every 2 s, for ``seconds``."""
    answers = {"ok": 0, "503": 0, "other": 0, "failed": 0}
    latencies: list[float] = []
    ws_ok = ws_tried = hups = 0
    t0 = next_ws = next_hup = time.monotonic()
    with httpx.Client(base_url=url, timeout=2.0) as http:
        while time.monotonic() - t0 < seconds:
            start = time.perf_counter()
            try:
                code = http.get("/api/state").status_code
                answers["ok" if code == 200 else "503" if code == 503 else "other"] += 1
                latencies.append((time.perf_counter() - start) * 1e3)
            except httpx.HTTPError:
                answers["failed"] += 1
            now = time.monotonic()
            if now >= next_ws:
                ws_tried += 1
                ws_ok += _ws_hello(url.replace("http", "ws") + "/ws")
                next_ws = now + 1.0
            if now >= next_hup:
                os.kill(pid, signal.SIGHUP)
                hups += 1
                next_hup = now + 2.0
            time.sleep(0.1)
    return {
        "rest": answers,
        "rest_ms_p50": round(statistics.median(latencies), 1) if latencies else None,
        "rest_ms_max": round(max(latencies), 1) if latencies else None,
        "websocket_hello": f"{ws_ok}/{ws_tried}",
        "sighups": hups,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--connections", type=int, default=1100)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--reconnect", action="store_true", help="replace each one closed")
    ap.add_argument(
        "--source", default="127.0.0.2", help="the attacker's address (the probes use 127.0.0.1)"
    )
    args = ap.parse_args()
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # this side holds them all
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        port = free_port()
        log_path = tmp / "serve.log"
        proc = _serve(port, log_path, tmp)
        url = f"http://127.0.0.1:{port}"
        try:
            end = time.monotonic() + 30
            while b"anima dashboard" not in log_path.read_bytes():
                if proc.poll() is not None or time.monotonic() > end:
                    raise SystemExit(f"serve did not start:\n{log_path.read_text()}")
                time.sleep(0.1)
            attack = Attack(port, args.connections, args.reconnect, args.source)
            attack.start()
            time.sleep(1.0)
            size0, t0 = log_path.stat().st_size, time.monotonic()
            probed = _probe(url, proc.pid, args.seconds)
            growth = (log_path.stat().st_size - size0) / (time.monotonic() - t0)
            fds = len(os.listdir(f"/proc/{proc.pid}/fd"))
            attack.stop()
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
        text = log_path.read_text(errors="replace")
    lines = text.splitlines()
    status = [ln for ln in lines if " rate " in ln and "Hz" in ln]
    print(
        json.dumps(
            {
                "connections": args.connections,
                "seconds": args.seconds,
                "reconnect": args.reconnect,
                "source": args.source,
                "attack": {
                    "opened": attack.opened,
                    "closed_by_server": attack.closed_by_server,
                    "connect_failures": attack.connect_failures,
                },
                **probed,
                "reloads_ok": sum("animations: " in ln and "loaded" in ln for ln in lines) - 1,
                "reloads_failed": sum("reload failed" in ln for ln in lines),
                "too_many_open_files": text.count("Too many open files"),
                "log_bytes_per_s": round(growth),
                "serve_fds_at_end": fds,
                "last_status": status[-1].split(": ", 1)[-1] if status else None,
                "exit_code": proc.returncode,
                "last_log_lines": [ln[:300] for ln in lines[-3:]],
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
