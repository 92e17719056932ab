"""A TCP proxy on loopback whose link the test cuts: anima ⇄ proxy ⇄ broker.

``cut()`` closes every connection through it (both ends, as a pulled cable that the broker
notices) and, until ``restore()``, accepts new ones only to close them at once — a link that is
down, not a broker that is gone: the broker keeps running and keeps anima's session.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType

from anima.wire.mqtt import BrokerAddress


class LinkProxy:
    def __init__(self, upstream: BrokerAddress) -> None:
        self.upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.address = BrokerAddress("127.0.0.1", int(self._listener.getsockname()[1]))
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        self._down = False
        self._closed = False
        self._threads: list[threading.Thread] = []
        self.accepted = 0  # connections carried through (not refused while down)

    def start(self) -> None:
        self._spawn(self._accept, "proxy-accept")

    def cut(self) -> None:
        """The link goes down: every connection closed, new ones refused."""
        with self._lock:
            self._down = True
            sockets, self._open = self._open, []
        for s in sockets:
            _close(s)

    def restore(self) -> None:
        with self._lock:
            self._down = False

    def close(self) -> None:
        self._closed = True
        self.cut()
        _close(self._listener)
        for t in self._threads:
            t.join(2)

    def __enter__(self) -> LinkProxy:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _spawn(self, target: object, name: str, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)  # type: ignore[arg-type]
        self._threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                down = self._down
            if down:
                _close(client)
                continue
            try:
                server = socket.create_connection((self.upstream.host, self.upstream.port), 2)
            except OSError:
                _close(client)
                continue
            with self._lock:
                self._open += [client, server]
                self.accepted += 1
            self._spawn(self._pump, "proxy-up", client, server)
            self._spawn(self._pump, "proxy-down", server, client)

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        _close(source)
        _close(sink)


def _close(s: socket.socket) -> None:
    with contextlib.suppress(OSError):
        s.shutdown(socket.SHUT_RDWR)
    with contextlib.suppress(OSError):
        s.close()
