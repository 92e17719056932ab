"""Hostile configuration: bad encodings, alias bombs, devices, absurd numbers, odd variables.

Every case is one :class:`ConfigError` line naming where the value came from (``file:line`` or
the ``ANIMA_*`` variable), the key, and at most a short excerpt of the value; through the CLI
it is one line on stderr and exit code 2, never a traceback. Before: a 311-byte alias bomb took
15 s, 1.77 GB and printed 351 MB; ``stats_window: 10000000000`` and non-UTF-8 files were
tracebacks; a FIFO hung the reader.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path

import pytest
from typer.testing import CliRunner

from anima.cli import app
from anima.config import OpenAIPlannerConfig, SerialDriverConfig, load_config
from anima.config.loading import MAX_FILE_BYTES
from anima.errors import ConfigError

pytestmark = pytest.mark.integration

runner = CliRunner()
# "billion laughs": nine levels of nine aliases, 9**9 ≈ 387 M strings once expanded
BOMB = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{k}: &{k} [{', '.join([f'*{p}'] * 9)}]\n" for p, k in zip("abcdefgh", "bcdefghi", strict=True)
)


def write(tmp_path: Path, text: str | bytes, name: str = "anima.yaml") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def refusal(path: Path | None = None, env: dict[str, str] | None = None) -> str:
    """The one-line message load_config refuses with (on a thread: a hang fails, not blocks)."""
    out: list[BaseException] = []

    def load() -> None:
        try:
            load_config(path, env=env or {})
        except BaseException as exc:  # the test inspects whatever came out
            out.append(exc)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(20)
    if worker.is_alive() and path is not None and path.is_fifo():
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))  # unblock the reader
    assert not worker.is_alive(), "load_config blocked"
    assert len(out) == 1, "no error"
    assert isinstance(out[0], ConfigError), repr(out[0])[:300]
    message = str(out[0])
    assert "\n" not in message
    # one readable line: the file's path (as long as the test's temporary folder) and 250 more
    assert len(message.replace(str(path), "")) < 250, message[:300]
    return message


# --------------------------------------------------------------------------- the file itself


def test_a_byte_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, b"motion:\n  # caf\xe9\n  rate_hz: 50\n")
    assert refusal(path) == (f"{path}:2: not UTF-8 text (byte 0xe9 at offset 15): save it as UTF-8")


def test_a_utf16_file_is_refused_naming_the_encoding(tmp_path: Path) -> None:
    path = write(tmp_path, "motion:\n  rate_hz: 50\n".encode("utf-16"))
    assert refusal(path) == f"{path}: the file is UTF-16 text: save it as UTF-8"


def test_a_utf8_byte_order_mark_is_fine(tmp_path: Path) -> None:
    path = write(tmp_path, "motion:\n  rate_hz: 50\n".encode("utf-8-sig"))
    assert load_config(path, env={}).motion.rate_hz == 50.0


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "anima.yaml"
    os.mkfifo(fifo)
    assert refusal(fifo) == f"{fifo}: a FIFO, not a regular file: not read"


def test_a_link_to_dev_zero_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "anima.yaml"
    link.symlink_to("/dev/zero")
    assert refusal(link) == f"{link}: a character device, not a regular file: not read"


def test_a_huge_file_is_refused_before_reading(tmp_path: Path) -> None:
    path = write(tmp_path, "motion:\n  rate_hz: 50\n")
    with path.open("ab") as f:
        f.truncate(MAX_FILE_BYTES + 1)
    assert refusal(path) == f"{path}: 1.0 MiB is over the limit of 1.0 MiB"


def test_an_alias_bomb_is_refused_at_once_in_little_memory(tmp_path: Path) -> None:
    path = write(tmp_path, BOMB)
    assert path.stat().st_size < 450
    tracemalloc.start()
    try:
        message = refusal(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert message == (
        f"{path}: the document expands to 490329064 values (aliases included), over the limit "
        "of 100000"
    )
    assert peak < 20_000_000


def test_a_few_aliases_are_fine(tmp_path: Path) -> None:
    text = "animation:\n  folders: &dirs [a, b]\nbehaviour:\n  head_animations: *dirs\n"
    cfg = load_config(write(tmp_path, text), env={})
    assert cfg.behaviour.head_animations == ("a", "b")


@pytest.mark.parametrize(
    ("text", "where", "reason"),
    [
        ("motion:\n  stats_window: " + "9" * 5000, "", "invalid YAML value: Exceeds the limit"),
        ("motion: " + "[" * 20_000 + "\n", "", "invalid YAML: nested too deeply"),
        ("motion: " + "{a: " * 20_000 + "1\n", "", "invalid YAML: nested too deeply"),
        ("motion:\n  rate_hz: *" + "x" * 100_000, ":2", "invalid YAML: found undefined alias"),
        ("motion:\n  rate_hz: [unclosed\n", ":3", "invalid YAML: expected ',' or ']', but got"),
    ],
)
def test_yaml_that_pyyaml_cannot_take_is_one_short_line(
    tmp_path: Path, text: str, where: str, reason: str
) -> None:
    path = write(tmp_path, text)
    assert refusal(path).startswith(f"{path}{where}: {reason}")


def test_keys_that_are_not_strings_are_unknown_keys(tmp_path: Path) -> None:
    path = write(tmp_path, "1: 2\nmotion:\n  rate_hz: 50\n")
    assert refusal(path).startswith(f"{path}:1: unknown key 1 (known: agent, ")


# --------------------------------------------------------------------------- absurd values


SERIAL_KEYS = {"driver.baud", "driver.write_timeout_s", "driver.reconnect_s"}
# a setting of one type of a tagged section: that type, written after the key's line
TYPED = {"driver": "serial", "agent.planner": "openai"}


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        ("motion.stats_window", "10000000000", "must be in [16, 1000000], got 10000000000"),
        ("motion.stats_window", "-1", "must be in [16, 1000000], got -1"),
        ("motion.rate_hz", ".nan", "must be a finite number, got nan"),
        ("motion.rate_hz", "-.inf", "must be a finite number, got -inf"),
        ("motion.rate_hz", "1" + "0" * 400, "must be a number, got <an integer of 1329 bits>"),
        ("motion.blend_s", "1e300", "must be ≤ 60 s, got 1e+300"),
        ("motion.stop_s", "-1", "must be a finite number > 0, got -1.0"),
        ("motion.offset_max_rate_rad_s", "1e9", "must be ≤ 100, got 1e+09"),
        ("motion.breathing.period_s", "1e9", "must be ≤ 600 s"),
        ("motion.blink.interval_s", "[1, 1e9]", "must be 0 < min ≤ max ≤ 3600 s"),
        ("motion.blink.close_s", "1e9", "must be ≤ 2 s"),
        ("motion.blink.hold_s", "-1", "must be in [0, 2] s, got -1"),
        ("driver.history", "1000000000000", "must be in [1, 1000000]"),
        ("driver.baud", "1000000000000", "must be in [1, 12000000]"),
        ("driver.write_timeout_s", "5", "must be ≤ 0.1 s, got 5"),
        ("driver.reconnect_s", "[1, 1e9]", "must be 0 < first ≤ longest ≤ 3600 s"),
        ("animation.posture_s", "1e9", "must be ≤ 60 s"),
        ("behaviour.look_at_hold_s", "1e9", "must be ≤ 3600 s"),
        ("behaviour.gaze_smoothing_s", "1e9", "must be ≤ 10 s"),
        ("behaviour.gaze_head_share", ".nan", "must be a finite number, got nan"),
        ("agent.planner.max_history", "1000000000", "must be in [2, 10000]"),
        ("agent.planner.max_tokens", "0", "must be in [16, 32768], got 0"),
        ("agent.feedback_rounds", "1000000", "must be in [0, 100]"),
        ("agent.planner.timeout_s", "1e9", "must be ≤ 3600 s"),
        ("agent.step_timeout_s", "1e9", "must be ≤ 3600 s"),
        ("humanoid.state_hz", "1e9", "must be ≤ 100 Hz"),
        ("web.updates_hz", "1e9", "must be ≤ 1000 Hz"),
        ("web.port", "1" + "0" * 100, "out of range"),
        ("serve.shutdown_s", "1e6", "must be ≤ 60 s"),
        ("serve.status_interval_s", "1e9", "must be ≤ 86400 s"),
        ("speech.espeak_wpm", "1" + "0" * 50, "must be in [80, 450]"),
        ("motion.breathing.enabled", "'" + "y" * 100_000 + "'", "must be true or false, got 'yyy"),
        ("mqtt.keepalive_s", "10000000000", "must be in [5, 65535], got 10000000000"),
        ("mqtt.state_hz", "1e9", "must be ≤ 100 Hz"),
        ("mqtt.stale_after_s", "1e300", "must be ≤ 86400 s"),
        ("mqtt.prefix", "'" + "r" * 5000 + "'", "must be at most 200 printable characters"),
        ("listen.vad_start_frames", "1000000000000", "must be in [1, 100], got 1000000000000"),
        ("listen.max_utterance_s", "1e300", "must be in (0, 120] seconds, got 1e+300"),
        ("listen.no_speech_timeout_s", "1e9", "must be in (0, 600] seconds"),
        ("listen.min_chars", "1" + "0" * 40, "must be in [0, 1000], got an integer of 133 bits"),
    ],
)
def test_an_absurd_value_names_file_line_and_key(
    tmp_path: Path, key: str, value: str, reason: str
) -> None:
    *sections, leaf = key.split(".")
    text = "".join(f"{'  ' * i}{s}:\n" for i, s in enumerate(sections))
    text += f"{'  ' * len(sections)}{leaf}: {value}\n"
    section = ".".join(sections)
    if key in SERIAL_KEYS or section == "agent.planner":
        text += f"{'  ' * len(sections)}type: {TYPED[section]}\n"
    path = write(tmp_path, text)
    message = refusal(path)
    assert message.startswith(f"{path}:{len(sections) + 1}: {key}")
    assert reason in message


def test_the_same_absurd_value_from_the_environment_names_the_variable() -> None:
    assert refusal(env={"ANIMA_MOTION__STATS_WINDOW": "10000000000"}) == (
        "environment ANIMA_MOTION__STATS_WINDOW: motion.stats_window must be in [16, 1000000], "
        "got 10000000000"
    )


# --------------------------------------------------------------------------- the environment


def test_an_error_a_variable_caused_names_it_not_defaults() -> None:
    # the check names web.token; the value at fault came from ANIMA_WEB__HOST
    assert refusal(env={"ANIMA_WEB__HOST": "0.0.0.0"}) == (
        "environment ANIMA_WEB__HOST: web.token is required to serve on '0.0.0.0' (not loopback)"
    )
    assert refusal(env={"ANIMA_MOTION": "{rate_hz: x}"}) == (
        "environment ANIMA_MOTION: motion.rate_hz must be a number, got 'x'"
    )
    assert refusal(env={"ANIMA_MOTION__BLINK__INTERVAL_S": "[1, x]"}) == (
        "environment ANIMA_MOTION__BLINK__INTERVAL_S: motion.blink.interval_s[1] must be a "
        "number, got 'x'"
    )


def test_a_variable_below_a_value_names_itself() -> None:
    assert refusal(env={"ANIMA_MOTION__RATE_HZ__X": "1"}) == (
        "environment ANIMA_MOTION__RATE_HZ__X: motion.rate_hz must be a number, got {'x': '1'}"
    )


def test_a_file_value_checked_with_another_names_the_file_line(tmp_path: Path) -> None:
    path = write(tmp_path, "log_level: INFO\nweb:\n  host: 0.0.0.0\n")
    assert refusal(path).startswith(f"{path}:2: web.token is required")


def test_exponent_numbers_are_numbers_for_float_fields(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "motion:\n  rate_hz: 1e2\n  blend_s: 1e-50\n"
        "agent:\n  planner:\n    type: openai\n    model: 1e3\n",
    )
    cfg = load_config(path, env={})
    assert cfg.motion.rate_hz == 100.0
    assert cfg.motion.blend_s == 1e-50
    assert isinstance(cfg.agent.planner, OpenAIPlannerConfig)
    assert cfg.agent.planner.model == "1e3"  # a string field keeps the text
    env = {"ANIMA_MOTION__RATE_HZ": "1e3", "ANIMA_MOTION__STOP_S": "1E-50"}
    cfg = load_config(env=env)
    assert cfg.motion.rate_hz == 1000.0
    assert cfg.motion.stop_s == 1e-50


def test_a_string_field_takes_the_variable_as_it_is() -> None:
    env = {
        "ANIMA_WEB__HOST": "::",  # YAML would read a mapping {":": None}
        "ANIMA_WEB__TOKEN": "s3cr3t: [x]",
        "ANIMA_AGENT__INSTRUCTIONS": "- be brief\n- be kind",
        "ANIMA_AGENT__PLANNER__TYPE": "openai",
        "ANIMA_AGENT__PLANNER__MODEL": "007",
    }
    cfg = load_config(env=env)
    assert cfg.web.host == "::"
    assert cfg.web.token == "s3cr3t: [x]"
    assert cfg.agent.instructions == "- be brief\n- be kind"
    assert isinstance(cfg.agent.planner, OpenAIPlannerConfig)
    assert cfg.agent.planner.model == "007"


def test_null_clears_an_optional_field_from_the_environment(tmp_path: Path) -> None:
    path = write(tmp_path, "driver:\n  type: serial\n  port: /dev/ttyUSB0\n")
    cleared = load_config(path, env={"ANIMA_DRIVER__PORT": "null"}).driver
    assert isinstance(cleared, SerialDriverConfig)
    assert cleared.port is None
    given = load_config(path, env={"ANIMA_DRIVER__PORT": "/dev/ttyS1"}).driver
    assert isinstance(given, SerialDriverConfig)
    assert given.port == "/dev/ttyS1"


def test_a_setting_of_another_driver_is_refused_by_name(tmp_path: Path) -> None:
    path = write(tmp_path, "driver:\n  history: 10\n  port: /dev/ttyUSB0\n")
    assert refusal(path) == (
        f"{path}:3: driver.port is a setting of driver.type serial or reachy_mini, not of sim"
    )
    path = write(tmp_path, "driver:\n  type: serial\n  record: frames.jsonl\n")
    assert refusal(path) == (
        f"{path}:3: driver.record is a setting of driver.type sim, not of serial"
    )
    assert refusal(env={"ANIMA_DRIVER__TYPE": "robot9000"}) == (
        "environment ANIMA_DRIVER__TYPE: driver.type must be one of sim, serial, reachy_mini, "
        "got 'robot9000'"
    )
    serial = load_config(env={"ANIMA_DRIVER__TYPE": "serial", "ANIMA_DRIVER__BAUD": "57600"})
    assert serial.driver == SerialDriverConfig(baud=57600)


def test_a_bomb_in_a_variable_is_refused_short() -> None:
    message = refusal(env={"ANIMA_BEHAVIOUR__HEAD_ANIMATIONS": BOMB})
    assert message.startswith(
        "environment ANIMA_BEHAVIOUR__HEAD_ANIMATIONS: behaviour.head_animations must be a list"
    )


# --------------------------------------------------------------------------- through the CLI


def test_anima_config_says_one_line_on_stderr_and_exits_2(tmp_path: Path) -> None:
    for path in (
        write(tmp_path, BOMB, "bomb.yaml"),
        write(tmp_path, "motion:\n  stats_window: 10000000000\n", "window.yaml"),
        write(tmp_path, b"\xff\xfe m\x00", "utf16.yaml"),
    ):
        result = runner.invoke(app, ["config", "--config", str(path)])
        assert result.exit_code == 2, result.output
        assert result.stdout == ""
        assert result.stderr.startswith(f"error: {path}")
        assert result.stderr.count("\n") == 1
        assert len(result.stderr) < 250
    result = runner.invoke(app, ["config"], env={"ANIMA_WEB__HOST": "0.0.0.0"})
    assert result.exit_code == 2
    assert result.stderr.startswith("error: environment ANIMA_WEB__HOST: web.token")


def test_anima_serve_says_one_line_on_stderr_and_exits_2(tmp_path: Path) -> None:
    path = write(tmp_path, BOMB)
    env = dict(os.environ, ANIMA_MQTT__ENABLED="false", ANIMA_WEB__ENABLED="false")
    proc = subprocess.run(
        [sys.executable, "-m", "anima", "serve", "--config", str(path), "--seconds", "1"],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr == (
        f"error: {path}: the document expands to 490329064 values (aliases included), over "
        "the limit of 100000\n"
    )
