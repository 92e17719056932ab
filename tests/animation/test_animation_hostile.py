"""Hostile animation files: FIFOs, directories, device links, huge files, too many frames.

Each is refused with one line naming the file and the reason (the bound, when there is one),
the rest of the folder still loads, and nothing blocks: a FIFO named ``*.xml`` used to hang
``anima serve`` before its first tick, deaf to SIGTERM.
"""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from anima.animation import AnimationLibrary, parse_animation, parse_animation_file
from anima.animation.move import AnimationMove
from anima.animation.xml_format import MAX_FILE_BYTES, MAX_FRAMES, MAX_VALUES
from anima.behaviour.controller import Behaviour
from anima.errors import AnimationFileError
from anima.events import EventHub
from anima.motion import Keyframes
from anima.testing import make_engine

pytestmark = pytest.mark.integration

CHANNELS = 28


def write_anim(folder: Path, filename: str, name: str, inner: str) -> Path:
    path = folder / filename
    path.write_text(
        f"<animation><animation_name>{name}</animation_name>{inner}</animation>",
        encoding="utf-8",
    )
    return path


def load_in_thread(lib: AnimationLibrary, timeout: float = 10.0) -> threading.Thread:
    """Load on a daemon thread: a regression (a blocking open) fails the test, not the run."""
    worker = threading.Thread(target=lib.load, daemon=True)
    worker.start()
    worker.join(timeout)
    return worker


# --------------------------------------------------------------------------- not regular files


def test_a_fifo_named_xml_is_skipped_without_blocking(tmp_path: Path) -> None:
    write_anim(tmp_path, "good.xml", "wave", "<channel1>1 2</channel1>")
    fifo = tmp_path / "pipe.xml"
    os.mkfifo(fifo)
    lib = AnimationLibrary([tmp_path], CHANNELS)
    worker = load_in_thread(lib)
    try:
        assert not worker.is_alive(), "loading blocked on the FIFO"
    finally:
        if worker.is_alive():  # release the blocked open() so the thread can end
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
    report = lib.last_report
    assert lib.names() == ["wave"]
    assert report.files == 2
    assert [str(e) for e in report.errors] == [f"{fifo}: a FIFO, not a regular file: not read"]


def test_a_fifo_given_to_parse_animation_file_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.xml"
    os.mkfifo(fifo)
    with pytest.raises(AnimationFileError, match="a FIFO, not a regular file") as info:
        parse_animation_file(fifo, CHANNELS)
    assert info.value.path == str(fifo)


def test_a_directory_named_xml_is_skipped(tmp_path: Path) -> None:
    write_anim(tmp_path, "good.xml", "wave", "<channel1>1 2</channel1>")
    (tmp_path / "folder.xml").mkdir()
    lib = AnimationLibrary([tmp_path], CHANNELS)
    report = lib.load()
    assert lib.names() == ["wave"]
    assert [str(e) for e in report.errors] == [
        f"{tmp_path / 'folder.xml'}: a directory, not a regular file: not read"
    ]


def test_a_link_to_dev_zero_is_skipped(tmp_path: Path) -> None:
    write_anim(tmp_path, "good.xml", "wave", "<channel1>1 2</channel1>")
    link = tmp_path / "zero.xml"
    link.symlink_to("/dev/zero")
    lib = AnimationLibrary([tmp_path], CHANNELS)
    worker = load_in_thread(lib)
    assert not worker.is_alive(), "loading read /dev/zero without end"
    assert lib.names() == ["wave"]
    assert [str(e) for e in lib.last_report.errors] == [
        f"{link}: a character device, not a regular file: not read"
    ]


def test_a_link_to_a_regular_file_is_read(tmp_path: Path) -> None:
    target = write_anim(tmp_path, "real.xml.txt", "wave", "<channel1>1 2</channel1>")
    (tmp_path / "link.xml").symlink_to(target)
    lib = AnimationLibrary([tmp_path], CHANNELS)
    assert not lib.load().errors
    assert lib.names() == ["wave"]


# --------------------------------------------------------------------------- bounds


def test_a_file_over_the_size_limit_is_refused_before_reading(tmp_path: Path) -> None:
    huge = tmp_path / "huge.xml"
    with huge.open("wb") as f:  # sparse: the size is all that is looked at
        f.truncate(MAX_FILE_BYTES + 1)
    with pytest.raises(AnimationFileError) as info:
        parse_animation_file(huge, CHANNELS)
    assert str(info.value) == f"{huge}: 8.0 MiB is over the limit of 8.0 MiB"
    huge.write_bytes(b" ")
    with huge.open("ab") as f:
        f.truncate(20 * 1024 * 1024)
    with pytest.raises(AnimationFileError, match=r"20\.0 MiB is over the limit of 8\.0 MiB"):
        parse_animation_file(huge, CHANNELS)


def test_a_string_over_the_size_limit_is_refused() -> None:
    with pytest.raises(AnimationFileError, match="over the limit of"):
        parse_animation(" " * (MAX_FILE_BYTES + 1), CHANNELS)


def test_a_channel_with_too_many_frames_is_refused(tmp_path: Path) -> None:
    path = write_anim(
        tmp_path, "long.xml", "long", f"<channel3>{'1 ' * (MAX_FRAMES + 1)}</channel3>"
    )
    with pytest.raises(AnimationFileError) as info:
        parse_animation_file(path, CHANNELS)
    assert str(info.value) == (
        f"{path}: <channel3>: more than {MAX_FRAMES} frames (the limit of one channel)"
    )
    exactly = write_anim(tmp_path, "ok.xml", "ok", f"<channel3>{'1 ' * MAX_FRAMES}</channel3>")
    assert parse_animation_file(exactly, CHANNELS).frame_count == MAX_FRAMES


def test_an_animation_with_too_many_values_is_refused() -> None:
    # one long channel padded to the length of the longest makes frames × channels values
    per = MAX_VALUES // MAX_FRAMES + 1
    inner = f"<channel1>{'1 ' * MAX_FRAMES}</channel1>" + "".join(
        f"<channel{c}>5</channel{c}>" for c in range(2, per + 1)
    )
    with pytest.raises(AnimationFileError) as info:
        parse_animation(f"<animation><animation_name>w</animation_name>{inner}</animation>", 28)
    assert info.value.element == "animation"
    assert info.value.reason == (
        f"{MAX_FRAMES} frames × {per} channels is over the limit of {MAX_VALUES} values"
    )


def test_a_huge_word_is_quoted_short() -> None:
    word = "x" * 1_000_000
    with pytest.raises(AnimationFileError) as info:
        parse_animation(
            f"<animation><animation_name>w</animation_name><channel1>1 {word}</channel1>"
            "</animation>",
            CHANNELS,
        )
    assert len(str(info.value)) < 200
    assert "frame 2" in str(info.value)


def test_a_huge_tag_or_name_is_quoted_short() -> None:
    tag = "channel" + "9" * 100_000
    with pytest.raises(AnimationFileError) as info:
        parse_animation(f"<animation><{tag}>1</{tag}></animation>", CHANNELS)
    assert len(str(info.value)) < 200
    assert "beyond the body's 28 channels" in str(info.value)
    name = "n" * 100_000
    with pytest.raises(AnimationFileError, match="longer than 200 characters") as info:
        parse_animation(f"<animation><animation_name>{name}</animation_name></animation>", 28)
    assert len(str(info.value)) < 200


def test_a_number_cut_by_the_parsing_pieces_is_read_whole() -> None:
    # values straddle the 16 KiB pieces the parser is fed in
    values = [(7 * i) % 256 for i in range(20_000)]
    text = " ".join(map(str, values))
    anim = parse_animation(
        f"<animation><animation_name>w</animation_name><channel1>{text}</channel1></animation>",
        CHANNELS,
    )
    np.testing.assert_array_equal(anim.frames[:, 0], values)


def test_an_entity_bomb_is_refused() -> None:
    lol = "".join(
        f'<!ENTITY l{i} "{"".join(f"&l{i - 1};" for _ in range(10))}">' for i in range(1, 10)
    )
    bomb = (
        f'<?xml version="1.0"?><!DOCTYPE animation [<!ENTITY l0 "1 ">{lol}]>'
        "<animation><animation_name>w</animation_name><channel1>&l9;</channel1></animation>"
    )
    with pytest.raises(AnimationFileError) as info:
        parse_animation(bomb, CHANNELS)
    assert len(str(info.value)) < 300


# --------------------------------------------------------------------------- playing


def test_playing_a_long_animation_copies_none_of_its_frames(tmp_path: Path) -> None:
    """Keyframes copied, checked and differentiated the whole animation on each play (tens of
    MB for a long one); the library's animations are read-only and shared by every play."""
    inner = "".join(f"<channel{c}>{'100 120 ' * 25_000}</channel{c}>" for c in (13, 14, 15))
    write_anim(tmp_path, "long.xml", "long_wave", inner)
    engine, _, clock = make_engine(events=EventHub())
    lib = AnimationLibrary([tmp_path], len(engine.body))
    assert not lib.load().errors
    anim = lib.get("long_wave")
    assert not anim.frames.flags.writeable
    behaviour = Behaviour(engine, lib, EventHub(), clock)
    tracemalloc.start()
    try:
        behaviour.play_animation("long_wave")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert anim.frames.nbytes == 50_000 * 3 * 8
    assert peak < anim.frames.nbytes / 20, f"playing allocated {peak} bytes"


@pytest.mark.parametrize("cols", [[0, 1, 2], [0, 2], [1]])
def test_an_animation_move_plays_like_keyframes(tmp_path: Path, cols: list[int]) -> None:
    inner = "<channel2>10 40 20 90</channel2><channel5>30 31</channel5><channel9>128</channel9>"
    anim = parse_animation(f"<animation><animation_name>w</animation_name>{inner}</animation>", 28)
    engine, _, _ = make_engine()
    body = engine.body
    move = AnimationMove(anim, body, cols)
    reference = Keyframes(
        body,
        [anim.channels[j] - 1 for j in cols],
        anim.frames[:, cols],
        frame_period=anim.frame_period,
    )
    np.testing.assert_array_equal(move.channels, reference.channels)
    assert move.duration == reference.duration
    for t in np.linspace(-0.01, reference.duration + 0.1, 37):
        np.testing.assert_allclose(move.evaluate(float(t)), reference.evaluate(float(t)))


# --------------------------------------------------------------------------- anima serve


def test_serve_with_a_fifo_in_an_animation_folder_starts_and_stops_on_sigterm(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "anims"
    folder.mkdir()
    write_anim(folder, "wave.xml", "my_wave", "<channel13>40 90 40</channel13>")
    os.mkfifo(folder / "pipe.xml")
    env = dict(os.environ, PYTHONUNBUFFERED="1", ANIMA_ANIMATION__FOLDERS=f"[{folder}]")
    env.update(ANIMA_MQTT__ENABLED="false", ANIMA_WEB__ENABLED="false")
    env["ANIMA_SPEECH__ENABLED"] = "false"
    proc = subprocess.Popen(
        [sys.executable, "-m", "anima", "serve"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=tmp_path,
    )
    assert proc.stdout is not None
    seen = b""
    try:
        deadline = time.monotonic() + 60
        while b"anima ready" not in seen and time.monotonic() < deadline:
            # select, not readline: a serve hung on the FIFO prints nothing, and the test ends
            if select.select([proc.stdout], [], [], 0.5)[0]:
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                seen += chunk
        assert b"anima ready" in seen, seen.decode(errors="replace")
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = (seen + out).decode()
    assert proc.returncode == 0, text
    assert f"{folder / 'pipe.xml'}: a FIFO, not a regular file: not read" in text
    assert re.search(r"animations: \d+ loaded from \d+ files, 1 skipped", text), text
