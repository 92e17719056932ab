"""The person's turns in a realtime session, decided by anima's duplex rules rather than the
server's VAD alone (docs/realtime.md, *Barge-in*).

The session is asked for server VAD that neither cancels a response nor starts one by itself
(``interrupt_response`` and ``create_response`` false): the server reports the voice
(``input_audio_buffer.speech_started`` / ``speech_stopped``) and what it heard
(``conversation.item.input_audio_transcription.delta`` / ``completed``), and :class:`Duplex`
decides with the conversation's :class:`~anima.agent.barge_in.BargeIn`:

- a voice while the robot is silent is the person's turn: a response still being made is
  canceled, and at ``speech_stopped`` anima asks for the answer (``response.create``);
- a voice over the robot opens a candidate. A **stop word** in the transcript so far stops the
  robot at once; a voice still going after ``listen.barge_in_s`` (server VAD: no
  ``speech_stopped`` yet) whose words are not a backchannel stops it then — with no words yet
  too, since a server transcribes only after the turn; a **backchannel** ("mm-hm", "yeah") as
  the first words lets it go on, and the turn's final transcript decides a short voice: a
  backchannel or nothing lets the robot go on (no answer is asked for), other words stop it
  and are answered.

Whether the voice still goes on at ``barge_in_s`` is anima's own VAD's answer when the agent
hears the microphone (:meth:`Duplex.listen_with`: the offline rule, ``HELD_SHARE`` of the last
``barge_in_s`` of frames voiced, and its last 0.1 s; checked again every 0.1 s while the server
hears the voice, so a pause between words is not the voice's end), else the server's (no
``speech_stopped`` yet — which comes ``silence_duration_ms`` after the voice ends, so a
backchannel of 0.3 s or more could pass for a held voice).

Stopping is :meth:`Session.interrupt <anima.agent.realtime.session.Session.interrupt>`: the
voice cut, ``response.cancel``, ``conversation.item.truncate`` at exactly what was played.

**Yield at onset, then decide** (with anima's VAD and ``yield_at_onset``): a rule that waits
for a word or for ``barge_in_s`` cannot stop the robot within 100 ms of the voice's onset, so
the robot's voice is *paused* at the onset — :data:`ONSET_FRAMES` frames in a row while it
speaks that the VAD calls voiced or whose level stands :class:`~anima.listening.vad.EnergyVad`'s
margin over the room's floor (a word's unvoiced start: the VAD hears "stop" at its vowel), or
the server's ``speech_started`` if that comes first — and the rules above decide
on: stop (the cut, at the pause's sample), or go on (a backchannel, no words) and the voice
resumes from the same sample. A **false onset** — no ``speech_started`` within ``confirm_s``
(:data:`CONFIRM_S`), or the local voice over again for :data:`QUIET_FRAMES` frames with none —
resumes at once and is counted (:attr:`Duplex.false_onsets`, logged): residual echo of the
robot's own voice would otherwise make it stutter. A pause never outlasts :data:`MAX_PAUSE_S`.

**A server that reports no voice** (Gemini Live: its VAD decides the turns alone and tells
only ``interrupted``, while the model is still generating — not while the robot plays an answer
already received, seconds of it): with :meth:`listen_with` ``local_voice``, anima's VAD is the
voice's start (:data:`ONSET_FRAMES` voiced frames, which also confirms a pause) and its end
(:data:`LOCAL_END_FRAMES` unvoiced), and :meth:`words` feeds the server's transcript of the
person (Gemini's ``inputTranscription``) to the same rules; a voice that ended undecided takes
the words heard within :data:`WORDS_GRACE_S` as its final. The turns stay the server's: a voice
while the robot is silent is not acted on, and nothing asks for an answer.

Threads: :meth:`handle` on the connection's reader, :meth:`hear` (and so a pause) on the
microphone's, the sustain, final and yield checks on the robot's timer thread; one lock guards
the round, and no callback (pause, resume, interrupt, respond) is called under it.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from anima.agent.barge_in import BargeIn, classify
from anima.agent.port import RobotPort
from anima.audio import FRAME_SAMPLES, SAMPLE_RATE, Frame
from anima.listening.recorder import HELD_SHARE
from anima.listening.vad import EnergyVad

if TYPE_CHECKING:
    from anima.listening.vad import Vad

log = logging.getLogger(__name__)

SPEECH_STARTED = "input_audio_buffer.speech_started"
SPEECH_STOPPED = "input_audio_buffer.speech_stopped"
HEARD_DELTA = "conversation.item.input_audio_transcription.delta"
HEARD = "conversation.item.input_audio_transcription.completed"
EVENTS = frozenset({SPEECH_STARTED, SPEECH_STOPPED, HEARD_DELTA, HEARD})
FINAL_WAIT_S = 3.0  # a short voice over the robot with no final transcript by then: no words
MAX_HEARD_CHARS = 400  # of one turn's transcript, kept for the rule
RECHECK_S = 0.1  # a held voice checked again this often while the server hears it
VOICED = 0.5  # the local VAD's speech probability of a voiced frame (listen's start threshold)
LAST_FRAMES = 3  # a held voice is voiced in its last 3 frames (96 ms: longer than a word gap)
ONSET_FRAMES = 2  # voiced frames in a row over the robot (64 ms) that pause its voice at once
# no speech_started this long after a local onset: a false one (the echo's remains, a knock),
# and the voice resumes. The server's VAD reports a voice ~30-100 ms after its onset (its own
# window and the socket; 33 ms against the bench's ears); 0.6 s leaves a loaded server or
# network room while a false onset costs the person at most 0.6 s of the robot's silence
CONFIRM_S = 0.6
QUIET_FRAMES = 8  # or the local voice over again this long (256 ms) and nothing confirmed it
MAX_PAUSE_S = 6.0  # a pause no rule decided by then (a lost socket): the voice goes on
# local_voice (a server that reports no voice): anima's VAD unvoiced this long ends the voice
# (512 ms, as OpenAI's server VAD's default silence_duration_ms of 500), and a voice that ended
# undecided waits this long for the last of its words (the server transcribes as it hears)
LOCAL_END_FRAMES = 16
WORDS_GRACE_S = 0.3


class Duplex:
    """One person's voice at a time, from ``speech_started`` to the decision (module doc).
    ``interrupt(reason)`` stops the robot (cut, cancel, truncate); ``respond()`` asks for the
    model's answer."""

    def __init__(
        self,
        robot: RobotPort,
        *,
        interrupt: Callable[[str], object],
        respond: Callable[[], None],
        pause: Callable[[], bool] | None = None,
        resume: Callable[[], bool] | None = None,
        barge_in_s: float = 0.8,
        final_wait_s: float = FINAL_WAIT_S,
        confirm_s: float = CONFIRM_S,
    ) -> None:
        """``pause()``: hold the robot's voice where it is (True when it did), ``resume()``:
        play on from there — the yield at onset (module doc), with :meth:`listen_with`."""
        self.robot = robot
        self.barge = BargeIn(sustain_s=barge_in_s)
        self._interrupt, self._respond = interrupt, respond
        self._pause, self._resume = pause, resume
        self.final_wait_s = final_wait_s
        self.confirm_s = confirm_s
        self._lock = threading.Lock()
        # a pause and its end in order (a resume never overtakes the pause it ends); taken
        # before the session's lock, never under this one's
        self._yielding = threading.Lock()
        self._round = 0  # voices so far: a timer of an earlier one does nothing
        self._over = False  # this voice came over the robot (a candidate)
        self._voice = False  # the server hears it still (no speech_stopped yet)
        self._awaiting = False  # the voice ended undecided: its final decides
        self._heard = ""  # the transcript of this voice so far
        self._passed = False  # this voice was let pass (a backchannel): no answer
        self._let_go = False  # its words let the robot go on (a backchannel): no pause for it
        self.stops: list[str] = []  # why the robot was stopped, each time (newest last)
        self._vad: Vad | None = None  # anima's own VAD on the microphone (listen_with)
        frames = max(1, round(barge_in_s * SAMPLE_RATE / FRAME_SAMPLES))
        self._voiced: collections.deque[bool] = collections.deque(maxlen=frames)
        self.yield_at_onset = False  # pause the robot's voice at an onset (listen_with)
        self._run = 0  # voiced frames in a row, to now
        self._yielded = False  # the robot's voice is paused for this voice, undecided
        self._confirmed = False  # ...and the server heard the voice (speech_started)
        self._quiet = 0  # unvoiced frames in a row since the pause, while unconfirmed
        self._yield_round = 0  # pauses so far: a timer of an earlier one does nothing
        self._yielded_at = 0.0  # when the pause began (the robot's clock)
        self.yields = 0  # pauses at an onset
        self.false_onsets = 0  # of them, resumed because nothing confirmed the voice
        self.pauses_s: collections.deque[float] = collections.deque(maxlen=100)  # resumed ones
        self.local_voice = False  # the voice's start and end are anima's VAD's (listen_with)
        self._voiced_run = 0  # local_voice: voiced frames in a row, to now
        self._unvoiced_run = 0  # ... and unvoiced ones

    def listen_with(
        self, vad: Vad, *, yield_at_onset: bool = True, local_voice: bool = False
    ) -> None:
        """Hear the microphone (:meth:`hear`) with ``vad`` (loaded) for the held-voice rule
        and, ``yield_at_onset``, to pause the robot's voice at a voice's onset;
        ``local_voice``: ``vad`` also says when a voice starts and ends (module doc)."""
        self._vad = vad
        self._level = EnergyVad()  # the onset's second ear: the frame's level over the floor
        self.yield_at_onset = yield_at_onset and self._pause is not None
        self.local_voice = local_voice

    def hear(self, frame: Frame) -> None:
        """One 16 kHz frame of the microphone (the source's thread)."""
        if self._vad is None or len(frame) != FRAME_SAMPLES:
            return
        voiced = self._vad.probability(frame) >= VOICED
        # the onset by either: the level catches a word's unvoiced start ("stop": Silero hears
        # its vowel 110-160 ms after the "s", the level 45-70 ms), the VAD a quiet voice
        sound = voiced or self._level.probability(frame) >= VOICED
        with self._lock:
            self._voiced.append(voiced)
            self._run = self._run + 1 if sound else 0
            onset = self.yield_at_onset and self._run == ONSET_FRAMES and not self._yielded
            onset = onset and not (self._voice and self._over and self._let_go)
            false = False
            if self._yielded and not self._confirmed:
                self._quiet = 0 if sound else self._quiet + 1
                false = self._quiet == QUIET_FRAMES
            round_ = self._yield_round
            started = stopped = False
            if self.local_voice:
                self._voiced_run = self._voiced_run + 1 if voiced else 0
                self._unvoiced_run = 0 if voiced else self._unvoiced_run + 1
                started = not self._voice and self._voiced_run == ONSET_FRAMES
                stopped = self._voice and self._unvoiced_run == LOCAL_END_FRAMES
        if onset and self.robot.speaking:
            self._yield("a voice began over the robot")
        elif false:
            self._unconfirmed(round_, f"the voice was over in {QUIET_FRAMES} frames")
        if started:
            self._started()
        elif stopped:
            self._stopped()

    @property
    def voice_open(self) -> bool:
        """A voice of the person's is open (it began and has not ended), or its words are
        awaited: words heard now belong to it, and a new voice cannot begin until it ends."""
        with self._lock:
            return self._voice or self._awaiting

    def words(self, text: str) -> None:
        """The server's transcript of the person, as it hears (``local_voice``: Gemini's
        ``inputTranscription``); words with no voice of anima's VAD open are not acted on."""
        with self._lock:
            if not self.local_voice or self._round == 0 or not (self._voice or self._awaiting):
                return
        self._partial(text)

    # ------------------------------------------------------------------ yield at onset
    def _yield(self, why: str) -> None:
        """Pause the robot's voice until the rules decide (module doc)."""
        assert self._pause is not None
        with self._yielding:
            if self._yielded or not self._pause():
                return  # nothing playing (or paused already)
            with self._lock:
                self._yielded, self._quiet = True, 0
                self._confirmed = self._voice and self._over  # the server heard it first
                self._yield_round += 1
                round_, confirmed = self._yield_round, self._confirmed
                self._yielded_at = self.robot.clock.now()
            self.yields += 1
        log.info("realtime barge-in: %s: the robot's voice pauses", why)
        if not confirmed:
            self.robot.call_later(self.confirm_s, lambda: self._unconfirmed(round_, None))
        self.robot.call_later(MAX_PAUSE_S, lambda: self._go_on(round_, "undecided too long"))

    def _unconfirmed(self, round_: int, why: str | None) -> None:
        with self._lock:
            if round_ != self._yield_round or not self._yielded or self._confirmed:
                return
            self.false_onsets += 1
            count = self.false_onsets
        why = why or f"no speech_started within {self.confirm_s:g} s"
        log.info("realtime barge-in: a false onset (%s; %d so far): the voice resumes", why, count)
        self._go_on(round_, "a false onset")

    def _go_on(self, round_: int | None, why: str) -> None:
        """The voice over the robot lets it go on: its paused voice resumes (``round_``: only
        if still that pause; None: whichever)."""
        with self._yielding:
            with self._lock:
                if not self._yielded or (round_ is not None and round_ != self._yield_round):
                    return
                self._yielded = False
                self._yield_round += 1
                paused_s = self.robot.clock.now() - self._yielded_at
                self.pauses_s.append(paused_s)
            assert self._resume is not None
            resumed = self._resume()
        if resumed:
            log.info("realtime barge-in: %s: resumed after %.0f ms", why, paused_s * 1000)

    def yield_over(self) -> None:
        """The robot's voice was cut (or stopped by someone else): no pause to end."""
        with self._yielding, self._lock:
            if self._yielded:
                self._yielded = False
                self._yield_round += 1

    def _held(self) -> bool:
        """The voice goes on now: the local VAD's window (the offline rule) when there is one,
        else the server's (no speech_stopped yet)."""
        with self._lock:
            if self._vad is None or not self._voice:
                return self._voice
            frames = list(self._voiced)
        full = len(frames) == self._voiced.maxlen
        # voiced in its last 0.1 s: a pause between two words is not the voice's end
        recent = any(frames[-LAST_FRAMES:])
        return full and recent and sum(frames) >= HELD_SHARE * len(frames)

    def handle(self, kind: str, event: dict[str, Any]) -> None:
        if kind == SPEECH_STARTED:
            self._started()
        elif kind == SPEECH_STOPPED:
            self._stopped()
        elif kind == HEARD_DELTA:
            delta = event.get("delta")
            if isinstance(delta, str):
                self._partial(delta)
        elif kind == HEARD:
            text = event.get("transcript")
            self._final(text if isinstance(text, str) else "")

    # ------------------------------------------------------------------ the server's VAD
    def _started(self) -> None:
        over = self.robot.speaking
        with self._lock:
            self._round += 1
            self._voice, self._awaiting, self._heard = True, False, ""
            self._passed = self._let_go = False
            self._over = over
            round_ = self._round
            self._confirmed = self._confirmed or self._yielded
            pause = self.yield_at_onset and over and not self._yielded
        if not over:  # the person's turn: a response still being made gives way
            if not self.local_voice:  # (a server deciding turns alone does that itself)
                self._interrupt("the person spoke")
            return
        self.barge.open()
        if pause:  # the server heard the voice before anima's VAD did
            self._yield("speech_started over the robot")
        self.robot.call_later(self.barge.sustain_s, lambda: self._sustained(round_))

    def _stopped(self) -> None:
        with self._lock:
            self._voice = False
            round_ = self._round
            undecided = self._over and self.barge.pending
            self._awaiting = undecided
            passed = self._over and self._passed
        if passed:
            return  # a backchannel already let pass: the robot goes on, nothing to answer
        if not undecided:
            self._answer()  # the turn ended (or it stopped the robot): the model answers
            return
        if self.local_voice:  # no final transcript comes: the words heard by then are it
            self.robot.call_later(WORDS_GRACE_S, lambda: self._heard_final(round_))
            return
        self.robot.call_later(self.final_wait_s, lambda: self._no_final(round_))

    def _heard_final(self, round_: int) -> None:
        with self._lock:
            if round_ != self._round or not self._awaiting:
                return
            heard = self._heard
        self._final(heard)

    def _sustained(self, round_: int) -> None:
        with self._lock:
            if round_ != self._round or not self._voice:
                return
        if self.barge.on_sustained(self._held(), words_needed=False):
            self._stop(f"a voice over the robot for {self.barge.sustain_s:g} s")
        elif self.barge.pending:  # a pause between words, maybe: look again
            self.robot.call_later(RECHECK_S, lambda: self._sustained(round_))

    # ------------------------------------------------------------------ the transcript
    def _partial(self, delta: str) -> None:
        with self._lock:
            self._heard = (self._heard + delta)[:MAX_HEARD_CHARS]
            heard, over = self._heard, self._over
        if over and self.barge.on_partial(heard):
            self._stop(f"heard {heard.strip()[:40]!r} over the robot")
        elif over and classify(heard) == "backchannel":
            with self._lock:
                self._let_go = True  # its first words: the robot goes on (BargeIn's rule)
            self._go_on(None, f"heard {heard.strip()[:40]!r}, a backchannel")

    def _final(self, text: str) -> None:
        with self._lock:
            awaiting, self._awaiting = self._awaiting, False
            over = self._over
        if not over:
            return
        decision = self.barge.on_final(text[:MAX_HEARD_CHARS])
        heard = text.strip()[:40]
        if decision == "go_on":
            with self._lock:
                self._passed = self._let_go = True
            log.info("realtime barge-in: %r: the robot goes on", heard)
            self._go_on(None, f"heard {heard!r}")
        elif decision == "stop":
            self._stop(f"heard {heard!r} over the robot")
            if awaiting:
                self._answer()

    def _no_final(self, round_: int) -> None:
        with self._lock:
            if round_ != self._round or not self._awaiting:
                return
        log.info("realtime barge-in: no transcript within %g s: no words", self.final_wait_s)
        self._final("")

    def _answer(self) -> None:
        """Ask for the model's answer (not with ``local_voice``: that server answers alone)."""
        if not self.local_voice:
            self._respond()

    def _stop(self, why: str) -> None:
        log.info("realtime barge-in: %s: stopping", why)
        self.stops.append(why)
        self._interrupt(why)
