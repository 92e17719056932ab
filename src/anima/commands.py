"""Typed commands: what every front door (console, MQTT, web, MCP, agent, SDK) turns its input into.

Front doors parse their own wire format, build one of these, and hand it to the runtime. A
command checks its own bounds as it is made (text to say, a look-at's reach), so every door
refuses the same input with the same words (an :class:`~anima.errors.InvalidCommandError`);
:class:`Speak` reads its speech markup once, and nothing downstream parses the text again.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import ClassVar, Protocol, TypeAlias, overload

from anima.errors import InvalidCommandError
from anima.events import SpeechEndReason
from anima.language import markup
from anima.language.markup import Script
from anima.language.text import speech_problem

MAX_NAME = 200  # characters of a name given at a door (an animation, a mode, a motion)
MAX_COORD = 100.0  # metres: farther look-at points are surely a unit mistake


class LookAtResult(enum.Enum):
    """What became of a position look-at (a 30 Hz stream: no error event for each)."""

    MOVED = "moved"
    DEAD_ZONE = "dead_zone"  # too close to the current target to bother the head
    # never given now: a look-at releases a held gaze posture (with a notice) and looks; kept
    # so callers that match on it still import
    LATCHED = "ignored: a gaze target is latched"
    HEAD_ANIMATION = "ignored: a head animation (nod/shake) is playing"
    SHUTDOWN = "ignored: shutting down"


class Priority(enum.Enum):
    """How a command waits behind others (:class:`~anima.frontdoors.dispatch.CommandDispatcher`)."""

    SYSTEM = "system"  # before every ordered command, in arrival order among themselves
    LATEST = "latest"  # a stream: only the newest waiting one is kept
    ORDERED = "ordered"  # in arrival order


class _Ordered:
    """What most commands are: carried out in arrival order."""

    priority: ClassVar[Priority] = Priority.ORDERED


class _System:
    """Stops and the emergency stop: they jump the ordered queue."""

    priority: ClassVar[Priority] = Priority.SYSTEM


@dataclass(frozen=True, kw_only=True)
class PlayAnimation(_Ordered):
    name: str  # an <animation_name> from the library


@dataclass(frozen=True, kw_only=True)
class LookAt:
    """Look at a point; one farther than :data:`MAX_COORD` on an axis is refused."""

    priority: ClassVar[Priority] = Priority.LATEST  # a gaze stream: the newest wins
    x: float  # metres, head frame: forward
    y: float  # metres, head frame: to the robot's left
    z: float  # metres, head frame: up

    def __post_init__(self) -> None:
        for key, value in (("x", self.x), ("y", self.y), ("z", self.z)):
            # a NaN or an infinity is the kinematics' to refuse (it names the point)
            if math.isfinite(value) and abs(value) > MAX_COORD:
                raise InvalidCommandError(f"{key!r} = {value:g} m is farther than {MAX_COORD:g} m")


@dataclass(frozen=True, kw_only=True)
class LookAtTarget(_Ordered):
    name: str  # a posture <animation_name>; the default posture clears the latch


@dataclass(frozen=True, kw_only=True)
class EndLookAt(_Ordered):
    pass


@dataclass(frozen=True, kw_only=True)
class Shutdown(_Ordered):
    pass


@dataclass(frozen=True, kw_only=True)
class Wake(_Ordered):
    pass


@dataclass(frozen=True, kw_only=True)
class SetChannelDefault(_Ordered):
    channel: int  # 1-based, as on the servo board and in animations
    value: float  # channel units


@dataclass(frozen=True, kw_only=True)
class Speak(_Ordered):
    """Say ``text``, which may time gestures to its words (:mod:`anima.language.markup`).

    Checked as it is made: something to say (not only markers), at most
    :data:`MAX_SPEECH_TEXT` characters once stripped, no control character, well-formed
    markers. ``script`` is the text's markup read then, once; the speech service resolves
    its gesture names against the library and says it.
    """

    text: str
    locale: str = "en-US"
    script: Script = field(init=False, repr=False, compare=False)  # the markup, read once

    def __post_init__(self) -> None:
        text = self.text.strip()
        if not text:
            raise InvalidCommandError("nothing to say: empty text")
        problem = speech_problem(text)
        if problem is not None:
            raise InvalidCommandError(problem)
        script = markup.read(text)
        if not script.text:
            raise InvalidCommandError(markup.NO_WORDS)
        object.__setattr__(self, "script", script)


@dataclass(frozen=True, kw_only=True)
class StopSpeaking(_System):
    reason: SpeechEndReason = "stopped"  # what the utterance's end_speak says


@dataclass(frozen=True, kw_only=True)
class Spoken:
    """What :class:`Speak` gives back: the utterance's id, as its ``start_speak`` and
    ``end_speak`` carry it (so a caller pairs them without the speech service)."""

    utterance: str


@dataclass(frozen=True, kw_only=True)
class OpenVoiceStream(_Ordered):
    """Speak audio that arrives as it is made (a realtime model's voice, docs/realtime.md):
    one utterance, with ``start_speak`` when its first sample plays and ``end_speak`` when its
    last has (or it is stopped), lips and sway on the playback clock. Refused, as
    :class:`Speak` is, while the emergency stop is on or speech is not available."""

    locale: str = "en-US"
    source: str = "realtime"  # who speaks through it (logs and the utterance's events)


class VoiceStream(Protocol):
    """An open voice stream (what :class:`OpenVoiceStream` gives back), fed from one thread
    while the speech service plays it. Every method returns at once."""

    @property
    def utterance(self) -> str:
        """The utterance's id, as its ``start_speak`` and ``end_speak`` carry it."""

    def feed(self, pcm16: bytes, sample_rate: int) -> None:
        """The next audio: mono 16-bit little-endian PCM at ``sample_rate`` Hz (resampled to
        the sink's rate). Ignored once the stream is stopped."""

    def visemes(self, marks: list[tuple[int, str]]) -> None:
        """Mouth shapes the server timed: (milliseconds from the stream's first sample,
        viseme name in :mod:`anima.speech.visemes`' set). Without any, the lips follow the
        audio itself."""

    def words(self, text: str) -> None:
        """The next words of what the audio says (a transcript delta); ``^start(name)``
        markers in it time gestures to those words."""

    def finish(self) -> None:
        """No more audio: ``end_speak`` (reason ``done``) once the last sample has played."""

    def stop(self, reason: SpeechEndReason = "interrupted") -> int:
        """Stop playing now (``end_speak`` with ``reason``); the milliseconds of this stream's
        audio the sink had played, exactly (for ``conversation.item.truncate``)."""

    def played_ms(self) -> int:
        """The milliseconds of this stream's audio played so far (the sink's clock)."""

    def pause(self) -> bool:
        """Hold playback at the sample reached, now: silence, the mouth shut, ``played_ms``
        frozen, no ``end_speak``; audio fed meanwhile waits. False when it has ended or is
        paused already (a person began to talk over it: the rules decide, then resume or
        stop)."""

    def resume(self) -> bool:
        """Play on from the sample where :meth:`pause` held it (nothing lost or skipped);
        False when it was not paused."""

    @property
    def done(self) -> bool:
        """Finished and played out, or stopped."""


@dataclass(frozen=True, kw_only=True)
class VoiceStreamOpened:
    """What :class:`OpenVoiceStream` gives back."""

    stream: VoiceStream


@dataclass(frozen=True, kw_only=True)
class Played:
    """What :class:`PlayAnimation` gives back: whether the animation became an idle layer
    (a blink, a looping idle animation: no move, so no ``MoveFinished`` to wait for)."""

    idle_layer: bool


@dataclass(frozen=True, kw_only=True)
class Listen(_Ordered):
    """Wake the agent: interrupt what it does and listen (a keyboard or MQTT wake)."""


@dataclass(frozen=True, kw_only=True)
class Ask(_Ordered):
    text: str  # a request in words, as if heard: planned and acted on by the agent

    def __post_init__(self) -> None:
        problem = speech_problem(self.text, key="request")  # the rule of text to say
        if problem is not None:
            raise InvalidCommandError(problem)


@dataclass(frozen=True, kw_only=True)
class EmergencyStop(_System):
    """Hold the current frame and refuse moves until :class:`ResetEmergencyStop`."""


@dataclass(frozen=True, kw_only=True)
class ResetEmergencyStop(_System):
    """Release the emergency stop; idle life blends back in."""


@dataclass(frozen=True, kw_only=True)
class StopAnimation(_System):
    """Drop queued moves and decelerate the running one to a hold (the engine's ``clear``)."""


@dataclass(frozen=True, kw_only=True)
class CancelAnimation(_Ordered):
    """End one animation only (an SDK handle's ``cancel()``): the oldest queued or running
    move of ``name`` is dropped, or decelerated to a hold if it runs; every other move goes on.
    Ordered, not a system command: it must come after the ``PlayAnimation`` it cancels."""

    name: str  # an <animation_name> from the library (or its alias)


@dataclass(frozen=True, kw_only=True)
class HumanoidMode(_Ordered):
    """Switch the linked humanoid's mode (SetMode), once its ``mode_enable_list`` allows it."""

    verb: ClassVar[str] = "mode"
    mode: str  # a mode name (anima.humanoid.spec.MODES)


@dataclass(frozen=True, kw_only=True)
class HumanoidMotion(_Ordered):
    """Run a stand motion (SetStandMotion), once ``motion_enable_list`` allows it."""

    verb: ClassVar[str] = "motion"
    motion: str  # a motion name (anima.humanoid.spec.MOTIONS)


@dataclass(frozen=True, kw_only=True)
class HumanoidPosture(_Ordered):
    """Set the stand posture (SetStandAction); ranges: anima.humanoid.spec.POSTURE."""

    verb: ClassVar[str] = "posture"
    pitch: float  # rad
    roll: float  # rad
    yaw: float  # rad
    height: float  # m


@dataclass(frozen=True, kw_only=True)
class HumanoidSpeed(_Ordered):
    """Walk at a velocity (SetSpeed); ``continuous`` keeps it until told otherwise."""

    verb: ClassVar[str] = "speed"
    x: float  # m/s, forward
    y: float  # m/s, to the left
    yaw: float  # rad/s
    continuous: bool = True


@dataclass(frozen=True, kw_only=True)
class ReadHumanoidState(_Ordered):
    """Ask the linked humanoid for its state now (GetRobotState): gives its RobotState."""

    verb: ClassVar[str] = "state"


@dataclass(frozen=True, kw_only=True)
class HumanoidAnswer:
    """What a humanoid command gives back: the robot's answer, in its words."""

    answer: str


@dataclass(frozen=True, kw_only=True)
class RobotState:
    """What :class:`ReadHumanoidState` gives back: one consistent snapshot of the humanoid
    (the fields of ``GetRobotStateResponse``; the names are :mod:`anima.humanoid.spec`'s)."""

    message: str  # what the robot is doing or waiting for, in words
    fsm_name: str  # the mode reached (a mode being entered shows only once reached)
    current_motion: str  # the stand motion or carry-box move playing, "" when none
    current_action_list: tuple[str, ...]  # posture axes still moving, AutoUnigaitCOM when on
    mode_enable_list: tuple[str, ...]  # modes SetMode accepts now
    motion_enable_list: tuple[str, ...]  # motions SetStandMotion accepts now
    action_enable_list: tuple[str, ...]  # posture axes SetStandAction accepts now
    carrybox_enable_list: tuple[str, ...]  # carry-box codes SetStandCarryBox accepts now
    balance_control_enable: str  # "DynamicStand" when SetStandDynamic is accepted, else ""
    stand_pitch: float  # rad, the posture actually reached (it follows the target at a rate)
    stand_roll: float  # rad
    stand_yaw: float  # rad
    stand_height: float  # m, 0 is full height
    x_vel: float  # m/s, the velocity actually reached (it ramps towards the command)
    y_vel: float  # m/s
    yaw_vel: float  # rad/s
    balance_control_state: bool  # dynamic balance on
    motion_files_enable: bool  # the motion-capture files are loaded
    current_control_mode: int  # 0 traditional, 1 RL, -1 before the first feedback


HumanoidCommand = HumanoidMode | HumanoidMotion | HumanoidPosture | HumanoidSpeed
"""The humanoid commands that move the robot (what the front doors' ``humanoid/<verb>`` carry)."""

Command = (
    PlayAnimation
    | LookAt
    | LookAtTarget
    | EndLookAt
    | Shutdown
    | Wake
    | SetChannelDefault
    | Speak
    | OpenVoiceStream
    | StopSpeaking
    | Listen
    | Ask
    | EmergencyStop
    | ResetEmergencyStop
    | StopAnimation
    | CancelAnimation
    | HumanoidCommand
    | ReadHumanoidState
)

Result: TypeAlias = (
    "Played | Spoken | VoiceStreamOpened | LookAtResult | HumanoidAnswer | RobotState | None"
)
"""What executing a command gives back, by command (see :class:`Execute`)."""


class Execute(Protocol):
    """The runtime's ``execute`` as its callers see it: each command's own result type."""

    @overload
    def __call__(self, command: PlayAnimation, /) -> Played: ...
    @overload
    def __call__(self, command: Speak, /) -> Spoken: ...
    @overload
    def __call__(self, command: OpenVoiceStream, /) -> VoiceStreamOpened: ...
    @overload
    def __call__(self, command: LookAt, /) -> LookAtResult: ...
    @overload
    def __call__(self, command: HumanoidCommand, /) -> HumanoidAnswer: ...
    @overload
    def __call__(self, command: ReadHumanoidState, /) -> RobotState: ...
    @overload
    def __call__(self, command: Command, /) -> Result: ...
