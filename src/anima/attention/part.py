"""Social attention as one of the runtime's parts: the camera, the vision thread, the voice
direction and the policy, prepared, started and stopped with the runtime.

:func:`anima.build.build` adds it when ``attention.enabled`` and there is something to attend
with: a camera (``vision.source`` other than ``none``), a microphone array (``listen.mics``,
heard through the agent's ears) or a Reachy Mini's daemon, whose own array's direction of
arrival it reads (``driver.type: reachy_mini``, ``attention.daemon_voice``). ``prepare``
makes the face detector (its process starts and loads the models there, beside the running
loop) and the camera; ``start`` starts attention (its ticks run in the engine's frame tap),
then the voices' and the vision thread and the camera; ``stop`` stops them in the reverse order
and lets the gaze go.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from anima.attention.pose_history import measured_lag
from anima.attention.service import Attention
from anima.clock import Clock, MonotonicClock
from anima.config import AnimaConfig, ReachyMiniDriverConfig
from anima.config.vision import SOURCES
from anima.events import Event, EventHub, WakeDetected
from anima.listening.direction.daemon import DaemonDirection
from anima.listening.direction.estimator import DirectionEstimator, DirectionSink
from anima.listening.direction.own_voice import OwnVoiceGate
from anima.motion.engine import MotionEngine
from anima.vision.seeing import SOURCES_SEEN_THERE, SeeingProcess
from anima.vision.types import Face, VideoFrame
from anima.vision.view import Mark
from anima.wire.attention import AttentionSnapshot

if TYPE_CHECKING:
    from anima.behaviour.controller import Behaviour
    from anima.listening.sources import AudioSource
    from anima.speech.reference import PlaybackReference
    from anima.vision.pipeline import VisionPipeline, VisionStats
    from anima.vision.types import Camera

log = logging.getLogger(__name__)


class AttentionPart:
    """See the module docstring. ``attention`` is the policy (its ``snapshot()`` is the
    state's ``attention``); ``voice_sink`` the array's frames' way in, when ``listen.mics``;
    ``daemon_voice`` the Reachy Mini daemon's direction of arrival, read without them."""

    def __init__(
        self,
        config: AnimaConfig,
        engine: MotionEngine,
        behaviour: Behaviour,
        clock: Clock,
        *,
        driver: object = None,
        playback: PlaybackReference | None = None,
        camera: Camera | None = None,
        events: EventHub | None = None,
    ) -> None:
        self.config = config
        self.clock = clock
        self._events = events
        self._unsubscribe: Callable[[], None] | None = None
        self.attention = Attention(
            engine,
            behaviour,
            clock,
            config.vision,
            config.attention,
            lag=measured_lag(driver),
            events=events,
        )
        self._camera = camera
        self._latest: tuple[VideoFrame, tuple[Face, ...]] | None = None
        self.pipeline: VisionPipeline | SeeingProcess | None = None
        self.voice_sink: DirectionSink | None = None
        if config.listen.mics:
            estimator = DirectionEstimator(
                config.listen.mics,
                self.attention.on_voice,
                reference=None if playback is None else playback.reader(),
                on_head=config.listen.mics_mount == "head",
            )
            self.voice_sink = DirectionSink(estimator, clock.now)
        self.daemon_voice: DaemonDirection | None = None
        driver_config = config.driver
        if (
            not config.listen.mics
            and config.attention.daemon_voice
            and isinstance(driver_config, ReachyMiniDriverConfig)
        ):
            self.daemon_voice = DaemonDirection(
                driver_config.host,
                driver_config.port,
                self.attention.on_voice,
                clock,
                reference=None if playback is None else playback.reader(),
            )

    @property
    def summary(self) -> str:
        """What it attends with, for ``anima serve``'s start-up lines."""
        with_what = []
        if self.config.vision.enabled:
            v = self.attention.vision  # with the body's camera where the config sets nothing
            with_what.append(f"{v.source} camera ({v.faces} faces, {v.hfov_deg:g}° wide)")
        if self.voice_sink is not None:
            listen = self.config.listen
            on = " on the head" if listen.mics_mount == "head" else ""
            with_what.append(f"a {len(listen.mics)}-microphone array{on}")
        if self.daemon_voice is not None:
            with_what.append("the Reachy Mini daemon's microphone array")
        return " and ".join(with_what) or "nothing (idle glances only)"

    def prepare(self) -> None:
        vision = self.attention.vision  # the camera's figures as attention projects with them
        if not vision.enabled:
            return
        camera = self._camera
        if (
            camera is None
            and vision.process
            and vision.source in SOURCES_SEEN_THERE
            and isinstance(self.clock, MonotonicClock)
        ):
            # the camera in the vision process too: OpenCV is never imported here
            from anima.vision.seeing import SeeingProcess

            self.pipeline = SeeingProcess(vision, self._on_faces, on_end=self._ended)
            return
        from anima.vision.faces import make_detector
        from anima.vision.pipeline import VisionPipeline

        detector = make_detector(vision)  # in its own process unless vision.process is false
        if camera is None:
            # the head's pose at a time: the simulated head camera films with the sent pose
            make = SOURCES.load(vision.source)
            camera = make(vision, self.clock, pose_at=self.attention.poses.head_at)
        if camera is None:
            detector.close()
            return
        self.pipeline = VisionPipeline(
            camera, detector, self._on_faces, clock=self.clock, on_end=self._ended
        )

    def _on_faces(self, frame: VideoFrame, faces: Sequence[Face]) -> None:
        self._latest = (frame, tuple(faces))  # one reference swapped: the dashboard's view
        self.attention.post_faces(frame, faces)  # read on the motion thread after its tick

    def view(self, quality: int = 70) -> bytes | None:
        """The newest frame the detector saw, as JPEG, with its faces' boxes (green; the one
        attention looks at, orange); None before the first frame or without a camera."""
        latest = self._latest
        if latest is None or self.pipeline is None:
            return None
        frame, faces = latest
        aim = self.attention.snapshot().azimuth_deg
        head = self.attention.poses.at(frame.t)
        marks: list[Mark] = []
        for face in faces:
            b = face.box
            sight = self.attention.camera.sight(b, frame.width, frame.height, head)
            looked_at = aim is not None and abs(math.degrees(sight.azimuth) - aim) < 5.0
            marks.append((b.x0, b.y0, b.x1, b.y1, face.score, looked_at))
        if isinstance(self.pipeline, SeeingProcess):  # the pixels are in the vision process
            return self.pipeline.view(marks, quality)
        from anima.vision.view import render

        return render(frame.image, marks, quality)

    def _ended(self, reason: str) -> None:
        if reason == "stopped":  # stopped by its owner (a stop, a start that failed): no news
            log.debug("vision: the camera was stopped")
            return
        log.info("vision: the camera's frames ended (%s); attention follows voices only", reason)

    def _heard(self, event: Event) -> None:
        """A barge-in (a voice over the robot): the voice is the person's, not the robot's
        own, so attention may turn to them while the robot stops."""
        if isinstance(event, WakeDetected) and event.source == "barge_in":
            for gate in self.own_voice_gates():
                gate.barge_in()

    def own_voice_gates(self) -> list[OwnVoiceGate]:
        """The gates that keep the robot's own voice from being a target, one per voice
        direction heard."""
        gates = [] if self.voice_sink is None else [self.voice_sink.estimator.own_voice]
        return gates if self.daemon_voice is None else [*gates, self.daemon_voice.own_voice]

    def start(self) -> None:
        self.attention.start()
        if self._events is not None and self.own_voice_gates():
            self._unsubscribe = self._events.subscribe(self._heard, WakeDetected.kind)
        if self.voice_sink is not None:
            self.voice_sink.start()
        if self.daemon_voice is not None:
            self.daemon_voice.start()
        if self.pipeline is not None:
            self.pipeline.start()

    def stop(self, timeout: float = 5.0) -> None:
        if self.pipeline is not None:
            self.pipeline.stop(timeout)
        if self.voice_sink is not None:
            self.voice_sink.stop(timeout)
        if self.daemon_voice is not None:
            self.daemon_voice.stop(timeout)
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.attention.stop(timeout)

    def snapshot(self) -> AttentionSnapshot:
        return self.attention.snapshot()

    def vision_stats(self) -> VisionStats | None:
        return None if self.pipeline is None else self.pipeline.stats()

    def ears(self, audio_in: str) -> AudioSource | None:
        """The agent's source for ``audio_in`` with every channel of the array going to the
        voice direction too (a multichannel ``.wav``, or the microphone opened with as many
        channels as ``listen.mics``); None when ``audio_in`` is another source (it is made as
        usual, and no voice direction is heard)."""
        if self.voice_sink is None:
            return None
        from anima.listening.sources import MicrophoneSource, WavSource, check_wav

        if audio_in.lower().endswith(".wav"):
            check_wav(audio_in)
            if self.config.listen.mics_mount == "head":
                log.warning(
                    "attention: %s is a recording, which does not turn with the head: with "
                    "listen.mics_mount head its directions are turned by the head's pose as if "
                    "it did (the robot chases the voice); a recording made with the head still "
                    "wants listen.mics_mount fixed",
                    audio_in,
                )
            return WavSource(audio_in, realtime=True, multi=self.voice_sink)
        if audio_in == "auto":
            from anima.listening.makers import make_source

            if make_source("auto") is None:  # no input device on this machine
                return None
        if audio_in in ("mic", "auto"):
            return MicrophoneSource(channels=len(self.config.listen.mics), multi=self.voice_sink)
        return None
