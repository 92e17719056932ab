"""The model's voice through anima's speech (both protocols): one voice stream per audio item,
paused, resumed and cut for barge-in, and what a cut tells the conversation's phase."""

from __future__ import annotations

import logging

from anima import commands as cmd
from anima.agent.port import RobotPort
from anima.agent.presence import Presence
from anima.agent.realtime import protocol as wire
from anima.errors import AnimaError

log = logging.getLogger(__name__)


class Voice:
    """The model's voice: one :class:`~anima.commands.VoiceStream` per audio item (OpenAI's
    ``item_id``, a Gemini turn), opened on its first audio, finished at its end, cut on a
    barge-in. Not thread-safe: the session calls it under its lock."""

    def __init__(self, robot: RobotPort, locale: str) -> None:
        self.robot, self.locale = robot, locale
        self.stream: cmd.VoiceStream | None = None
        self.item: str | None = None  # the audio item the stream plays
        self._mute_item: str | None = None  # an item whose audio must not (or cannot) play
        self._finished = False  # the stream was told finish()
        self._fed_ms = 0.0  # milliseconds of audio fed to the stream
        self._refused_item: str | None = None  # an item whose audio the stream refused
        self._paused: tuple[cmd.VoiceStream, str | None] | None = None  # held by pause()

    def play(self, item: str, pcm: bytes, rate: int) -> bool:
        """Feed ``pcm`` (PCM16 at ``rate``) of ``item``; True when it opened a new stream
        (the robot starts speaking)."""
        if item == self._mute_item:
            return False
        started = False
        if self.stream is None or item != self.item:
            self.finish()
            try:
                opened = self.robot.execute(
                    cmd.OpenVoiceStream(locale=self.locale, source="realtime")
                )
            except AnimaError as exc:
                log.warning("realtime: the model's voice cannot play: %s", exc)
                self._mute_item = item
                return False
            self.stream, self.item, self._finished = opened.stream, item, False
            self._fed_ms = 0.0
            started = True
        assert self.stream is not None
        try:
            self.stream.feed(pcm, rate)
        except AnimaError as exc:  # past what may wait unplayed: a server far too fast
            if self._refused_item != item:
                self._refused_item = item
                log.warning("realtime: audio refused (logged once per item): %s", exc)
            return started
        self._fed_ms += len(pcm) / (2 * rate / 1000)
        return started

    def words(self, text: str) -> None:
        if self.stream is not None:
            self.stream.words(text[: wire.MAX_TRANSCRIPT_DELTA_CHARS])

    def finish(self) -> None:
        """No more audio for the stream: it plays out."""
        if self.stream is not None and not self._finished:
            self.stream.finish()
            self._finished = True

    def pause(self) -> bool:
        """Hold the voice at the sample it reached (a voice began over it); True when a stream
        was paused."""
        stream = self.stream
        if stream is None or stream.done or not stream.pause():
            return False
        self._paused = (stream, self.item)
        return True

    def resume(self) -> bool:
        """Play on from where :meth:`pause` held it; True when a stream resumed."""
        paused, self._paused = self._paused, None
        return paused is not None and paused[0].resume()

    def cut(self) -> tuple[str | None, int | None]:
        """Stop the voice now: the item cut and the milliseconds of it played (None when
        nothing was playing). Its later audio stays silent."""
        paused, self._paused = self._paused, None
        if paused is not None and paused[0] is not self.stream and not paused[0].done:
            # paused, then the next item came (queued behind it): the paused one is what the
            # person heard, the next never sounded
            if self.stream is not None:
                self.stream.stop("interrupted")
            self.stream, self._mute_item = None, self.item
            return paused[1], paused[0].stop("interrupted")
        stream, item = self.stream, self.item
        played: int | None = None
        if stream is not None and not stream.done:
            played = stream.stop("interrupted")
        elif stream is not None and stream.played_ms() < self._fed_ms - 1:
            played = stream.played_ms()  # cut by someone else (an estop, a door's stop)
        self.stream = None
        self._mute_item = item  # its later deltas (sent before the cancel) stay silent
        return item, played


def after_cut(presence: Presence, reason: str, item: str | None, played: int | None) -> None:
    """A barge-in told: logged with what was played of ``item``; the conversation's phase
    interrupted (when the robot was speaking), then listening."""
    if played is not None:
        log.info("realtime: %s: stopped after %d ms of %s", reason, played, item)
        presence.to("interrupted", reason)
    presence.to("listening", reason)
