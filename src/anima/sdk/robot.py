"""``anima.Robot``: one facade for scripts, whether the runtime runs here or on the robot.

::

    from anima import Robot

    with Robot.connect("mqtt://localhost:1883", prefix="nadine") as robot:  # or http://host:8080
        robot.say("Hello! I am Nadine.", wait=True)
        robot.play("nod", wait=True)
        robot.look_at(1.0, 0.3, 0.1)

Everything is non-blocking unless ``wait=True``: ``say`` and ``play`` return handles that can be
waited on (``handle.wait(timeout)``), polled (``handle.done``) and cancelled (``handle.cancel()``).
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any

from anima.errors import ConfigError, RobotNotConnectedError
from anima.sdk.backend import Backend, RobotSnapshot

if TYPE_CHECKING:
    from anima.config import AnimaConfig
    from anima.events import Event
    from anima.runtime import Runtime
    from anima.sdk.handles import AnimationHandle, SpeechHandle
    from anima.sdk.humanoid import HumanoidActions


class Robot:
    """A robot to script. Build it with :meth:`local` or :meth:`connect`, then open it.

    Nothing starts or connects until :meth:`open` (or ``with``); :meth:`close` (or leaving the
    ``with`` block) stops it. A method called on a robot that is not open raises
    RobotNotConnectedError.
    """

    def __init__(self, backend: Backend, *, timeout: float = 30.0, locale: str = "en-US") -> None:
        """Use :meth:`local` or :meth:`connect`; ``timeout`` is the default wait in seconds."""
        self._backend = backend
        self.timeout = timeout  # seconds: default for wait=True, handle.wait() and open()
        self.locale = locale  # speech locale when say() is given none
        self._open = False

    # ------------------------------------------------------------------ construction
    @classmethod
    def local(
        cls,
        config: AnimaConfig | None = None,
        *,
        doors: bool = False,
        timeout: float = 30.0,
        **runtime_kwargs: Any,
    ) -> Robot:
        """A robot whose runtime runs in this process (the simulated robot by default), built
        from ``config`` as ``anima serve`` builds it (:func:`anima.build.build`): its humanoid
        link and its voice agent when the config turns them on.

        ``doors``: also serve the config's MQTT contract and dashboard (off by default: a
        script's robot opens no port unless asked). ``runtime_kwargs`` replace configured
        parts (``driver=``, ``tts=``, ``audio_sink=``, ``clock=``, ``body=``).
        """
        from anima.sdk.local import LocalBackend

        return cls(LocalBackend(config, doors=doors, **runtime_kwargs), timeout=timeout)

    @classmethod
    def connect(
        cls,
        url: str,
        *,
        prefix: str = "nadine",
        token: str | None = None,
        timeout: float = 30.0,
        username: str | None = None,
        password: str | None = None,
        tls_ca: str | None = None,
        tls_cert: str | None = None,
        tls_key: str | None = None,
    ) -> Robot:
        """A robot served by ``anima serve`` elsewhere: over MQTT (``mqtt://host:1883``, the
        topics under ``prefix``) or over the dashboard's REST API and WebSocket
        (``http://host:8080``, with the ``token`` when it needs one).

        A broker that wants a login: ``username``/``password`` (or
        ``mqtt://user:password@host``); TLS: ``mqtts://host:8883``, with ``tls_ca`` the
        broker's CA file (the system's CAs without it) and ``tls_cert``/``tls_key`` a client
        certificate. The connection is made by :meth:`open` (or ``with``).
        """
        scheme = url.split("://", 1)[0].lower() if "://" in url else ""
        if scheme in ("http", "https"):
            from anima.sdk.http import HttpBackend

            return cls(HttpBackend(url, token), timeout=timeout)
        if scheme not in ("mqtt", "mqtts"):
            raise ConfigError(
                f"robot address {url!r}: expected mqtt://HOST[:PORT], mqtts://HOST[:PORT] or "
                "http://HOST[:PORT]"
            )
        from anima.sdk.mqtt import MqttBackend
        from anima.wire.mqtt import Credentials

        credentials = Credentials(
            username=username,
            password=password,
            tls=tls_ca is not None or tls_cert is not None,
            tls_ca=tls_ca,
            tls_cert=tls_cert,
            tls_key=tls_key,
        )
        return cls(MqttBackend(url, prefix, credentials), timeout=timeout)

    # ------------------------------------------------------------------ lifecycle
    def open(self) -> Robot:
        """Start the local runtime, or connect and check that the robot is online."""
        if not self._open:
            self._backend.open(self.timeout)
            self._open = True
        return self

    def close(self) -> None:
        """Stop the local runtime (easing to rest) or disconnect; waiting handles fail."""
        if self._open:
            self._open = False
            self._backend.close()

    @property
    def is_open(self) -> bool:
        """True between :meth:`open` and :meth:`close`."""
        return self._open

    def __enter__(self) -> Robot:
        return self.open()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Robot({self._backend.description}, {'open' if self._open else 'closed'})"

    def _b(self) -> Backend:
        if not self._open:
            raise RobotNotConnectedError(
                f"the robot ({self._backend.description}) is not open: use `with robot:` or "
                "robot.open() first"
            )
        return self._backend

    # ------------------------------------------------------------------ speech
    def say(
        self,
        text: str,
        locale: str | None = None,
        wait: bool = False,
        *,
        timeout: float | None = None,
    ) -> SpeechHandle:
        """Speak ``text`` (lips in sync); with ``wait``, return after its ``end_speak``.

        ``text`` may time gestures to its words: ``"Hello! ^start(nod) Nice to meet you."``
        (annotated speech: ``^start``, ``^stop``, ``^wait``, ``^run``, ``^mode``; docs/speech.md).
        A bad marker or an unknown animation is refused like an unknown name in :meth:`play`.
        """
        handle = self._b().say(text, locale or self.locale, self.timeout)
        if wait:
            handle.wait(timeout)
        return handle

    def stop_speaking(self) -> None:
        """Interrupt the current utterance and drop those waiting (barge-in)."""
        self._b().stop_speaking()

    # ------------------------------------------------------------------ motion
    def play(
        self, animation: str, wait: bool = False, *, timeout: float | None = None
    ) -> AnimationHandle:
        """Play a library animation (``nod``, ``LOOKUP_Waving``; any case, or an alias the
        robot's library resolves: ``wave``); ``wait`` for its end, whose ``animation_done``
        names the library's animation.

        An unknown name (with the closest names in its message) raises UnknownAnimationError
        in-process and CommandRejectedByRobotError
        at once over REST; over MQTT the refusal arrives later, so ``wait`` (or
        ``handle.wait()``) raises CommandRejectedByRobotError.
        """
        handle = self._b().play(animation, self.timeout)
        if wait:
            handle.wait(timeout)
        return handle

    def stop_animation(self) -> None:
        """Drop queued animations and bring the running one to a smooth hold."""
        self._b().stop_animation()

    def look_at(self, x: float, y: float, z: float) -> None:
        """Turn head and eyes to a point: metres in the head frame, x forward, y left, z up.

        A point farther than 100 m on an axis is refused (a unit mistake), at every door."""
        self._b().look_at(x, y, z)

    def look_at_target(self, posture: str) -> None:
        """Take a gaze posture (``Posture_LookAtInterviewer``) and hold it."""
        self._b().look_at_target(posture)

    def end_look_at(self) -> None:
        """Release the gaze posture; head and eyes go back to the default."""
        self._b().end_look_at()

    def estop(self) -> None:
        """Emergency stop: hold the current frame and refuse moves until :meth:`reset`."""
        self._b().estop()

    def reset(self) -> None:
        """Release the emergency stop."""
        self._b().reset()

    # ------------------------------------------------------------------ state and events
    def state(self) -> RobotSnapshot:
        """The robot's state now (over MQTT: the last state message, 4 a second; over REST:
        ``GET /api/state``)."""
        return self._b().state(self.timeout)

    def on(self, kind: str, fn: Callable[[Event], None]) -> Callable[[], None]:
        """Call ``fn(event)`` on each event of ``kind``; returns a function that unsubscribes.

        Kinds: ``start_speak`` (SpeechStarted), ``end_speak`` (SpeechEnded), ``animation_done``
        (MoveFinished), ``error`` (CommandRejected), ``notice`` (Notice), from anima.events.
        ``fn`` runs on an event thread, never the robot's motion loop: keep it short.
        """
        return self._b().subscribe(kind, fn)

    @property
    def humanoid(self) -> HumanoidActions:
        """The linked humanoid's actions (local runtime with ``humanoid.type`` sim or adam);
        NotSupportedError otherwise."""
        return self._b().humanoid()

    @property
    def runtime(self) -> Runtime:
        """The in-process runtime (``Robot.local`` only): its driver, engine, events."""
        from anima.errors import NotSupportedError
        from anima.sdk.local import LocalBackend

        backend = self._b()
        if not isinstance(backend, LocalBackend) or backend.runtime is None:
            raise NotSupportedError(f"{backend.description}: no runtime in this process")
        return backend.runtime
