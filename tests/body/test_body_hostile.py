"""Hostile checker.ini files: FIFOs, devices, huge files, wrong encodings, absurd numbers.

Each is refused at once with one short line naming the file, the line and the key; none blocks,
eats memory or prints a traceback (``channels = 100000000`` used to build a list of 100 M
missing channels: MemoryError after 12 s; a FIFO hung ``anima serve`` before its first tick).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from anima.body import load_body, parse_body
from anima.body.checker_ini import MAX_FILE_BYTES
from anima.cli import app
from anima.errors import BodyDefinitionError

pytestmark = pytest.mark.integration

VALID = """\
[board]
channels = 3

[channels]
1 = lids   150  40  220  role=eyelids closed=40
2 = yaw    128  40  216  role=neck.yaw zero=128 rad=0.0085
3 = brows  128  60  200
"""
CHANNELS_LINE = 2  # the line of "channels = 3"

runner = CliRunner()


def refusal(text: str) -> BodyDefinitionError:
    with pytest.raises(BodyDefinitionError) as info:
        parse_body(text, source="head.ini")
    assert len(str(info.value)) < 200, str(info.value)[:300]
    return info.value


def load_refusal(path: Path) -> BodyDefinitionError:
    """load_body on a thread: a regression (a blocking read) fails the test, not the run."""
    errors: list[BaseException] = []

    def load() -> None:
        try:
            load_body(path)
        except BaseException as exc:  # the test inspects whatever came out
            errors.append(exc)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive() and path.is_fifo():
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))  # unblock the reader
    assert not worker.is_alive(), "load_body blocked"
    assert len(errors) == 1, errors
    assert isinstance(errors[0], BodyDefinitionError), errors
    assert len(str(errors[0])) < 200
    return errors[0]


# --------------------------------------------------------------------------- not regular files


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "checker.ini"
    os.mkfifo(fifo)
    err = load_refusal(fifo)
    assert str(err) == f"{fifo}: a FIFO, not a regular file: not read"


def test_a_link_to_dev_zero_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "checker.ini"
    link.symlink_to("/dev/zero")
    err = load_refusal(link)
    assert str(err) == f"{link}: a character device, not a regular file: not read"


def test_a_directory_is_refused(tmp_path: Path) -> None:
    err = load_refusal(tmp_path)
    assert str(err) == f"{tmp_path}: a directory, not a regular file: not read"


def test_a_huge_file_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "checker.ini"
    path.write_text(VALID)
    with path.open("ab") as f:
        f.truncate(MAX_FILE_BYTES + 1)
    err = load_refusal(path)
    assert str(err) == f"{path}: 1.0 MiB is over the limit of 1.0 MiB"


# --------------------------------------------------------------------------- encodings


def test_a_byte_that_is_not_utf8_is_refused_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "checker.ini"
    path.write_bytes(VALID.replace("brows", "br\xf6ws").encode("latin-1"))
    err = load_refusal(path)
    assert err.line == 7
    assert str(err).startswith(f"{path}:7: not UTF-8 text (byte 0xf6 at offset ")
    assert str(err).endswith("save it as UTF-8")


def test_a_utf16_file_is_refused_naming_the_encoding(tmp_path: Path) -> None:
    path = tmp_path / "checker.ini"
    path.write_text(VALID, encoding="utf-16")
    assert str(load_refusal(path)) == f"{path}: the file is UTF-16 text: save it as UTF-8"


def test_a_utf8_byte_order_mark_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "checker.ini"
    path.write_text(VALID, encoding="utf-8-sig")
    assert len(load_body(path)) == 3


# --------------------------------------------------------------------------- absurd numbers

WHY = "the serial protocol addresses 1–255 channels"


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("100000000", "100000000"),
        ("1e6", "'1e6'"),
        ("1e20", "'1e20'"),
        ("256", "256"),
        ("0", "0"),
        ("-3", "-3"),
    ],
)
def test_a_channel_count_outside_1_to_255_is_refused_at_once(value: str, shown: str) -> None:
    err = refusal(VALID.replace("channels = 3", f"channels = {value}"))
    assert err.line == CHANNELS_LINE
    assert err.reason == f"channels must be 1–255 ({WHY}), got {shown}"


@pytest.mark.parametrize("value", ["2.5", "lots", "9" * 5000, "1e400"])
def test_a_channel_count_that_is_not_an_integer_is_refused_short(value: str) -> None:
    err = refusal(VALID.replace("channels = 3", f"channels = {value}"))
    assert err.line == CHANNELS_LINE
    assert err.reason.startswith("channels: ")
    assert err.reason.endswith("is not an integer")


def test_a_channel_number_past_255_is_refused() -> None:
    err = refusal(VALID.replace("3 = brows", "1000000 = brows"))
    assert err.line == 7
    assert err.reason == f"channel number must be 1–255 ({WHY}), got 1000000"


def test_missing_channels_are_counted_not_listed() -> None:
    err = refusal(VALID.replace("channels = 3", "channels = 255"))
    assert err.line == CHANNELS_LINE
    assert err.reason == "252 of the 255 channels are not defined: 4, 5, 6, 7, 8, 9, 10, 11, …"


def test_a_baud_rate_past_any_adapter_is_refused() -> None:
    err = refusal(VALID.replace("channels = 3", "channels = 3\nbaud = 99999999999"))
    assert err.line == 3
    assert err.reason == "baud must be 1–12000000 (bits per second), got 99999999999"


@pytest.mark.parametrize(
    ("old", "new", "reason"),
    [
        ("1 = lids   150", "1 = " + "l" * 100_000 + " 150", "name longer than 64 characters"),
        ("3 = brows  128", "3 = brows  " + "1" * 100_000, "is not finite"),
        ("3 = brows  128", "3 = brows  " + "z" * 100_000, "is not a number"),
        ("3 = brows  128  60  200", "3 = brows  128  60  200 " + "x" * 100_000, "unknown option"),
        ("[channels]", "[" + "c" * 100_000 + "]", "unknown section"),
        ("[channels]", "[channels]\n" + "x" * 100_000, "expected 'key = value'"),
    ],
)
def test_a_huge_value_is_quoted_short(old: str, new: str, reason: str) -> None:
    assert reason in refusal(VALID.replace(old, new)).reason


# --------------------------------------------------------------------------- through the CLI


def test_body_validate_on_a_fifo_says_one_line_and_exits_2(tmp_path: Path) -> None:
    fifo = tmp_path / "checker.ini"
    os.mkfifo(fifo)
    result = runner.invoke(app, ["body", "validate", str(fifo)])
    assert result.exit_code == 2
    assert result.stderr == f"error: {fifo}: a FIFO, not a regular file: not read\n"


def test_serve_with_a_fifo_as_checker_ini_exits_at_once_with_one_line(tmp_path: Path) -> None:
    fifo = tmp_path / "checker.ini"
    os.mkfifo(fifo)
    env = dict(os.environ, ANIMA_BODY__CHECKER_INI=str(fifo), ANIMA_MQTT__ENABLED="false")
    env["ANIMA_WEB__ENABLED"] = "false"
    proc = subprocess.run(  # a timeout, not a hang, should the read block again
        [sys.executable, "-m", "anima", "serve", "--seconds", "1"],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr == f"error: {fifo}: a FIFO, not a regular file: not read\n"
