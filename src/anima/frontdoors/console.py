"""The operator console: Nadine's debugging commands on a text stream.

Commands (arguments may follow the command or be given at its prompt)::

    s TEXT      speak English         ger TEXT   speak German        f TEXT   speak French
    g NAME      play an animation     p NAME     take a posture      look X Y Z  look at a point
    servo CH V  make V the default of channel CH (1-based): it moves there and rests there
    ask TEXT    ask the voice agent   listen     wake the voice agent
    list        list the animations   reload     reload the animation folders
    shut        play SHUTDOWN_NADINE and stop looking around        wake   leave shutdown
    estop       emergency stop: hold still, stop speaking           reset  release it
    help        this list             q          quit

Bad input gets a one-line explanation, never a traceback. Text, names and numbers follow the
rules of the other front doors (:mod:`anima.wire.payloads`): the same limits, the same
refusals (``look 1e400 0 0``, ``s`` with a control character). Every command goes through the
runtime's ``execute``, as from every front door; the behaviour is only read (the library, the
body's channels).
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Callable
from typing import TextIO

from anima.behaviour.controller import Behaviour
from anima.commands import (
    Ask,
    Command,
    EmergencyStop,
    Listen,
    LookAt,
    LookAtResult,
    PlayAnimation,
    ResetEmergencyStop,
    SetChannelDefault,
    Shutdown,
    Speak,
    Wake,
)
from anima.errors import AnimaError
from anima.wire import payloads

log = logging.getLogger(__name__)

LOCALES = {"s": "en-US", "ger": "de-DE", "f": "fr-FR"}
HELP = __doc__.split("::", 1)[1].split("Bad input", 1)[0].rstrip() if __doc__ else ""


class Console:
    """``execute`` is the runtime's (every command); ``behaviour`` is read for the library and
    the body; ``reload`` reloads the animation folders."""

    def __init__(
        self,
        behaviour: Behaviour,
        stdin: TextIO,
        stdout: TextIO,
        *,
        execute: Callable[[Command], object],
        reload: Callable[[], str] | None = None,
    ) -> None:
        self._behaviour = behaviour
        self._in = stdin
        self._out = stdout
        self._reload = reload
        self._execute = execute

    def run(self) -> None:
        """Read commands until ``q`` or end of input."""
        self._say("anima console: type help for the commands")
        while True:
            line = self._in.readline()
            if not line:
                return
            if not self.handle(line):
                return

    def _say(self, text: str) -> None:
        self._out.write(text + "\n")
        self._out.flush()

    def _ask(self, prompt: str) -> str | None:
        self._out.write(prompt)
        self._out.flush()
        line = self._in.readline()
        return None if not line else line.strip()

    def handle(self, line: str) -> bool:
        """Run one command line; False when the console should quit."""
        try:
            words = shlex.split(line)
        except ValueError as exc:
            self._say(f"error: {exc}")
            return True
        if not words:
            return True
        cmd, args = words[0], words[1:]
        try:
            return self._dispatch(cmd, args)
        except AnimaError as exc:
            self._say(f"error: {exc}")
        except Exception as exc:  # the console must never die on one command
            log.exception("console command %r failed", line)
            self._say(f"error: {cmd} failed: {exc}")
        return True

    def _dispatch(self, cmd: str, args: list[str]) -> bool:
        b = self._behaviour
        if cmd == "q":
            self._say("bye")
            return False
        if cmd == "help":
            self._say(HELP)
        elif cmd in LOCALES:
            text = " ".join(args) or self._ask("text to speak> ")
            if not text:
                self._say("error: nothing to say")
            else:
                self._execute(Speak(text=text, locale=LOCALES[cmd]))  # Speak checks it
                self._say(f"ok: speaking ({LOCALES[cmd]})")
        elif cmd in ("g", "p"):
            name = args[0] if args else self._ask("animation name> " if cmd == "g" else "posture> ")
            if name:
                name = payloads.checked_name(name)  # bounded before it is quoted in an error
            if not name:
                self._say("error: no name given")
            elif cmd == "p" and not b.library.get(name).is_posture:
                self._say(f"error: {name!r} is a gesture, not a posture: use g")
            else:
                self._execute(PlayAnimation(name=name))
                self._say(f"ok: playing {name}")
        elif cmd == "look":
            self._look(args)
        elif cmd == "servo":
            self._servo(args)
        elif cmd in ("ask", "listen"):
            self._agent(cmd, args)
        elif cmd in ("estop", "reset"):
            self._stop(cmd)
        elif cmd == "list":
            lib = b.library
            self._say("gestures: " + ", ".join(lib.gestures()))
            self._say("postures: " + ", ".join(lib.postures()))
        elif cmd == "reload":
            self._say(self._reload() if self._reload is not None else "error: reload not available")
        elif cmd == "shut":
            self._execute(Shutdown())
            self._say("ok: shutting down (look-at ignored until wake)")
        elif cmd == "wake":
            self._execute(Wake())
            self._say("ok: awake")
        else:
            self._say(f"error: unknown command {cmd!r} (type help)")
        return True

    def _stop(self, cmd: str) -> None:
        """An emergency stop and its reset."""
        if cmd == "estop":
            self._execute(EmergencyStop())
            self._say("ok: emergency stop: motion held, speech stopped; reset to resume")
        else:
            self._execute(ResetEmergencyStop())
            self._say("ok: emergency stop released")

    def _agent(self, cmd: str, args: list[str]) -> None:
        if cmd == "listen":
            self._execute(Listen())
            self._say("ok: listening")
        elif not args:
            self._say("error: ask what? ask TEXT")
        else:
            self._execute(Ask(text=" ".join(args)))  # bounded as Ask is made
            self._say("ok: asked")

    def _look(self, args: list[str]) -> None:
        if len(args) != 3:
            self._say("error: look needs three numbers: X Y Z (metres; x forward, y left, z up)")
            return
        try:
            x, y, z = (payloads.number_text(a, k) for a, k in zip(args, "xyz", strict=True))
        except payloads.PayloadError as exc:
            self._say(f"error: look: {exc}")
            return
        result = self._execute(LookAt(x=x, y=y, z=z))
        assert isinstance(result, LookAtResult)  # what execute gives for a LookAt
        if result is LookAtResult.MOVED or result is LookAtResult.DEAD_ZONE:
            self._say(f"ok: looking at ({x:g}, {y:g}, {z:g})")
        else:
            self._say(f"ok: look-at {result.value}")

    def _servo(self, args: list[str]) -> None:
        if len(args) != 2:
            self._say("error: servo needs a channel and a value: servo CH VALUE")
            return
        try:
            channel = int(args[0])
        except ValueError:
            self._say(
                f"error: servo: {payloads.excerpt(' '.join(args), 60)!r} is not 'CHANNEL VALUE'"
            )
            return
        channels = len(self._behaviour.body)
        if not 1 <= channel <= channels:  # checked here too: a 400-digit channel, quoted short
            self._say(f"error: channel {payloads.shown(channel)} out of range 1..{channels}")
            return
        try:
            value = payloads.number_text(args[1], "value")
        except payloads.PayloadError as exc:
            self._say(f"error: servo: {exc}")
            return
        self._execute(SetChannelDefault(channel=channel, value=value))
        self._say(f"ok: channel {channel} → {value:g}")
