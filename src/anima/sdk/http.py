"""The Robot's backend for a running ``anima serve``, over its REST API and WebSocket
(``docs/web.md``).

Commands are POSTed with httpx. A command the robot refuses (an unknown animation, a bad value,
an emergency stop latched) is refused in the answer, so the call itself raises
CommandRejectedByRobotError; a refusal the answer could not wait for (a command queued over 1 s)
arrives later as a ``command_rejected`` event and fails the handle it belongs to. Events come
from the dashboard's WebSocket (``/ws``), read on a thread of this backend; a ``say()`` is
paired with the first ``start_speak`` carrying its text that arrives after it was sent, then
with that id's ``end_speak``. ``state()`` asks ``/api/state``.
When the stream drops (the runtime restarts), what waited on its events fails with
RobotNotConnectedError and the stream reconnects by itself (0.25-2 s backoff); ``say`` and
``play`` wait for it to be back before they send.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote, urlsplit

from anima.errors import (
    AnimaError,
    CommandRejectedByRobotError,
    ConfigError,
    MissingDependencyError,
    NotSupportedError,
    RobotNotConnectedError,
    RobotTimeoutError,
)
from anima.events import (
    CommandRejected,
    Event,
    EventHub,
    MoveFinished,
    Notice,
    SpeechEnded,
    SpeechStarted,
)
from anima.humanoid.commanded import poll_for_mode
from anima.sdk.backend import (
    IDLE_ANIMATIONS,
    RobotSnapshot,
    check_point,
    hub_kind,
    snapshot_from_state,
)
from anima.sdk.handles import AnimationHandle, HandleBook, SpeechHandle
from anima.sdk.humanoid import HumanoidActions, robot_state
from anima.wire.events import event_from_fields
from anima.wire.jsontypes import JsonObject
from anima.wire.payloads import excerpt
from anima.wire.tls import client_tls

if TYPE_CHECKING:
    from anima.humanoid.spec import RobotState

log = logging.getLogger(__name__)
RECONNECT_S = (0.25, 2.0)  # the event stream's reconnect backoff, first and longest wait
_H = TypeVar("_H", SpeechHandle, AnimationHandle)


def parse_http_url(url: str) -> str:
    """``http://host:8080`` (or https, with or without a trailing ``/``) → the base URL."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"robot address {url!r}: expected http://HOST[:PORT]")
    try:
        _ = parts.port
    except ValueError:
        raise ConfigError(f"robot address {url!r}: bad port") from None
    return f"{parts.scheme}://{parts.netloc}"


class HttpBackend:
    """A client of one robot's REST API and WebSocket; ``open()`` connects, ``close()`` ends."""

    def __init__(self, url: str, token: str | None = None) -> None:
        self.base = parse_http_url(url)
        self.description = f"{self.base} (REST)"
        self._token = token
        self._book = HandleBook()
        self._events = EventHub()  # user callbacks run on its thread, never on the reader's
        self._http: Any = None  # httpx.Client
        self._ws: Any = None  # websockets.sync.client.ClientConnection
        self._reader: threading.Thread | None = None
        self._animations: frozenset[str] = frozenset()  # the library's, from the hello
        self._closing = threading.Event()
        self._streaming = threading.Event()  # the WebSocket is connected

    # ------------------------------------------------------------------ lifecycle
    def open(self, timeout: float) -> None:
        try:
            import httpx
            import websockets.sync.client  # noqa: F401
            from websockets.exceptions import WebSocketException
        except ImportError as exc:
            raise MissingDependencyError("httpx/websockets", "web") from exc
        headers = {"authorization": f"Bearer {self._token}"} if self._token else {}
        self._http = httpx.Client(
            base_url=self.base, headers=headers, timeout=timeout, verify=client_tls()
        )
        self._closing.clear()
        self._events.start()
        try:
            self._get_state()  # reachable, and the token is right
            try:
                self._ws = self._connect_stream(timeout)
            except (OSError, TimeoutError, ValueError, WebSocketException) as exc:
                raise RobotNotConnectedError(f"{self.base}/ws: no event stream: {exc}") from exc
        except BaseException:
            self.close()
            raise
        self._streaming.set()
        self._reader = threading.Thread(target=self._read, name="anima-sdk-ws", daemon=True)
        self._reader.start()

    def _connect_stream(self, timeout: float) -> Any:
        """The WebSocket, its hello read (the library's animation names kept)."""
        from websockets.sync.client import connect

        ws_base = "ws" + self.base[4:]
        query = f"?token={quote(self._token)}" if self._token else ""
        ws = connect(f"{ws_base}/ws{query}", open_timeout=timeout, max_size=2**24)
        try:
            hello = json.loads(ws.recv(timeout=timeout))
            if hello.get("type") != "hello":
                raise RobotNotConnectedError(f"{self.base}/ws did not start with its hello")
        except BaseException:
            ws.close()
            raise
        names = hello.get("animations", {})
        self._animations = frozenset(names.get("gestures", []) + names.get("postures", []))
        return ws

    def close(self) -> None:
        self._closing.set()
        self._streaming.clear()
        ws, self._ws = self._ws, None
        if ws is not None:
            ws.close()
        if self._reader is not None:
            self._reader.join(5.0)
            self._reader = None
        http, self._http = self._http, None
        if http is not None:
            http.close()
        self._events.stop()
        self._book.close(RobotNotConnectedError(f"the connection to {self.description} closed"))

    # ------------------------------------------------------------------ the event stream
    def _read(self) -> None:
        """Read events until close(); when the stream drops (the runtime restarts), fail what
        was waiting on its events and reconnect with backoff (0.25-2 s), as paho does."""
        from websockets.exceptions import ConnectionClosed, WebSocketException

        delay = RECONNECT_S[0]
        while not self._closing.is_set():
            ws = self._ws
            if ws is None:
                try:
                    ws = self._connect_stream(RECONNECT_S[1])
                except (OSError, TimeoutError, ValueError, AnimaError, WebSocketException):
                    self._closing.wait(delay)
                    delay = min(delay * 2, RECONNECT_S[1])
                    continue
                if self._closing.is_set():
                    ws.close()
                    return
                self._ws, delay = ws, RECONNECT_S[0]
                self._streaming.set()
                log.info("the event stream from %s is back", self.base)
            try:
                for text in ws:
                    self._on_message(text)
            except ConnectionClosed:
                pass
            if self._closing.is_set():
                return
            log.warning("the event stream from %s closed: reconnecting", self.base)
            self._streaming.clear()
            self._ws = None
            self._book.close(RobotNotConnectedError(f"the event stream from {self.base} closed"))

    def _on_message(self, text: str | bytes) -> None:
        msg = json.loads(text)
        if msg.get("type") == "event":
            try:
                self._on_event(msg)
            except (KeyError, TypeError, ValueError) as exc:  # a newer runtime's event
                log.warning("ignored an event from %s: %s", self.base, exc)

    def _on_event(self, data: JsonObject) -> None:
        event = event_from_fields(data)  # the door's own encoding (anima.wire.events)
        book = self._book
        if isinstance(event, SpeechStarted):
            book.speech_started(event.utterance, event.text)
        elif isinstance(event, SpeechEnded):
            book.speech_ended(event.utterance, event.reason)
        elif isinstance(event, MoveFinished):
            if event.name not in self._animations:
                return  # a posture's reset, a gaze move: not an animation asked for
            book.animation_ended(event.name, event.reason or "done")
        elif isinstance(event, CommandRejected):
            self._refused(event)
        elif not isinstance(event, Notice):
            return  # the SDK's subscribers hear these five kinds (sdk/backend.py)
        self._events.publish(event)

    def _refused(self, event: CommandRejected) -> None:
        if event.source != "rest":
            return
        error = CommandRejectedByRobotError(event.command, event.reason)
        self._book.refused_command(event.command.removeprefix("/api/"), event.argument, error)

    # ------------------------------------------------------------------ commands
    def request(self, method: str, path: str, body: JsonObject | None = None) -> Any:
        """``method /api/<path>`` with a JSON ``body``; the answer's JSON. A refusal raises
        CommandRejectedByRobotError with the robot's reason; no answer, RobotNotConnectedError
        (or RobotTimeoutError)."""
        import httpx

        http = self._http
        if http is None:
            raise RobotNotConnectedError(f"not connected to {self.description}")
        shown = f"{method} /api/{path}"
        try:
            if method == "GET":
                answer = http.get(f"/api/{path}")
            else:
                content = b"" if body is None else _encode(body)
                headers = {"content-type": "application/json"}
                answer = http.request(method, f"/api/{path}", content=content, headers=headers)
        except httpx.TimeoutException as exc:
            raise RobotTimeoutError(f"{shown}: no answer from {self.base}") from exc
        except httpx.HTTPError as exc:
            raise RobotNotConnectedError(
                f"{shown}: no anima dashboard answers at {self.base}: {exc} (is `anima serve` "
                "running with the web door?)"
            ) from exc
        if answer.status_code == 401:
            raise RobotNotConnectedError(f"{self.base}: {_reason(answer)}")
        if answer.status_code not in (200, 202):
            raise CommandRejectedByRobotError(f"/api/{path}", _reason(answer))
        return answer.json()

    def _post(self, path: str, body: JsonObject | None = None) -> None:
        self.request("POST", path, body)

    def say(self, text: str, locale: str, timeout: float) -> SpeechHandle:
        body = {"text": text, "locale": locale}
        handle = SpeechHandle(text, self.stop_speaking, timeout)
        handle.payload = excerpt(_encode(body))
        return self._sent(handle, "speak", body, timeout)

    def stop_speaking(self) -> None:
        self._post("stop_speak")

    def play(self, name: str, timeout: float) -> AnimationHandle:
        body = {"name": name}
        handle = AnimationHandle(name, lambda: self.cancel_animation(name), timeout)
        handle.payload = excerpt(_encode(body))
        if name in IDLE_ANIMATIONS:  # a guess: the wire does not say (see IDLE_ANIMATIONS)
            self._post("animation", body)
            handle.finish("done")
            return handle
        return self._sent(handle, "animation", body, timeout)

    def _sent(self, handle: _H, path: str, body: JsonObject, timeout: float) -> _H:
        """Send a command whose end comes as an event: only while the event stream is up
        (after a drop, up to ``timeout`` for it to come back), so the end cannot be missed."""
        if not self._streaming.wait(timeout):
            raise RobotNotConnectedError(
                f"the event stream from {self.base} is down (reconnecting): {path} not sent"
            )
        with self._book.sending(handle):
            self._post(path, body)
        return handle

    def stop_animation(self) -> None:
        self._post("stop_animation")

    def cancel_animation(self, name: str) -> None:
        self._post("cancel_animation", {"name": name})

    def look_at(self, x: float, y: float, z: float) -> None:
        check_point(x, y, z)
        self._post("look_at", {"x": x, "y": y, "z": z})

    def look_at_target(self, name: str) -> None:
        self._post("look_at_target", {"name": name})

    def end_look_at(self) -> None:
        # as in the MQTT contract: the default posture as a gaze target clears the latch
        self._post("look_at_target", {"name": "LOOKUPPostureDefault"})

    def estop(self) -> None:
        self._post("estop")

    def reset(self) -> None:
        self._post("reset")

    # ------------------------------------------------------------------ state and events
    def _get_state(self) -> JsonObject:
        try:
            data: JsonObject = self.request("GET", "state")
        except CommandRejectedByRobotError as exc:
            raise RobotNotConnectedError(f"GET {self.base}/api/state: {exc.reason}") from exc
        return data

    def state(self, timeout: float) -> RobotSnapshot:
        return snapshot_from_state(self._get_state())

    def subscribe(self, kind: str, fn: Callable[[Event], None]) -> Callable[[], None]:
        return self._events.subscribe(fn, hub_kind(kind))

    def humanoid(self) -> HumanoidActions:
        control = RestHumanoid(self)
        try:
            control.state()
        except CommandRejectedByRobotError as exc:
            raise NotSupportedError(f"{self.base}: {exc.reason}") from None
        return HumanoidActions(control)


class RestHumanoid:
    """A :class:`~anima.sdk.humanoid.HumanoidControl` over the served runtime's
    ``/api/humanoid/…`` endpoints (its AdamClient checks the enable lists there)."""

    def __init__(self, backend: HttpBackend, poll_s: float = 0.1) -> None:
        self._backend = backend
        self.poll_s = poll_s

    def state(self) -> RobotState:
        return robot_state(self._backend.request("GET", "humanoid/state"))

    def wait_for_mode(self, mode: str, timeout_s: float = 15.0) -> RobotState:
        return poll_for_mode(self.state, mode, timeout_s, self.poll_s)

    def _command(self, path: str, body: JsonObject) -> str:
        return str(self._backend.request("POST", f"humanoid/{path}", body)["answer"])

    def set_mode(self, mode: str) -> str:
        return self._command("mode", {"mode": mode})

    def stand_motion(self, motion: str) -> str:
        return self._command("motion", {"motion": motion})

    def posture(self, pitch: float, roll: float, yaw: float, height: float) -> str:
        return self._command(
            "posture", {"pitch": pitch, "roll": roll, "yaw": yaw, "height": height}
        )

    def speed(self, x: float, y: float, yaw: float, *, continuous: bool = False) -> str:
        if not continuous:
            raise NotSupportedError("over REST the humanoid walks continuously (continuous=True)")
        return self._command("speed", {"x": x, "y": y, "yaw": yaw})


def _encode(body: JsonObject) -> bytes:
    return json.dumps(body, ensure_ascii=False).encode("utf-8")


def _reason(answer: Any) -> str:
    """The runtime's reason in a refusal (``{"v":1,"path":…,"reason":…}``), else the status."""
    try:
        reason = answer.json().get("reason")
    except ValueError:
        reason = None
    return str(reason) if reason else f"HTTP {answer.status_code} {answer.reason_phrase}"
