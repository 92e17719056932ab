"""What the HTTP planners share: interruptible requests, error events, JSON over httpx.

A blocking HTTP request cannot be abandoned from another thread, so each one runs on a helper
thread and the caller waits on an event that either the answer or :meth:`InflightCall.interrupt`
sets: a wake releases the conversation loop at once, and the abandoned request ends by itself
within the planner's timeout (its thread is joined by ``close``).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from anima.errors import MissingDependencyError, PlannerError
from anima.events import CommandRejected, EventHub

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)

T = TypeVar("T")


class HTTPStatusError(PlannerError):
    """The server answered with an HTTP error status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class RequestInterruptedError(Exception):
    """The request was released by interrupt(); its answer, if any, is dropped."""


@dataclass
class _Call(Generic[T]):
    wake: threading.Event = field(default_factory=threading.Event)
    finished: bool = False
    interrupted: bool = False
    value: T | None = None
    error: BaseException | None = None


class InflightCall:
    """Runs one blocking call at a time on a helper thread; interrupt() releases the caller."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._lock = threading.Lock()
        self._current: _Call[Any] | None = None
        self._threads: list[threading.Thread] = []

    def run(self, fn: Callable[[], T]) -> T:
        call: _Call[T] = _Call()

        def work() -> None:
            try:
                call.value = fn()
            except BaseException as exc:  # handed to the caller's thread
                call.error = exc
            finally:
                call.finished = True
                call.wake.set()

        thread = threading.Thread(target=work, name=f"anima-{self._name}-request", daemon=True)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
            self._current = call
        thread.start()
        call.wake.wait()
        with self._lock:
            self._current = None
        if call.interrupted:
            raise RequestInterruptedError
        if call.error is not None:
            raise call.error
        return call.value  # type: ignore[return-value]  # set when finished without error

    def interrupt(self) -> None:
        with self._lock:
            call = self._current
            if call is not None:
                call.interrupted = True
                call.wake.set()

    def close(self, timeout: float) -> None:
        """Interrupt, then wait for the helper threads (each ends within the HTTP timeout)."""
        self.interrupt()
        with self._lock:
            threads, self._threads = self._threads, []
        for thread in threads:
            thread.join(timeout)
            if thread.is_alive():
                log.warning("%s: a request thread is still waiting for its server", self._name)


def api_key(variable: str | None, default: str) -> str | None:
    """The key from the named environment variable (None when unset or empty)."""
    return os.environ.get(variable or default) or None


def report(events: EventHub | None, source: str, command: str, argument: str, reason: str) -> None:
    """Log a planner failure and publish it as a CommandRejected event (source ``agent``)."""
    log.warning("%s planner: %s", source, reason)
    if events is not None:
        events.publish(
            CommandRejected(
                command=command,
                argument=argument[:80],
                reason=f"{source} planner: {reason}",
                source="agent",
            )
        )


def new_client(timeout_s: float) -> httpx.Client:
    """An httpx client with one timeout for connect, read and write (no network until used)."""
    try:
        import httpx
    except ImportError:
        raise MissingDependencyError("httpx", "agent") from None
    return httpx.Client(timeout=httpx.Timeout(timeout_s))


def post_json(client: httpx.Client, url: str, body: dict[str, Any], headers: dict[str, str]) -> Any:
    """POST ``body``; the decoded JSON answer, or PlannerError saying what went wrong."""
    import httpx

    try:
        answer = client.post(url, json=body, headers=headers)
    except httpx.TimeoutException:
        raise PlannerError(f"no answer from {url} within the timeout") from None
    except httpx.HTTPError as exc:
        raise PlannerError(f"request to {url} failed: {type(exc).__name__}: {exc}") from None
    if answer.status_code >= 400:
        text = answer.text.strip().replace("\n", " ")
        detail = text if len(text) <= 120 else text[:120] + "…"
        raise HTTPStatusError(f"HTTP {answer.status_code} from {url}: {detail}", answer.status_code)
    try:
        return answer.json()
    except ValueError:
        raise PlannerError(f"malformed reply: the body from {url} is not JSON") from None
