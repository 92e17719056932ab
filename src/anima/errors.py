"""The one exception tree of anima.

Every error anima raises on purpose derives from :class:`AnimaError`, so a caller can catch
everything anima-specific in one place, or one branch precisely::

    AnimaError
    ├── ConfigError                 bad configuration value or file (names the key or file:line)
    │   ├── BodyDefinitionError     a checker.ini / body definition that does not parse
    │   └── ActionDefinitionError   an agent action whose signature or phrases cannot be used
    ├── AnimationFileError          an XML animation file that does not validate (file, element)
    ├── InvalidCommandError         a command with bad arguments (also a ValueError)
    │   ├── NonFiniteValueError     NaN or ±inf where a number was expected
    │   ├── UnknownChannelError     a channel name or index the body does not have
    │   ├── UnknownPostureError     a posture name the body does not have
    │   ├── UnknownAnimationError   an animation name the library does not have
    │   └── PlanError               an agent plan that does not validate (names the step)
    ├── CommandRefusedError         every refusal: a valid command the current state refuses
    │   ├── EStopActiveError        refused because the emergency stop is latched (moves, speech)
    │   ├── CommandNotAllowedError  the humanoid does not accept it now (also a HumanoidError)
    │   └── CommandRejectedByRobotError  a running robot refused what the SDK sent (its reason)
    ├── NotConnectedError           every "not connected": a link that is not up (``link``)
    │   ├── DriverNotConnectedError send() before connect() or after disconnect() (a DriverError)
    │   ├── HumanoidNotConnectedError  Adam not reached, or not connected (a HumanoidError)
    │   └── RobotNotConnectedError  an SDK Robot before open(), after close(), or unreachable
    ├── DriverError                 the robot driver failed (connect, send)
    ├── EngineStateError            start/stop misuse of the motion engine or runtime
    ├── SpeechError                 a TTS engine or audio sink failed
    ├── PlannerError                an agent planner's server failed or answered nonsense
    ├── HumanoidError               the Adam humanoid's gRPC service failed (address, RPC)
    ├── MissingDependencyError      an optional extra is not installed (says which one)
    ├── RobotTimeoutError           the SDK waited longer than asked (also a TimeoutError)
    └── NotSupportedError           this backend cannot do that (names what is missing)

Errors carry context in their message (which key, which channel, which line of which file),
and as attributes where a caller acts on it: ``ConfigError.key``, ``BodyDefinitionError.path``
and ``.line``, ``CommandRefusedError.command`` and ``.reason``, ``NotConnectedError.link``,
``PlanError.index``, ``MissingDependencyError.extra``. One ``except CommandRefusedError``
catches every refusal, whichever layer refused; one ``except NotConnectedError`` every link
that is down.
"""

from __future__ import annotations


class AnimaError(Exception):
    """Root of every error anima raises on purpose."""


class ConfigError(AnimaError):
    """A configuration value or file is invalid; the message names the key or file and line.
    ``key`` is the setting at fault (``listen.echo``) when the check knows it, so the loader
    points at its line without reading the message."""

    def __init__(self, message: str, *, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class BodyDefinitionError(ConfigError):
    """A body definition (``checker.ini``) does not parse; the message names file and line."""

    def __init__(self, path: str, line: int | None, reason: str) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason


class ActionDefinitionError(ConfigError):
    """An agent action cannot be registered: unsupported parameter type, bad phrase, clash."""


class InvalidCommandError(AnimaError, ValueError):
    """A command's arguments are invalid. Also a ``ValueError`` so generic callers catch it."""


class NonFiniteValueError(InvalidCommandError):
    """A NaN or infinite value was given where a finite number is required."""


class UnknownChannelError(InvalidCommandError):
    """A channel name or index that the body does not define."""


class UnknownPostureError(InvalidCommandError):
    """A posture name that the body does not define."""


class UnknownAnimationError(InvalidCommandError):
    """An animation name the library does not have (the message suggests close names)."""


class PlanError(InvalidCommandError):
    """An agent plan was rejected before anything moved; the message names the step and why."""

    def __init__(
        self, message: str, *, index: int | None = None, step: str = "", said: str = ""
    ) -> None:
        super().__init__(message)
        self.index = index  # 0-based step that failed validation (None: the plan as a whole)
        self.step = step  # the action string as given
        self.said = said  # the reason in a few plain words, for the robot to say ("" if none)


class PlannerError(AnimaError):
    """A planner's server failed, timed out or answered something that is not a reply."""


class CommandRefusedError(AnimaError):
    """A well-formed command the current state refuses (shutting down, gaze latched, nod…):
    the family of every refusal. ``command`` is what was asked, when the refuser knows it;
    ``reason`` is why, in its words (the message when not given apart)."""

    def __init__(
        self, message: str, *, command: str | None = None, reason: str | None = None
    ) -> None:
        super().__init__(message)
        self.command = command
        self.reason = message if reason is None else reason


class NotConnectedError(AnimaError):
    """A link that is not up: the family of every "not connected" (a driver's port, the
    humanoid's gRPC channel, an SDK robot's connection). ``link`` names which kind."""

    link = "link"

    def __init__(self, message: str) -> None:
        super().__init__(message)


class AnimationFileError(AnimaError):
    """An XML animation file is invalid; names the file and the element."""

    def __init__(self, path: str, element: str | None, reason: str) -> None:
        where = f"{path}: <{element}>" if element else path
        super().__init__(f"{where}: {reason}")
        self.path = path
        self.element = element
        self.reason = reason


class EStopActiveError(CommandRefusedError):
    """The emergency stop is latched: moves and speech are refused until it is reset.

    ``what`` is what the caller asked for (``'nod'``, ``speak``), never an internal move that
    request became, so the refusal reads the same from every front door.
    """

    def __init__(self, what: str) -> None:
        super().__init__(
            f"{what} refused: emergency stop is active (reset to resume)",
            command=what,
            reason="emergency stop is active",
        )
        self.what = what


class DriverError(AnimaError):
    """The robot driver failed to connect or to send a frame."""


class DriverNotConnectedError(NotConnectedError, DriverError):
    """The driver was used before ``connect()`` or after ``disconnect()``."""

    link = "driver"


class SpeechError(AnimaError):
    """A TTS engine or an audio sink failed (the utterance still gets its end_speak)."""


class HumanoidError(AnimaError):
    """The Adam humanoid's gRPC service could not be reached or failed; names address and RPC."""


class CommandNotAllowedError(HumanoidError, CommandRefusedError):
    """A command the humanoid does not accept right now: wrong FSM mode, or the target is not in
    the relevant ``*_enable_list``. The message says what was asked and what is allowed."""


class HumanoidNotConnectedError(NotConnectedError, HumanoidError):
    """Adam could not be reached, or a call came before ``connect()``; names the address."""

    link = "humanoid"


class EngineStateError(AnimaError):
    """The engine or runtime was started twice, stopped before start, or similar misuse."""


class MissingDependencyError(AnimaError):
    """An optional capability's package is not installed; the message gives the install hint."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(
            f"the optional package {package!r} is not installed; "
            f"install it with: pip install 'anima[{extra}]'"
        )
        self.package = package
        self.extra = extra


class RobotNotConnectedError(NotConnectedError):
    """The SDK's ``Robot`` was used before ``open()`` (or ``with``), after ``close()``, or the
    robot could not be reached; the message says which."""

    link = "robot"


class RobotTimeoutError(AnimaError, TimeoutError):
    """An SDK wait (speech, animation, state, connection) took longer than its timeout."""


class CommandRejectedByRobotError(CommandRefusedError):
    """A running robot refused a command; ``reason`` is the robot's own explanation."""

    command: str  # what was asked: an MQTT topic, a method name
    reason: str  # the runtime's reason, as it said it

    def __init__(self, command: str, reason: str) -> None:
        super().__init__(
            f"{command} refused by the robot: {reason}", command=command, reason=reason
        )


class NotSupportedError(AnimaError):
    """This way of reaching the robot cannot do that (e.g. humanoid actions when no humanoid is
    linked); the message names what is missing and what to use instead."""
