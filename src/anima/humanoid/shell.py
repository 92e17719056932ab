"""The interactive Adam client behind ``anima adam``: one command per line, readable answers.

In the spirit of the vendor's sample client, but every command goes through
:class:`~anima.humanoid.client.AdamClient`, so it is checked against the robot's enable lists
first, and any bad input or refusal is explained in one line (never a traceback). Reads lines
from any iterable and writes to any text stream, so it runs on stdin/stdout or in a test.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import TextIO

from anima.errors import AnimaError, CommandNotAllowedError
from anima.humanoid.arguments import control_mode_id
from anima.humanoid.client import AdamClient
from anima.humanoid.spec import CONTROL_MODES, MODES, NO_FEEDBACK, RobotState

log = logging.getLogger(__name__)

HELP = """\
commands:
  state                     FSM mode, motion, posture, velocity and what is allowed now
  list                      every mode, motion, action and carry-box code the robot knows
  mode MODE                 Start, Zero, Stand, Walk, Run, SingleStand, Stop
  wait MODE [SECONDS]       wait until the robot has reached MODE (default 15 s)
  motion NAME               a stand motion, e.g. motion Greeting
  posture P R Y H           stand pitch ±0.1, roll ±0.06, yaw ±0.25 rad, height -0.2…0 m
  speed X Y YAW [--continuous]   Walk/Run velocity (m/s, m/s, rad/s); lasts 5 s unless continuous
  dynamic on|off            dynamic balance in Stand
  com on|off                AutoUnigaitCOM (centre-of-mass X balancing) in Walk/Run
  carry 0|1|2               1 squat to carry, 2 stand to carry, 0 put the box down
  clear                     clear drive errors (in Stop)
  control traditional|rl    switch the control paradigm and wait for the robot to confirm
  help                      this text
  quit                      leave (the robot keeps its state)"""


def _on_off(word: str) -> bool:
    value = {"on": True, "true": True, "1": True, "off": False, "false": False, "0": False}
    key = word.lower()
    if key not in value:
        raise ValueError(f"expected on or off, got {word!r}")
    return value[key]


def _numbers(args: Sequence[str], names: Sequence[str]) -> list[float]:
    if len(args) != len(names):
        raise ValueError(f"expected {len(names)} numbers ({' '.join(names)}), got {len(args)}")
    out = []
    for name, arg in zip(names, args, strict=True):
        try:
            out.append(float(arg))
        except ValueError:
            raise ValueError(f"{name} must be a number, got {arg!r}") from None
    return out


def _pick(name: str, known: Iterable[str]) -> str:
    """The known spelling of ``name`` (any case), else ``name`` as typed."""
    return next((k for k in known if k.lower() == name.lower()), name)


def _fmt_list(items: Sequence[str]) -> str:
    return ", ".join(items) if items else "-"


def format_state(s: RobotState) -> str:
    control = CONTROL_MODES.get(s.current_control_mode, "no feedback yet")
    balance = "on" if s.balance_control_state else "off"
    if s.balance_control_enable:
        balance += " (can be switched now)"
    rows = [
        ("fsm", f"{s.fsm_name}  ({s.message})" if s.message else s.fsm_name),
        ("motion", s.current_motion or "-"),
        ("actions", _fmt_list(s.current_action_list)),
        (
            "posture",
            f"pitch {s.stand_pitch:+.3f}  roll {s.stand_roll:+.3f}  yaw {s.stand_yaw:+.3f}  "
            f"height {s.stand_height:+.3f}",
        ),
        ("velocity", f"x {s.x_vel:+.2f} m/s  y {s.y_vel:+.2f} m/s  yaw {s.yaw_vel:+.2f} rad/s"),
        ("balance", balance),
        ("control", control),
        ("modes now", _fmt_list(s.mode_enable_list)),
        ("motions now", _fmt_list(s.motion_enable_list)),
        ("posture now", "yes" if s.action_enable_list else "no"),
        ("carry now", _fmt_list(s.carrybox_enable_list)),
    ]
    return "\n".join(f"  {k:<12}{v}" for k, v in rows)


class AdamShell:
    """Runs ``anima adam`` commands against a connected client, writing answers to ``out``."""

    def __init__(self, client: AdamClient, out: TextIO) -> None:
        self._client = client
        self._out = out
        self._commands: dict[str, Callable[[list[str], str], str | None]] = {
            "state": lambda a, r: format_state(self._client.state()),
            "list": self._list,
            "mode": self._mode,
            "wait": self._wait,
            "motion": self._motion,
            "posture": self._posture,
            "speed": self._speed,
            "dynamic": lambda a, r: self._client.dynamic(_on_off(self._one(a, "on|off"))),
            "com": lambda a, r: self._client.unigait_com(_on_off(self._one(a, "on|off"))),
            "carry": lambda a, r: self._client.carry_box(self._one(a, "0, 1 or 2")),
            "clear": lambda a, r: self._client.clear_errors(),
            "control": self._control,
            "help": lambda a, r: HELP,
        }

    def _say(self, text: str) -> None:
        self._out.write(text + "\n")
        self._out.flush()

    def run(self, lines: Iterable[str], prompt: str | None = None) -> None:
        """Execute lines until ``quit`` or the end of input."""
        if prompt:
            self._out.write(prompt)
            self._out.flush()
        for line in lines:
            if not self.execute(line):
                return
            if prompt:
                self._out.write(prompt)
                self._out.flush()

    def execute(self, line: str) -> bool:
        """Run one line; False when it asks to quit."""
        words = line.split()
        if not words or words[0].startswith("#"):
            return True
        name, args = words[0].lower(), words[1:]
        rest = line.strip()[len(words[0]) :].strip()
        if name in ("quit", "exit", "q"):
            return False
        command = self._commands.get(name)
        if command is None:
            self._say(f"unknown command {words[0]!r}: type help for the list")
            return True
        try:
            answer = command(args, rest)
        except CommandNotAllowedError as exc:
            self._say(f"not allowed: {exc}")
        except (AnimaError, ValueError) as exc:
            self._say(f"error: {exc}")
        except Exception as exc:  # an interactive tool explains, it never dumps a traceback
            log.debug("adam shell: %s failed", line, exc_info=True)
            self._say(f"error: {type(exc).__name__}: {exc}")
        else:
            if answer:
                self._say(answer)
        return True

    @staticmethod
    def _one(args: list[str], what: str) -> str:
        if len(args) != 1:
            raise ValueError(f"expected one argument ({what}), got {len(args)}")
        return args[0]

    def _list(self, args: list[str], rest: str) -> str:
        lists = self._client.lists()
        rows = [
            ("modes", _fmt_list(lists.mode_list)),
            ("motions", _fmt_list(lists.motion_list)),
            ("actions", _fmt_list(lists.action_list)),
            ("carry box", _fmt_list(lists.carrybox_list)),
            ("balance", lists.balance_control or "-"),
        ]
        return "\n".join(f"  {k:<10}{v}" for k, v in rows)

    def _mode(self, args: list[str], rest: str) -> str:
        if not rest:
            raise ValueError(f"which mode? one of {', '.join(MODES)}")
        return self._client.set_mode(_pick(rest, MODES))

    def _wait(self, args: list[str], rest: str) -> str:
        if not 1 <= len(args) <= 2:
            raise ValueError("expected: wait MODE [SECONDS]")
        seconds = _numbers(args[1:], ["SECONDS"])[0] if len(args) == 2 else 15.0
        s = self._client.wait_for_mode(_pick(args[0], MODES), seconds)
        return f"in {s.fsm_name}"

    def _motion(self, args: list[str], rest: str) -> str:
        if not rest:
            raise ValueError("which motion? type list for the motions")
        return self._client.stand_motion(_pick(rest, self._client.lists().motion_list))

    def _posture(self, args: list[str], rest: str) -> str:
        pitch, roll, yaw, height = _numbers(args, ["P", "R", "Y", "H"])
        return self._client.posture(pitch, roll, yaw, height)

    def _speed(self, args: list[str], rest: str) -> str:
        flags = [a for a in args if a.startswith("--") and not a[2:3].isdigit()]
        unknown = [f for f in flags if f not in ("--continuous", "--continous")]
        if unknown:
            raise ValueError(f"unknown option {unknown[0]!r}: only --continuous")
        values = [a for a in args if a not in flags]
        x, y, yaw = _numbers(values, ["X", "Y", "YAW"])
        return self._client.speed(x, y, yaw, continuous=bool(flags))

    def _control(self, args: list[str], rest: str) -> str:
        target = control_mode_id(self._one(args, "traditional or rl"))
        self._say(f"switching to {CONTROL_MODES[target]} control, waiting for the robot…")
        last = self._client.set_control_mode(target)
        if last == target:
            return f"control: {CONTROL_MODES[target]}"
        shown = "no feedback" if last == NO_FEEDBACK else CONTROL_MODES.get(last, str(last))
        return f"not confirmed within {self._client.control_timeout_s:g} s; last known: {shown}"
