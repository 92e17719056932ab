"""Debian's Mosquitto as a child process: the zero-set-up broker of ``anima serve``, and tests'.

amqtt (the in-process fallback) loses QoS 0 publishes from clients that disconnect right after
publishing — what ``mosquitto_pub`` does by default — so when the ``mosquitto`` binary exists,
``anima serve`` runs this instead. It writes its own config (loopback only, anonymous,
``set_tcp_nodelay`` on unless asked otherwise) in a temporary folder and runs ``mosquitto -c``
as a child process this object owns. ``restart()`` brings it back on the same port;
``stop()``/``close()`` end it and remove its folder.

**Sessions survive a restart.** With ``persistence`` (the default) the broker keeps its
sessions, subscriptions, queued QoS 1 messages and retained messages in ``mosquitto.db`` in its
folder: it writes them when it stops (SIGTERM) and every ``AUTOSAVE_S``, and reads them back at
``restart()``. So a restart is like a link cut for anima's door (its persistent session is
there again, with the commands queued for it meanwhile), where a broker without persistence
forgets the door's subscription and drops every command published before the door subscribes
again — in one measurement 190 of 400 QoS 1 commands and 4 of 4 estops (docs/mqtt.md).

With ``die_with_parent`` the kernel ends the broker when the process that started it dies
(even by SIGKILL), so a crashed anima leaves no broker holding its port; such a broker also runs
in a session of its own, so a Ctrl-C in anima's terminal (SIGINT to the whole foreground
process group) does not end it under the door: anima stops it after its doors.

The Debian package is ``mosquitto``; when its binary cannot be found, :meth:`Mosquitto.start`
raises :class:`MosquittoNotFoundError` saying so (use :func:`find_mosquitto` to check first).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

from anima.errors import AnimaError, MissingDependencyError
from anima.frontdoors.mqtt.broker import free_port
from anima.wire.mqtt import BrokerAddress

# Debian installs the broker in /usr/sbin, which is not on an ordinary user's PATH
_SBIN = os.pathsep.join(("/usr/sbin", "/usr/local/sbin"))


def find_mosquitto() -> str | None:
    """The path of the ``mosquitto`` binary, or None when it is not installed."""
    return shutil.which("mosquitto") or shutil.which("mosquitto", path=_SBIN)


class MosquittoNotFoundError(MissingDependencyError):
    """The ``mosquitto`` binary is not installed (Debian: ``apt-get install mosquitto``)."""

    def __init__(self) -> None:
        super().__init__("mosquitto", "mqtt")
        self.args = (
            "the mosquitto broker is not installed (no 'mosquitto' on PATH or in "
            f"{_SBIN}); install it with: apt-get install mosquitto",
        )


class MosquittoError(AnimaError):
    """Mosquitto did not start or stop as asked; the message has the end of its log."""


_PR_SET_PDEATHSIG = 1  # prctl(2), linux/prctl.h
AUTOSAVE_S = 10  # how often a persistent broker writes its database (and at every stop)


def _die_with_parent(parent: int) -> None:
    """In the child, before exec: the kernel sends SIGTERM when the parent dies.

    Caveat of PR_SET_PDEATHSIG: "parent" is the *thread* that forked, so start the broker from
    a thread that lives as long as the runtime (``anima serve`` does it on the main thread).
    """
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


class Mosquitto:
    """One Mosquitto process on ``127.0.0.1:<port>``; ``start()``/``stop()``/``restart()``."""

    def __init__(
        self,
        port: int | None = None,
        *,
        binary: str | None = None,
        tcp_nodelay: bool = True,
        die_with_parent: bool = False,
        anonymous: bool = True,
        listener_options: Sequence[str] = (),
        persistence: bool = True,
    ) -> None:
        """``anonymous``: clients without a login are let in; ``listener_options``: lines of
        Mosquitto's config for the listener (``cafile``, ``certfile``, ``password_file`` …:
        a broker that wants TLS and a password, for tests); ``persistence``: sessions and
        retained messages survive ``restart()`` (False: a broker that forgets, for tests)."""
        self._persistence = persistence
        self._anonymous = anonymous
        self._listener_options = tuple(listener_options)
        self._binary = binary
        self._port = port
        self._die_with_parent = die_with_parent and os.uname().sysname == "Linux"
        # Mosquitto's default leaves Nagle's algorithm on: a small message waits for the ACK
        # of the previous one, which the client delays by up to 40 ms (p99 latency ~23 ms
        # instead of ~11 ms in ``anima bench mqtt``)
        self._tcp_nodelay = tcp_nodelay
        self._dir: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self.starts = 0  # how many times it started serving (restarts included)

    @property
    def address(self) -> BrokerAddress:
        if self._port is None:
            raise MosquittoError("mosquitto has no port yet: start() it first")
        return BrokerAddress("127.0.0.1", self._port)

    @property
    def config_path(self) -> Path | None:
        """The config file written for the broker (None before the first start)."""
        return self._dir / "mosquitto.conf" if self._dir is not None else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def start(self, timeout: float = 5.0) -> None:
        """Start the broker and return once it accepts TCP connections."""
        if self.running:
            return
        binary = self._binary or find_mosquitto()
        if binary is None:
            raise MosquittoNotFoundError()
        if self._dir is None:
            self._dir = Path(tempfile.mkdtemp(prefix="anima-mosquitto-"))
        fixed = self._port is not None
        for attempt in range(3):  # a free port can be taken between probe and bind
            if not fixed:
                self._port = free_port()
            try:
                self._launch(binary, timeout)
                return
            except MosquittoError:
                if fixed or attempt == 2:
                    if not self.starts:  # it never served: leave no folder behind
                        self.close()
                    raise

    def _launch(self, binary: str, timeout: float) -> None:
        assert self._dir is not None
        assert self._port is not None
        conf = self._dir / "mosquitto.conf"
        log = self._dir / "mosquitto.log"
        persist = (
            ("persistence true", f"persistence_location {self._dir}/",
             f"autosave_interval {AUTOSAVE_S}")
            if self._persistence
            else ("persistence false",)
        )  # fmt: skip
        conf.write_text(
            "\n".join(
                (
                    f"listener {self._port} 127.0.0.1",
                    *self._listener_options,
                    f"allow_anonymous {'true' if self._anonymous else 'false'}",
                    *persist,
                    # Mosquitto's default queues 1000 QoS 1 messages per client and drops what
                    # comes next: a flood then cost refusals to a slow subscriber, and could
                    # cost anima the estop that follows it (~20 MB at most here)
                    "max_queued_messages 100000",
                    f"set_tcp_nodelay {'true' if self._tcp_nodelay else 'false'}",
                    f"log_dest file {log}",
                    "log_type error",
                    "log_type warning",
                    "log_type notice",
                    # run as root (a container), mosquitto would switch to its own user
                    # and no longer be able to write the log in our folder
                    "user root" if os.geteuid() == 0 else "",
                    "",
                )
            ),
            encoding="utf-8",
        )
        parent = os.getpid()
        try:
            self._process = subprocess.Popen(
                [binary, "-c", str(conf)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                # only a prctl call, no Python state: safe enough in a threaded parent
                preexec_fn=(lambda: _die_with_parent(parent)) if self._die_with_parent else None,  # noqa: PLW1509
                # not in anima's process group: a Ctrl-C is anima's to handle (it stops the
                # broker after its doors), the kernel still ends it if anima dies
                start_new_session=self._die_with_parent,
            )
        except OSError as exc:
            raise MosquittoError(f"cannot run {binary!r}: {exc.strerror or exc}") from exc
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                code = self._process.returncode
                self._process = None
                raise MosquittoError(
                    f"mosquitto exited with status {code} on port {self._port}: {self._log()}"
                )
            try:
                with socket.create_connection(("127.0.0.1", self._port), timeout=0.2):
                    pass
            except OSError:
                time.sleep(0.005)
                continue
            if self._process.poll() is None:  # not someone else's listener
                self.starts += 1
                return
        self._kill()
        raise MosquittoError(
            f"mosquitto did not accept connections on port {self._port} within {timeout:g} s: "
            f"{self._log()}"
        )

    def _log(self, lines: int = 5) -> str:
        path = self._dir / "mosquitto.log" if self._dir is not None else None
        try:
            text = path.read_text(encoding="utf-8", errors="replace") if path else ""
        except OSError:
            text = ""
        tail = " | ".join(text.strip().splitlines()[-lines:])
        return tail or "(nothing logged)"

    def _kill(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait(5.0)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the broker (SIGTERM, then SIGKILL after ``timeout``) and remove its folder; the
        port is kept for the next ``start()``."""
        self.halt(timeout)
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def halt(self, timeout: float = 5.0) -> None:
        """Stop the broker and keep its folder: `start()` again is a restart in two steps."""
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout)

    def restart(self, timeout: float = 5.0) -> None:
        """Stop and start again on the same port, in the same folder: with ``persistence``,
        sessions, queued messages and retained messages come back."""
        self.halt(timeout)
        self.start(timeout)

    def close(self, timeout: float = 5.0) -> None:
        """The same as ``stop()``."""
        self.stop(timeout)

    def __enter__(self) -> Mosquitto:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
