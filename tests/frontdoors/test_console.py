"""The operator console over real pipes, against a running runtime on the simulated robot."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

import pytest

from anima.commands import Command
from anima.config import AnimaConfig, SpeechConfig
from anima.drivers.sim import SimDriver
from anima.events import Event, MoveStarted, SpeechStarted
from anima.frontdoors.console import Console
from anima.runtime import Runtime
from anima.speech.sinks import NullSink
from anima.testing import EventRecorder, FakeClock, eventually
from anima.testing.tts import ScriptedEngine

# the runtimes run on autojump fake time with a scripted voice: only `anima console` as a
# process loads a real one (its own tier below)
pytestmark = pytest.mark.fast

NECK_PITCH = 8  # channel9, 0-based
BIG = "1" + "2" * 399  # a 400-digit integer: float() of it as an int overflows
WAIT = 5.0  # seconds any single wait may take before the test fails


class Session:
    """A console reading one pipe and writing another, run on its own thread."""

    def __init__(
        self,
        rt: Runtime,
        *,
        reload: Callable[[], str] | None = None,
        execute: Callable[[Command], object] | None = None,
    ) -> None:
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        self._stdin: TextIO = os.fdopen(in_r, "r", encoding="utf-8")
        self._writer: TextIO = os.fdopen(in_w, "w", encoding="utf-8")
        self._stdout: TextIO = os.fdopen(out_w, "w", encoding="utf-8")
        self._reader: TextIO = os.fdopen(out_r, "r", encoding="utf-8")
        self.console = Console(
            rt.behaviour, self._stdin, self._stdout, reload=reload, execute=execute or rt.execute
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._pump = threading.Thread(target=self._read, name="console-output", daemon=True)
        self._pump.start()
        self.thread = threading.Thread(target=self.console.run, name="console", daemon=True)
        self.thread.start()
        self.transcript: list[str] = []
        assert self.line() == "anima console: type help for the commands"

    def _read(self) -> None:
        for line in self._reader:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def send(self, text: str) -> None:
        self._writer.write(text + "\n")
        self._writer.flush()

    def line(self, timeout: float = WAIT) -> str:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"no output within {timeout} s; so far: {self.transcript}"
            ) from None
        assert line is not None, f"the console closed its output; so far: {self.transcript}"
        self.transcript.append(line)
        return line

    def ask(self, text: str) -> str:
        """Send one command and return the one line it answers."""
        self.send(text)
        return self.line()

    def end_input(self) -> None:
        if not self._writer.closed:
            self._writer.close()

    def ended(self, timeout: float = WAIT) -> bool:
        self.thread.join(timeout)
        return not self.thread.is_alive()

    def close(self) -> None:
        self.end_input()
        self.thread.join(WAIT)
        self._stdout.close()  # the pump sees end of file
        self._pump.join(WAIT)
        self._stdin.close()
        self._reader.close()
        assert not any("Traceback" in line for line in self.transcript)


class Started:
    """Waits for MoveStarted of given names from the runtime's event thread."""

    def __init__(self, rt: Runtime) -> None:
        self.names: list[str] = []
        self._cond = threading.Condition()
        rt.events.subscribe(self._on, MoveStarted.kind)

    def _on(self, event: Event) -> None:
        if isinstance(event, MoveStarted):
            with self._cond:
                self.names.append(event.name)
                self._cond.notify_all()

    def wait_for(self, name: str, timeout: float = WAIT) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: name in self.names, timeout)


class Said:
    """The runtime's start_speak events: (text, locale) in order."""

    def __init__(self, rt: Runtime) -> None:
        self.recorder = EventRecorder().attach(rt.events, SpeechStarted.kind)
        self._rt = rt

    def texts(self) -> list[tuple[str, str]]:
        self._rt.events.drain()
        return [(e.text, e.locale) for e in self.recorder.of(SpeechStarted)]


@pytest.fixture
def speaking_rt() -> Iterator[Runtime]:
    """A started runtime with speech: a scripted engine for the console's three languages."""
    yield from started(ScriptedEngine(locales=("en", "de", "fr")))


@pytest.fixture
def rt() -> Iterator[Runtime]:
    """A started runtime on the simulated robot (its 100 Hz loop on its thread, on autojump
    fake time), with a scripted voice."""
    yield from started(ScriptedEngine())


def started(engine: ScriptedEngine, config: AnimaConfig | None = None) -> Iterator[Runtime]:
    clock = FakeClock(autojump=True)
    runtime = Runtime(
        config, driver=SimDriver(), clock=clock, tts=[engine], audio_sink=NullSink(clock)
    )
    runtime.start()
    try:
        assert runtime.wait_first_tick(WAIT)
        yield runtime
    finally:
        runtime.stop(ease=False)
        clock.close()


@pytest.fixture
def session(rt: Runtime) -> Iterator[Session]:
    s = Session(rt, reload=rt.reload_animations)
    try:
        yield s
    finally:
        s.close()


# --------------------------------------------------------------------------- commands


def test_help_lists_every_command(session: Session) -> None:
    session.send("help")
    lines = [session.line()]
    while "quit" not in lines[-1]:
        lines.append(session.line())
    text = "\n".join(lines)
    for usage in (
        "s TEXT",
        "ger TEXT",
        "f TEXT",
        "g NAME",
        "p NAME",
        "look X Y Z",
        "servo CH V",
        "list",
        "reload",
        "shut",
        "wake",
        "estop",
        "reset",
        "help",
        "q ",
    ):
        assert usage in text, usage
    assert session.ask("list").startswith("gestures: ")  # help printed nothing more


def test_g_plays_an_animation(rt: Runtime, session: Session) -> None:
    started = Started(rt)
    assert session.ask("g nod") == "ok: playing nod"
    assert started.wait_for("nod")
    # the body already holds the default posture, so no reset comes first
    assert started.names[0] == "nod"


def test_g_asks_for_the_name_when_it_is_not_given(rt: Runtime, session: Session) -> None:
    started = Started(rt)
    session.send("g")
    session.send("shake")
    assert session.line() == "animation name> ok: playing shake"
    assert started.wait_for("shake")


def test_an_unknown_animation_is_one_line_and_the_console_goes_on(session: Session) -> None:
    assert session.ask("g nodd") == "error: unknown animation 'nodd' (did you mean nod?)"
    assert session.ask("p nodd") == "error: unknown animation 'nodd' (did you mean nod?)"
    assert session.ask("list").startswith("gestures: ")


def test_p_takes_a_posture_and_refuses_a_gesture(rt: Runtime, session: Session) -> None:
    started = Started(rt)
    assert session.ask("p Posture_LookAtZoom") == "ok: playing Posture_LookAtZoom"
    assert started.wait_for("Posture_LookAtZoom")
    assert session.ask("p nod") == "error: 'nod' is a gesture, not a posture: use g"
    assert session.ask("p Posture_LookAtZom").startswith(
        "error: unknown animation 'Posture_LookAtZom' (did you mean Posture_LookAtZoom"
    )
    session.send("p")
    session.send("LOOKUPPostureDefault")
    assert session.line() == "posture> ok: playing LOOKUPPostureDefault"


def test_servo_moves_one_channel_and_holds_it(rt: Runtime, session: Session) -> None:
    assert session.ask("servo 9 140") == "ok: channel 9 → 140"
    assert rt.engine.wait_until_idle(WAIT)
    # breathing rides on the neck pitch (±0.015 rad ≈ ±2.2 units): allow for it
    assert rt.engine.last_frame[NECK_PITCH] == pytest.approx(140.0, abs=3.0)
    assert session.ask("servo 9 128") == "ok: channel 9 → 128"
    assert rt.engine.wait_until_idle(WAIT)
    assert rt.engine.last_frame[NECK_PITCH] == pytest.approx(128.0, abs=3.0)


@pytest.mark.parametrize(
    ("command", "answer"),
    [
        ("servo 99 1", "error: channel 99 out of range 1..28"),
        ("servo 0 100", "error: channel 0 out of range 1..28"),
        ("servo 9 300", "error: channel 9 (neck_pitch): 300 outside [70, 190]"),
        ("servo 9 nan", "error: servo: 'value' must be finite, got 'nan'"),
        ("servo 9 1e400", "error: servo: 'value' must be finite, got '1e400'"),
        ("servo 9 true", "error: servo: 'value' must be a number, got 'true'"),
        (f"servo {BIG} 1", "error: channel 1222222222…(400 digits) out of range 1..28"),
        ("servo x", "error: servo needs a channel and a value: servo CH VALUE"),
        ("servo", "error: servo needs a channel and a value: servo CH VALUE"),
        ("servo x 1", "error: servo: 'x 1' is not 'CHANNEL VALUE'"),
        ("look 1 2", "error: look needs three numbers: X Y Z (metres; x forward, y left, z up)"),
        ("look a b c", "error: look: 'x' must be a number, got 'a'"),
        (f"look 1 {BIG} 0", "error: look: 'y' must be finite, got '" + BIG[:40] + "…'"),
        ("look 1 0 -1e400", "error: look: 'z' must be finite, got '-1e400'"),
        ("look 1 inf 0", "error: look: 'y' must be finite, got 'inf'"),
        ("look 0 0 0", "error: look_at: the point (0, 0, 0) is the eyes themselves"),
        ("look nan 0 0", "error: look: 'x' must be finite, got 'nan'"),
        ("dance", "error: unknown command 'dance' (type help)"),
        ('g "nod', "error: No closing quotation"),
    ],
)
def test_bad_input_gets_a_one_line_error(session: Session, command: str, answer: str) -> None:
    assert session.ask(command) == answer
    assert session.ask("list").startswith("gestures: ")  # still answering


def test_look_at_a_point(rt: Runtime, session: Session) -> None:
    assert session.ask("look 1 0.2 0.1") == "ok: looking at (1, 0.2, 0.1)"
    assert session.ask("look 1 0.2 0.1") == "ok: looking at (1, 0.2, 0.1)"  # the dead zone


@pytest.mark.parametrize(("command", "text"), [("s", "hello"), ("ger", "hallo"), ("f", "bonjour")])
def test_speech_without_a_speech_service_is_an_error(command: str, text: str) -> None:
    """The runtime refuses it, and the console says the runtime's reason."""
    for mute in started(ScriptedEngine(), AnimaConfig(speech=SpeechConfig(enabled=False))):
        s = Session(mute)
        try:
            answer = s.ask(f"{command} {text}")
            assert answer == (
                "error: speech is not available: speech is disabled (speech.enabled: false)"
            )
            assert s.ask("g nod") == "ok: playing nod"  # the console goes on
        finally:
            s.close()


def test_speech_goes_through_the_runtime_with_its_locale(speaking_rt: Runtime) -> None:
    said = Said(speaking_rt)
    s = Session(speaking_rt)
    try:
        assert s.ask("s hello there") == "ok: speaking (en-US)"
        assert s.ask("ger hallo") == "ok: speaking (de-DE)"
        s.send("f")
        s.send("bonjour")
        assert s.line() == "text to speak> ok: speaking (fr-FR)"
        s.send("s")
        s.send("")
        assert s.line() == "text to speak> error: nothing to say"
    finally:
        s.close()
    assert eventually(lambda: len(said.texts()) == 3)
    assert said.texts() == [("hello there", "en-US"), ("hallo", "de-DE"), ("bonjour", "fr-FR")]


@pytest.mark.parametrize(
    ("command", "answer"),
    [
        ("s a\x07b", "error: text contains the control character U+0007 at character 1"),
        ("ger a\x00b", "error: text contains a NUL character (U+0000) at character 1"),
        ("f " + "x" * 2001, "error: text of 2001 characters exceeds the 2000 limit"),
        ("g " + "n" * 5000, "error: name of 5000 characters exceeds the 200 limit"),
        ("p nod\x1b", "error: name contains control characters"),
    ],
)
def test_text_and_names_follow_the_other_doors_rules(
    speaking_rt: Runtime, command: str, answer: str
) -> None:
    # the console once spoke whatever it was given: the rules are payloads.py's, as MQTT's
    said = Said(speaking_rt)
    s = Session(speaking_rt)
    try:
        assert s.ask(command) == answer
        assert s.ask("s still here") == "ok: speaking (en-US)"
    finally:
        s.close()
    assert eventually(lambda: len(said.texts()) == 1)
    assert said.texts() == [("still here", "en-US")]


def test_shut_ignores_look_at_until_wake(rt: Runtime, session: Session) -> None:
    started = Started(rt)
    assert session.ask("shut") == "ok: shutting down (look-at ignored until wake)"
    assert rt.behaviour.shutting_down
    assert started.wait_for("SHUTDOWN_NADINE")
    assert session.ask("look 1 0.2 0.1") == "ok: look-at ignored: shutting down"
    assert session.ask("wake") == "ok: awake"
    assert not rt.behaviour.shutting_down
    assert session.ask("look 1 -0.2 0.1") == "ok: looking at (1, -0.2, 0.1)"


def test_estop_holds_the_robot_refuses_moves_and_reset_releases_it(rt: Runtime) -> None:
    s = Session(rt, execute=rt.execute)
    try:
        answer = s.ask("estop")
        assert answer == "ok: emergency stop: motion held, speech stopped; reset to resume"
        assert rt.engine.estopped
        assert s.ask("g nod") == (
            "error: 'nod' refused: emergency stop is active (reset to resume)"
        )
        assert s.ask("reset") == "ok: emergency stop released"
        assert not rt.engine.estopped
        assert s.ask("g nod") == "ok: playing nod"
    finally:
        s.close()


def test_reload_answers_with_a_summary(session: Session) -> None:
    answer = session.ask("reload")
    assert re.fullmatch(r"animations: \d+ loaded from \d+ files", answer), answer


def test_reload_without_a_reloader_is_an_error(rt: Runtime) -> None:
    s = Session(rt)
    try:
        assert s.ask("reload") == "error: reload not available"
    finally:
        s.close()


def test_an_unexpected_failure_is_one_line_and_the_console_goes_on(rt: Runtime) -> None:
    def broken_reload() -> str:
        raise RuntimeError("disk on fire")

    s = Session(rt, reload=broken_reload)
    try:
        assert s.ask("reload") == "error: reload failed: disk on fire"
        assert s.ask("wake") == "ok: awake"
    finally:
        s.close()


def test_list_shows_gestures_and_postures(session: Session) -> None:
    gestures = session.ask("list")
    postures = session.line()
    assert gestures.startswith("gestures: ")
    assert "nod" in gestures.split(": ", 1)[1].split(", ")
    assert postures.startswith("postures: ")
    assert "Posture_LookAtZoom" in postures.split(": ", 1)[1].split(", ")


def test_blank_lines_are_ignored(session: Session) -> None:
    session.send("")
    session.send("   ")
    assert session.ask("wake") == "ok: awake"


def test_q_ends_the_console(session: Session) -> None:
    assert session.ask("q") == "bye"
    assert session.ended()


def test_end_of_input_ends_the_console(session: Session) -> None:
    assert session.ask("wake") == "ok: awake"
    session.end_input()
    assert session.ended()


def test_end_of_input_at_a_prompt_ends_the_console(session: Session) -> None:
    session.send("g")
    session.end_input()
    assert session.line() == "animation name> error: no name given"
    assert session.ended()


# --------------------------------------------------------------------------- `anima console`


@pytest.mark.integration  # a process
def test_anima_console_as_a_process(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONUNBUFFERED="1", XDG_RUNTIME_DIR=str(tmp_path))
    env["ANIMA_MQTT__ENABLED"] = "false"  # the console is the subject, not MQTT
    env["ANIMA_SPEECH__ENABLED"] = "false"  # nor the voice (Piper's would load for seconds)
    env["ANIMA_WEB__ENABLED"] = "false"  # no dashboard: tests would share port 8080
    env.pop("ANIMA_CONFIG", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "anima", "console"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    try:
        out, _ = proc.communicate("g nod\ng nodd\nlist\nq\n", timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, out
    assert "anima ready" in out
    assert "ok: playing nod" in out
    assert "error: unknown animation 'nodd' (did you mean nod?)" in out
    assert "gestures: " in out
    assert "postures: " in out
    assert "bye" in out
    assert "Traceback" not in out
    assert not list(tmp_path.glob("anima-*.pid"))  # removed on the way out


def test_every_command_goes_through_the_runtimes_execute(rt: Runtime) -> None:
    """Issue 15, one command path: the console calls nothing of the behaviour or the speech
    service; each command is a typed command handed to the runtime's ``execute``."""
    seen: list[str] = []

    def execute(command: Command) -> object:
        seen.append(type(command).__name__)
        return rt.execute(command)

    s = Session(rt, execute=execute)
    try:
        assert s.ask("g nod") == "ok: playing nod"
        assert s.ask("look 1 0.3 0.1").startswith("ok: look")  # (ignored while nod plays)
        assert s.ask("servo 9 120").startswith("ok: channel 9")
        assert s.ask("shut") == "ok: shutting down (look-at ignored until wake)"
        assert s.ask("wake") == "ok: awake"
        assert s.ask("estop").startswith("ok: emergency stop")
        assert s.ask("reset") == "ok: emergency stop released"
    finally:
        s.close()
    assert seen == [
        "PlayAnimation", "LookAt", "SetChannelDefault", "Shutdown", "Wake", "EmergencyStop",
        "ResetEmergencyStop",
    ]  # fmt: skip
